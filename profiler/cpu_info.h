// What the operating system says about the CPU: model name, clock and physical core
// count, the inputs of the theoretical-peak formula (machine_model.h), and the sizes of
// its data caches, which size the bandwidth probe's working sets and place each op
// against the roof of the level its data fits in.
#pragma once

#include <cstdint>
#include <string>

namespace minfer {

struct CpuInfo {
  std::string model = "unknown CPU";
  double clock_ghz = 0;      // 0 when the system does not say
  std::string clock_source;  // where clock_ghz came from
  int physical_cores = 1;
  std::string vendor;  // vendor_id, e.g. "AuthenticAMD"; empty when not said
  int family = 0;      // cpu family, e.g. 25 for AMD Zen 3 and Zen 4

  // FMA units per core that issue one FMA of `vector_bits` per cycle each: 2 for AMD Zen
  // and Intel cores since Haswell, except that AMD family 25 (Zen 4, the one with
  // AVX-512) runs a 512-bit FMA on both of its 256-bit pipes at once: 1 at 512 bits. Some
  // Xeons with one 512-bit unit also have 1, which /proc/cpuinfo does not tell
  // (--fma_units).
  int fma_units(int vector_bits) const;
};

// Data cache sizes in bytes as cpu0 sees them: L1d and L2 of one core, L3 shared by the
// cores of its complex. 0 when the system does not say.
struct CacheSizes {
  int64_t l1 = 0, l2 = 0, l3 = 0;
};

// Reads `dir`/index*/{level,type,size} (Linux sysfs: /sys/devices/system/cpu/cpu0/cache);
// instruction caches are skipped. Levels the folder does not describe stay 0.
CacheSizes read_cache_sizes(const std::string& dir);

// The 1-minute load average (runnable and waiting threads, this process's included), or
// -1 when the system does not say; and the logical CPUs the system has.
double load_average();
int logical_cpus();

// This machine's data caches: sysfs, else sysconf (glibc's CPUID reading, which in a
// virtual machine may report the host's L3), read once.
const CacheSizes& cache_sizes();

// Parses the text of /proc/cpuinfo; `max_khz` is cpufreq's cpuinfo_max_freq in kHz (0 if
// absent), preferred over "cpu MHz", which is the current clock of a possibly idle core.
CpuInfo parse_cpu_info(const std::string& proc_cpuinfo, long max_khz);

// This machine's CPU, read once.
const CpuInfo& cpu_info();

}  // namespace minfer
