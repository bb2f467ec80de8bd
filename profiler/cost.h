// Analytic cost of one op (or a sum of ops). MACs are multiply-accumulates; FLOPs are
// 2 x MACs for dot-product ops plus each op's element-wise FLOPs, never mixed units.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace minfer {

struct Cost {
  int64_t macs = 0;
  int64_t flops = 0;
  int64_t params = 0;         // elements of the initializers the op reads
  int64_t bytes_read = 0;     // inputs and weights
  int64_t bytes_written = 0;  // outputs

  // Throws std::overflow_error rather than wrap around (hostile shapes).
  Cost& operator+=(const Cost& o) {
    if (__builtin_add_overflow(macs, o.macs, &macs) || __builtin_add_overflow(flops, o.flops, &flops) ||
        __builtin_add_overflow(params, o.params, &params) ||
        __builtin_add_overflow(bytes_read, o.bytes_read, &bytes_read) ||
        __builtin_add_overflow(bytes_written, o.bytes_written, &bytes_written))
      throw std::overflow_error("the model's total cost overflows 64 bits");
    return *this;
  }
  int64_t bytes() const { return bytes_read + bytes_written; }
  friend bool operator==(const Cost&, const Cost&) = default;
};

// A count together with the formula it comes from, built by an op's cost code from
// named factors, so the formula shown can never disagree with the number:
//   CostExpr macs = CostExpr::of("K_h", 3) * CostExpr::of("K_w", 3) * CostExpr::of("C_out", 64);
//   macs.value() == 576, macs.symbolic() == "K_h*K_w*C_out", macs.substituted() == "3*3*64"
// The substituted form is plain integer arithmetic (+, *, parentheses) whose value is
// value(). Arithmetic is checked: a count past 64 bits throws std::overflow_error.
class CostExpr {
 public:
  CostExpr() : CostExpr(0) {}
  CostExpr(int64_t number);  // NOLINT: a literal reads as itself in both forms
  static CostExpr of(std::string symbol, int64_t value);

  int64_t value() const { return value_; }
  const std::string& symbolic() const { return symbolic_; }
  const std::string& substituted() const { return substituted_; }

  friend CostExpr operator*(const CostExpr& a, const CostExpr& b);
  friend CostExpr operator+(const CostExpr& a, const CostExpr& b);

 private:
  enum class Form { kAtom, kProduct, kSum };
  int64_t value_ = 0;
  std::string symbolic_, substituted_;
  Form form_ = Form::kAtom;
};

// One op's cost with the formulas of its MACs and FLOPs (macs == macs_formula.value(),
// flops == flops_formula.value()).
struct OpCost : Cost {
  CostExpr macs_formula, flops_formula;
};

}  // namespace minfer
