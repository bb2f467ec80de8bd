// Typed node attributes, as in ONNX: int, float, string, tensor and lists of the first three.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "graph/tensor.h"

namespace minfer {

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                               std::vector<std::string>, Tensor>;

// Lookups with ONNX defaults. A present attribute of the wrong type throws OpError
// naming the attribute, so a typo in a model never silently becomes the default.
class Attributes {
 public:
  void set(const std::string& name, AttrValue value) { values_[name] = std::move(value); }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  void erase(const std::string& name) { values_.erase(name); }
  const std::map<std::string, AttrValue>& all() const { return values_; }

  int64_t get_int(const std::string& name, int64_t fallback) const;
  // A parameter (alpha, epsilon, clip...): NaN is refused.
  double get_float(const std::string& name, double fallback) const;
  // A float that is data (Constant's value_float, Pad's value), NaN included.
  double get_data_float(const std::string& name, double fallback) const;
  std::string get_string(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> get_ints(const std::string& name, const std::vector<int64_t>& fallback = {}) const;
  std::vector<double> get_floats(const std::string& name, const std::vector<double>& fallback = {}) const;
  std::vector<std::string> get_strings(const std::string& name, const std::vector<std::string>& fallback = {}) const;
  // A TENSOR attribute (Constant's value); nullptr when absent.
  const Tensor* get_tensor(const std::string& name) const;

  // Throws OpError naming the first attribute not in `known` (ONNX attributes an op
  // does not implement must not be ignored silently).
  void check_known(std::initializer_list<const char*> known) const;

 private:
  std::map<std::string, AttrValue> values_;
};

}  // namespace minfer
