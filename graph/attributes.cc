#include "graph/attributes.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "graph/errors.h"

namespace minfer {

namespace {
[[noreturn]] void wrong_type(const std::string& name, const char* want) {
  throw OpError("attribute '" + name + "' must be " + want);
}
}  // namespace

int64_t Attributes::get_int(const std::string& name, int64_t fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* v = std::get_if<int64_t>(&it->second)) return *v;
  wrong_type(name, "an integer");
}

double Attributes::get_float(const std::string& name, double fallback) const {
  const double v = get_data_float(name, fallback);
  // An ONNX float can be NaN (JSON cannot say it); no parameter means anything by it.
  if (std::isnan(v)) throw OpError("attribute '" + name + "' is NaN");
  return v;
}

double Attributes::get_data_float(const std::string& name, double fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* v = std::get_if<double>(&it->second)) return *v;
  if (auto* v = std::get_if<int64_t>(&it->second)) return static_cast<double>(*v);
  wrong_type(name, "a number");
}

std::string Attributes::get_string(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* v = std::get_if<std::string>(&it->second)) return *v;
  wrong_type(name, "a string");
}

std::vector<int64_t> Attributes::get_ints(const std::string& name, const std::vector<int64_t>& fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
  wrong_type(name, "a list of integers");
}

std::vector<double> Attributes::get_floats(const std::string& name, const std::vector<double>& fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* v = std::get_if<std::vector<double>>(&it->second)) return *v;
  if (auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return {v->begin(), v->end()};
  wrong_type(name, "a list of numbers");
}

std::vector<std::string> Attributes::get_strings(const std::string& name,
                                                 const std::vector<std::string>& fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* v = std::get_if<std::vector<std::string>>(&it->second)) return *v;
  // An empty JSON list carries no element type; it reads as an empty int list.
  if (auto* v = std::get_if<std::vector<int64_t>>(&it->second); v && v->empty()) return {};
  wrong_type(name, "a list of strings");
}

void Attributes::check_known(std::initializer_list<const char*> known) const {
  for (const auto& entry : values_) {
    const std::string& name = entry.first;
    bool ok = std::any_of(known.begin(), known.end(), [&](const char* k) { return name == k; });
    if (!ok) throw UnsupportedError("unsupported attribute '" + name + "'");
  }
}

const Tensor* Attributes::get_tensor(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return nullptr;
  if (auto* v = std::get_if<Tensor>(&it->second)) return v;
  wrong_type(name, "a tensor");
}

}  // namespace minfer
