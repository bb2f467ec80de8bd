// The portable plane means, the choice among the targets and the threads.
#include "ops/kernels/plane_means.h"

#include <stdexcept>

#include "ops/blocked_layout.h"
#include "ops/kernels/threads.h"

namespace minfer::kernels {
namespace {

void plane_means_portable(const float* x, int64_t planes, int64_t n, float* y) {
  for (int64_t p = 0; p < planes; ++p, x += n) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += x[i];
    y[p] = static_cast<float>(sum / static_cast<double>(n));
  }
}

}  // namespace

constinit const PlaneMeans plane_means_scalar = {"plane_means_scalar", Isa::kScalar, &plane_means_portable, nullptr};

const PlaneMeans* plane_means_for(Isa isa) {
  if (!isa_runnable(isa)) return nullptr;
  return per_isa<const PlaneMeans*>(isa, &plane_means_scalar, &plane_means_avx2, &plane_means_avx512);
}

void plane_means(Isa isa, const float* x, int64_t planes, int64_t n, float* y, int threads) {
  const PlaneMeans* found = plane_means_for(isa);
  const PlaneMeans& means = found ? *found : plane_means_scalar;
  const int team = threads_worth_starting(planes * n, planes, threads, Work::kStreaming);
  // Each thread a contiguous run of planes, fixed by the team size alone.
  for_each_on_team(team, team, [&](int64_t t) {
    const int64_t begin = planes * t / team, end = planes * (t + 1) / team;
    means.run(x + begin * n, end - begin, n, y + begin);
  });
}

void blocked_plane_means(Isa isa, const float* x, int64_t blocks, int64_t n, float* y, int threads) {
  const PlaneMeans* means = plane_means_for(isa);
  if (!means || !means->run_blocked) throw std::invalid_argument("blocked_plane_means: no NCHWc means on this target");
  const int64_t lanes = blocked_lanes(isa);
  const int team = threads_worth_starting(blocks * n * lanes, blocks, threads, Work::kStreaming);
  for_each_on_team(team, team, [&](int64_t t) {
    const int64_t begin = blocks * t / team, end = blocks * (t + 1) / team;
    means->run_blocked(x + begin * n * lanes, end - begin, n, y + begin * lanes);
  });
}

}  // namespace minfer::kernels
