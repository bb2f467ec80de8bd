#include "profiler/machine_probe.h"

#include <unistd.h>

#include <algorithm>
#include <vector>

#include "profiler/isa.h"
#include "profiler/run_profile.h"

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

double probe_bandwidth_gbs(int threads) {
  // Each array as large as the last-level cache (and at least 32 MiB): a pass streams
  // three times the cache, so every pass reads memory, not what the last one left.
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  const size_t n = static_cast<size_t>(std::max<long>(8L << 20, l3 > 0 ? l3 / 4 : 0));
  std::vector<float> a(n), b(n, 1.0f), c(n, 2.0f);
  const float s = 3.0f;
  const auto triad = [&] {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
  };
  triad();  // brings the pages in
  const double seconds = best_seconds(0.3, triad);
  return 12.0 * static_cast<double>(n) / seconds * 1e-9;
}

}  // namespace minfer
