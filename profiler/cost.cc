#include "profiler/cost.h"

#include <fmt/format.h>

namespace minfer {

CostExpr::CostExpr(int64_t number) : value_(number), symbolic_(std::to_string(number)), substituted_(symbolic_) {}

CostExpr CostExpr::of(std::string symbol, int64_t value) {
  CostExpr e(value);
  e.symbolic_ = std::move(symbol);
  return e;
}

namespace {

// A sum inside a product needs parentheses; a negative literal does in any compound.
bool needs_parentheses(const std::string& text, bool is_sum, bool in_product) {
  return (is_sum && in_product) || (!text.empty() && text[0] == '-');
}

std::string operand(const std::string& text, bool is_sum, bool in_product) {
  return needs_parentheses(text, is_sum, in_product) ? "(" + text + ")" : text;
}

}  // namespace

CostExpr operator*(const CostExpr& a, const CostExpr& b) {
  CostExpr e;
  if (__builtin_mul_overflow(a.value_, b.value_, &e.value_))
    throw std::overflow_error(fmt::format("the cost {}*{} = {}*{} overflows 64 bits", a.symbolic_, b.symbolic_,
                                          a.substituted_, b.substituted_));
  const bool sa = a.form_ == CostExpr::Form::kSum, sb = b.form_ == CostExpr::Form::kSum;
  e.symbolic_ = operand(a.symbolic_, sa, true) + "*" + operand(b.symbolic_, sb, true);
  e.substituted_ = operand(a.substituted_, sa, true) + "*" + operand(b.substituted_, sb, true);
  e.form_ = CostExpr::Form::kProduct;
  return e;
}

CostExpr operator+(const CostExpr& a, const CostExpr& b) {
  CostExpr e;
  if (__builtin_add_overflow(a.value_, b.value_, &e.value_))
    throw std::overflow_error(fmt::format("the cost {} + {} = {} + {} overflows 64 bits", a.symbolic_, b.symbolic_,
                                          a.substituted_, b.substituted_));
  e.symbolic_ = operand(a.symbolic_, false, false) + " + " + operand(b.symbolic_, false, false);
  e.substituted_ = operand(a.substituted_, false, false) + " + " + operand(b.substituted_, false, false);
  e.form_ = CostExpr::Form::kSum;
  return e;
}

}  // namespace minfer
