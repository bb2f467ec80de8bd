#include "bench/cli_common.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "graph/errors.h"

namespace minfer::cli {

void add_compile_flags(CLI::App& app, CompileOptions& options) {
  app.add_option("--num_threads", options.num_threads, "Threads inside kernels")->check(CLI::Range(1, 1024));
}

void fill_inputs_deterministic(Session& session, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int v : session.model().input_values()) {
    for (float& x : session.input(session.model().values()[v].name))
      x = static_cast<float>(static_cast<double>(rng() >> 11) * 0x1.0p-53);
  }
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw UsageError(fmt::format("{}: cannot open for writing", path));
    out << contents;
    out.flush();
    if (!out) {
      std::filesystem::remove(tmp);
      throw UsageError(fmt::format("{}: write failed", path));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    throw UsageError(fmt::format("{}: {}", path, ec.message()));
  }
}

int run_tool(const char* tool, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::cerr << tool << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace minfer::cli
