// Hand-made op costs for report fixtures: the counts given, each its own formula.
#pragma once

#include "profiler/cost.h"

namespace minfer::test {

inline OpCost literal_cost(const Cost& c) {
  return {c, CostExpr(c.macs), CostExpr(c.flops)};
}

}  // namespace minfer::test
