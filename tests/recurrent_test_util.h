// What the LSTM, GRU and RNN tests check alike: the cell's buffer plan in a node's
// details, and the layout-1 inputs and outputs as transposes of layout 0's.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

namespace minfer::test {

// Transposes [a, b, inner] to [b, a, inner].
inline std::vector<float> swap_leading(const std::vector<float>& v, int64_t a, int64_t b, int64_t inner) {
  std::vector<float> t(v.size());
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      std::copy_n(v.begin() + (i * b + j) * inner, inner, t.begin() + (j * a + i) * inner);
  return t;
}

// The cell's buffers (details "cell_buffers", "cell_steps"): inside the plan's
// `plan_bytes`, each alive within the sub-steps, no two alive at the same sub-step
// overlapping. Returns how many distinct offsets they use.
inline size_t expect_cell_buffers_fit(const nlohmann::json& details, int64_t plan_bytes) {
  const auto& buffers = details["cell_buffers"];
  const int sub_steps = static_cast<int>(details["cell_steps"].size());
  std::set<int64_t> offsets;
  for (const auto& b : buffers) {
    EXPECT_LE(b["offset"].get<int64_t>() + b["bytes"].get<int64_t>(), plan_bytes) << b.dump();
    EXPECT_GE(b["first_step"].get<int>(), 0);
    EXPECT_LT(b["last_step"].get<int>(), sub_steps);
    offsets.insert(b["offset"].get<int64_t>());
  }
  for (size_t i = 0; i < buffers.size(); ++i)
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      const auto &a = buffers[i], &b = buffers[j];
      const bool together = a["first_step"] <= b["last_step"] && b["first_step"] <= a["last_step"];
      const bool overlap = a["offset"].get<int64_t>() < b["offset"].get<int64_t>() + b["bytes"].get<int64_t>() &&
                           b["offset"].get<int64_t>() < a["offset"].get<int64_t>() + a["bytes"].get<int64_t>();
      EXPECT_FALSE(together && overlap) << a.dump() << " and " << b.dump();
    }
  return offsets.size();
}

}  // namespace minfer::test
