#include "profiler/machine_probe.h"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "profiler/isa.h"
#include "profiler/run_profile.h"
#include "profiler/triad.h"

namespace minfer {

namespace {

// The fastest of as many passes as fit in `budget_s` seconds (at least 3): on a busy
// machine some pass runs undisturbed, and that one shows what the hardware can do.
template <class F>
double best_seconds(double budget_s, F&& body) {
  double best = 1e300;
  const Clock::time_point start = Clock::now();
  for (int pass = 0; pass < 3 || elapsed_ms(start, Clock::now()) < budget_s * 1e3; ++pass) {
    const Clock::time_point t0 = Clock::now();
    body();
    best = std::min(best, elapsed_ms(t0, Clock::now()) * 1e-3);
  }
  return best;
}

// f(arch) for the probe's instruction set.
template <class F>
auto with_probe_arch(F&& f) {
  switch (active_isa()) {
    case Isa::kAvx512: return f(xsimd::avx512f{});
    case Isa::kAvx2: return f(xsimd::fma3<xsimd::avx2>{});
    case Isa::kScalar: break;
  }
  return f(xsimd::sse2{});
}

}  // namespace

ProbeIsa probe_isa() {
  return with_probe_arch(ProbeIsaOf{});
}

double probe_peak_gflops(int threads) {
  volatile float sink = 0;  // keeps every thread's result, so no work is dropped
  const auto kernel = [](int64_t iterations) {
    return with_probe_arch([iterations](auto arch) { return FmaPeakKernel{}(arch, iterations); });
  };
  // Passes of ~2 ms per thread: long against thread start-up, short against a
  // scheduler's time slice. Sized on one thread, so a thread waiting for a core cannot
  // make a pass look long enough.
  int64_t iterations = 1 << 10;
  while (best_seconds(0, [&] { sink = sink + kernel(iterations); }) < 0.002 && iterations < (int64_t{1} << 34))
    iterations *= 2;
  const double seconds = best_seconds(0.3, [&] {
#pragma omp parallel num_threads(threads)
    {
      const float r = kernel(iterations);
#pragma omp critical
      sink = sink + r;
    }
  });
  const double lanes = probe_isa().vector_bits / 32.0;
  const double flops = static_cast<double>(iterations) * FmaPeakKernel::kChains * lanes * 2.0 * threads;
  return flops / seconds * 1e-9;
}

std::array<int64_t, 4> triad_working_sets(const CacheSizes& caches, int threads) {
  const int64_t l1 = caches.l1 > 0 ? caches.l1 : 32 << 10;
  const int64_t l2 = caches.l2 > 0 ? caches.l2 : 256 << 10;
  const int64_t l3 = caches.l3 > 0 ? caches.l3 : 8 << 20;
  // Half of a level leaves room for the stack, the code and the level's associativity;
  // three times the L3 means every pass reads memory, not what the last one left (at
  // most 384 MiB: an L3 that large is a virtual machine reporting its host's).
  return {l1 / 2 * threads, l2 / 2 * threads, l3 / 2,
          std::clamp<int64_t>(3 * l3, int64_t{96} << 20, int64_t{384} << 20)};
}

std::array<double, 4> probe_bandwidth_gbs(int threads, const CacheSizes& caches) {
  const std::array<int64_t, 4> sets = triad_working_sets(caches, threads);
  constexpr size_t kAlign = 16;  // floats: one cache line, so no two threads share one
  struct Level {
    size_t n = 0;
    int repeats = 1;
    std::vector<float> a, b, c;
  };
  std::array<Level, 4> levels;
  for (size_t i = 0; i < levels.size(); ++i) {
    Level& l = levels[i];
    l.n = static_cast<size_t>(sets[i]) / 12 / kAlign * kAlign;
    l.a.assign(l.n + kAlign, 0.0f);
    l.b.assign(l.n + kAlign, 1.0f);
    l.c.assign(l.n + kAlign, 2.0f);
    // A pass moves at least 32 MiB, long against the parallel region's start-up.
    l.repeats = static_cast<int>(std::max<int64_t>(1, (int64_t{32} << 20) / sets[i]));
  }
  const auto pass = [&](Level& l) {
#pragma omp parallel num_threads(threads)
    {
      // Each thread streams its own slice, the same one every pass, so a slice sized for
      // one core's L1 or L2 stays there.
      const size_t t = static_cast<size_t>(omp_get_thread_num()), nt = static_cast<size_t>(omp_get_num_threads());
      const size_t begin = l.n / kAlign * t / nt * kAlign, end = l.n / kAlign * (t + 1) / nt * kAlign;
      with_probe_arch([&](auto arch) {
        TriadKernel{}(arch, l.a.data() + begin, l.b.data() + begin, l.c.data() + begin, end - begin, 3.0f, l.repeats);
      });
    }
  };
  for (Level& l : levels) pass(l);  // brings the pages in
  // Rounds of one timed pass per level (a cache level's after an untimed one that brings
  // its data back), the fastest of each level's kept, for 0.56 s and at least 3 rounds.
  // A shared host can slow a core for tens of milliseconds, or one vCPU for minutes while
  // the thread moves between vCPUs: each level sampled across the whole window, no slow
  // spell lands on one level only (one level after another, a Zen 5 VM's L1 measured 74
  // GB/s beside its L2's 141 while its vCPUs ran an FMA loop at 0.58 and 0.98 s).
  constexpr double kBudgetMs = 560;
  std::array<double, 4> best;
  best.fill(1e300);
  const Clock::time_point start = Clock::now();
  for (int round = 0; round < 3 || elapsed_ms(start, Clock::now()) < kBudgetMs; ++round)
    for (size_t i = 0; i < levels.size(); ++i) {
      if (i + 1 < levels.size()) pass(levels[i]);
      const Clock::time_point t0 = Clock::now();
      pass(levels[i]);
      best[i] = std::min(best[i], elapsed_ms(t0, Clock::now()) * 1e-3);
    }
  std::array<double, 4> gbs{};
  for (size_t i = 0; i < levels.size(); ++i)
    gbs[i] = 12.0 * static_cast<double>(levels[i].n) * levels[i].repeats / best[i] * 1e-9;
  return gbs;
}

}  // namespace minfer
