#include "profiler/isa.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <xsimd/xsimd.hpp>

#include "graph/errors.h"

namespace minfer {
namespace {

constexpr Isa kAllIsas[] = {Isa::kScalar, Isa::kAvx2, Isa::kAvx512};

// The value as the message quotes it: at most 32 characters, control and other
// non-printable bytes as \xNN, so the message stays one line.
std::string printable(std::string_view value) {
  std::string out;
  for (char c : value.substr(0, 32)) {
    const auto byte = static_cast<unsigned char>(c);
    out += std::isprint(byte) ? std::string(1, c) : fmt::format("\\x{:02x}", byte);
  }
  return value.size() > 32 ? out + "..." : out;
}

// Lowest first, e.g. "scalar, avx2".
std::string names(const std::vector<Isa>& isas) {
  std::string out;
  for (auto it = isas.rbegin(); it != isas.rend(); ++it) out += (out.empty() ? "" : ", ") + std::string(isa_name(*it));
  return out;
}

// Either the target or the reason there is none, decided once per process.
struct Choice {
  Isa isa = Isa::kScalar;
  std::string error;
};

Choice choose() {
  const std::vector<Isa> runnable = runnable_isas();
  const char* forced = std::getenv("MINFER_ISA");
  if (forced == nullptr || *forced == '\0') return {runnable.front(), ""};
  try {
    return {parse_isa_override(forced, runnable), ""};
  } catch (const UsageError& e) {
    return {Isa::kScalar, e.what()};
  }
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "";
}

bool isa_runnable(Isa isa) {
  static const auto cpu = xsimd::available_architectures();
  switch (isa) {
    case Isa::kScalar: return true;
    case Isa::kAvx2: return cpu.fma3_avx2;
    case Isa::kAvx512: return cpu.avx512f;
  }
  return false;
}

std::vector<Isa> runnable_isas() {
  std::vector<Isa> isas;
  for (Isa isa : {Isa::kAvx512, Isa::kAvx2, Isa::kScalar})
    if (isa_runnable(isa)) isas.push_back(isa);
  return isas;
}

Isa active_isa() {
  static const Choice choice = choose();
  if (!choice.error.empty()) throw UsageError(choice.error);
  return choice.isa;
}

Isa parse_isa_override(std::string_view value, const std::vector<Isa>& runnable) {
  for (Isa isa : kAllIsas) {
    if (value != isa_name(isa)) continue;
    if (std::find(runnable.begin(), runnable.end(), isa) != runnable.end()) return isa;
    throw UsageError(fmt::format("MINFER_ISA={}: this CPU cannot run it (runnable: {})", value, names(runnable)));
  }
  throw UsageError(
      fmt::format("MINFER_ISA={}: unknown instruction set (expected scalar, avx2 or avx512)", printable(value)));
}

}  // namespace minfer
