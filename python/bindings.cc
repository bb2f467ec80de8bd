// The compiled half of the Python module minfer (the other half, python/minfer/__init__.py,
// handles arguments and numpy conversion): thin bindings over the C++ API and the tools'
// library. Everything computed here is computed by the same functions as in engine_bench.
#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <variant>

#include "bench/attribute_choices.h"
#include "bench/compare.h"
#include "bench/profile_runs.h"
#include "engine/engine.h"
#include "profiler/compare_report.h"

namespace py = pybind11;

namespace minfer::python {
namespace {

// A report document with its renderings, as engine_bench writes them.
class Report {
 public:
  Report(nlohmann::json report, RunProfile profile) : report_(std::move(report)), profile_(std::move(profile)) {}
  std::string json_text() const { return report_.dump(); }
  std::string text() const { return format_text(report_); }
  std::string csv() const { return format_csv(report_); }
  std::string html() const { return format_html(report_); }
  std::string memory_plan() const { return format_memory_plan(report_); }
  std::string trace() const { return format_trace(report_, profile_); }

 private:
  nlohmann::json report_;
  RunProfile profile_;
};

// engine_bench --compare's document with its renderings.
class Comparison {
 public:
  explicit Comparison(nlohmann::json comparison) : comparison_(std::move(comparison)) {}
  std::string json_text() const { return comparison_.dump(); }
  std::string text() const { return format_compare_text(comparison_); }
  std::string csv() const { return format_compare_csv(comparison_); }
  std::string html() const { return format_compare_html(comparison_); }

 private:
  nlohmann::json comparison_;
};

using NamedShapes = std::vector<std::pair<std::string, Shape>>;

// The feed for an input of element type `dtype`, C-contiguous of that type: the array
// itself where it is, else a converted copy. A float32 input takes real, integer and bool
// arrays; an int64 one (token ids, indices) integer and bool arrays, not reals, whose
// fractions a conversion would drop; a bool one bool arrays.
py::array as_input(const std::string& source, const std::string& name, DType dtype, const py::array& array) {
  const char kind = array.dtype().kind();
  const std::string kinds = dtype == DType::kFloat32 ? "biuf" : dtype == DType::kInt64 ? "biu" : "b";
  if (kinds.find(kind) == std::string::npos)
    throw UsageError(fmt::format("{}: input '{}' is {}; an array of {} is not converted to it", source, name,
                                 dtype_name(dtype), std::string(py::str(array.dtype()))));
  constexpr int kFlags = py::array::c_style | py::array::forcecast;
  switch (dtype) {
    case DType::kFloat32: return py::array_t<float, kFlags>::ensure(array);
    case DType::kInt64: return py::array_t<int64_t, kFlags>::ensure(array);
    case DType::kBool: return py::array_t<bool, kFlags>::ensure(array);
  }
  return {};
}

// The element type of an array as_input returned.
DType dtype_of_array(const py::array& array) {
  if (array.dtype().is(py::dtype::of<float>())) return DType::kFloat32;
  if (array.dtype().is(py::dtype::of<int64_t>())) return DType::kInt64;
  return DType::kBool;
}

// A compiled model and the sessions that run it. Each run takes an idle session (or
// makes one) and gives it back after, so runs from several Python threads at once
// never share a session, and a thread pool reuses as many sessions as it has threads.
class Model {
 public:
  Model(std::shared_ptr<const CompiledModel> model, std::string spec)
      : model_(std::move(model)), spec_(std::move(spec)) {}

  const std::shared_ptr<const CompiledModel>& compiled() const { return model_; }
  const std::string& spec() const { return spec_; }
  NamedShapes inputs() const { return named_shapes(model_->input_values()); }
  NamedShapes outputs() const { return named_shapes(model_->output_values()); }

  // `feeds`: every graph input by name, as numpy arrays; each is read in place where it
  // has the input's element type and is C-contiguous, else converted (as_input). Returns
  // every output as a new array of its element type.
  py::dict run(const std::map<std::string, py::array>& feeds) {
    const std::string& source = model_->graph().source;
    std::vector<std::pair<std::string, py::array>> inputs;
    for (int v : model_->input_values()) {
      const ValueSlot& slot = model_->values()[v];
      auto feed = feeds.find(slot.name);
      if (feed == feeds.end()) throw UsageError(fmt::format("{}: input '{}' is not given", source, slot.name));
      py::array array = as_input(source, slot.name, slot.type.dtype, feed->second);
      const Shape given(array.shape(), array.shape() + array.ndim());
      if (given != slot.type.shape)
        throw UsageError(fmt::format("{}: input '{}' has shape {}, the model takes {}", source, slot.name,
                                     shape_str(given), shape_str(slot.type.shape)));
      inputs.emplace_back(slot.name, std::move(array));
    }
    for (const auto& feed : feeds)
      if (std::none_of(inputs.begin(), inputs.end(), [&](const auto& in) { return in.first == feed.first; }))
        throw UsageError(fmt::format("{}: '{}' is not a graph input", source, feed.first));

    Lease lease(*this);
    {
      py::gil_scoped_release release;
      for (const auto& [name, array] : inputs) {
        const auto n = static_cast<size_t>(array.size());
        switch (dtype_of_array(array)) {
          case DType::kFloat32: lease.session->set_input(name, {static_cast<const float*>(array.data()), n}); break;
          case DType::kInt64: lease.session->set_input(name, {static_cast<const int64_t*>(array.data()), n}); break;
          case DType::kBool: lease.session->set_input(name, {static_cast<const uint8_t*>(array.data()), n}); break;
        }
      }
      lease.session->run();
    }
    py::dict outputs;
    for (int v : model_->output_values()) {
      const std::string& name = model_->values()[v].name;
      const Session::Value value = lease.session->value(name);
      const std::vector<py::ssize_t> shape(value.type.shape.begin(), value.type.shape.end());
      py::array array = value.type.dtype == DType::kFloat32 ? py::array(py::array_t<float>(shape))
                        : value.type.dtype == DType::kInt64 ? py::array(py::array_t<int64_t>(shape))
                                                            : py::array(py::array_t<bool>(shape));
      std::memcpy(array.mutable_data(), value.data,
                  static_cast<size_t>(num_elements(value.type.shape) * dtype_size(value.type.dtype)));
      outputs[py::str(name)] = std::move(array);
    }
    return outputs;
  }

  // engine_bench's measurement, on a session of its own (its profile holds these runs only).
  Report profile(const cli::ProfileSettings& settings) const {
    Session session(model_);
    nlohmann::json report;
    {
      py::gil_scoped_release release;
      report = cli::profile_runs(session, settings);
    }
    return Report(std::move(report), session.profile());
  }

 private:
  // A session taken from the idle ones for one run, given back when the run is over.
  struct Lease {
    explicit Lease(Model& model) : model(model) {
      {
        std::lock_guard lock(model.mutex_);
        if (!model.idle_.empty()) {
          session = std::move(model.idle_.back());
          model.idle_.pop_back();
          return;
        }
      }
      session = std::make_unique<Session>(model.model_);
      session->set_profiling(false);  // plain runs keep no times
    }
    ~Lease() {
      std::lock_guard lock(model.mutex_);
      model.idle_.push_back(std::move(session));
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

    Model& model;
    std::unique_ptr<Session> session;
  };

  NamedShapes named_shapes(const std::vector<int>& values) const {
    NamedShapes out;
    for (int v : values) out.emplace_back(model_->values()[v].name, model_->values()[v].type.shape);
    return out;
  }

  std::shared_ptr<const CompiledModel> model_;
  std::string spec_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Session>> idle_;
};

// A side of compare(): a side as engine_bench --compare takes it, or a loaded model.
using Side = std::variant<std::string, std::shared_ptr<Model>>;

cli::ComparedModel compared_model(const std::string& label, const Side& side, const cli::SideSettings& defaults) {
  if (const auto* spec = std::get_if<std::string>(&side)) return cli::load_side(label, *spec, defaults);
  const Model& model = *std::get<std::shared_ptr<Model>>(side);
  return {model.spec(), model.compiled()};
}

Comparison compare(const Side& a, const Side& b, const cli::SideSettings& defaults, const cli::CompareRun& run) {
  nlohmann::json comparison;
  {
    py::gil_scoped_release release;
    comparison = cli::compare_models(compared_model("A", a, defaults), compared_model("B", b, defaults), run);
  }
  return Comparison(std::move(comparison));
}

}  // namespace
}  // namespace minfer::python

PYBIND11_MODULE(_minfer, m) {
  using namespace minfer;
  using namespace minfer::python;
  m.doc() = "The compiled half of minfer; use the package minfer.";

  // Every error of the engine's own is one Python type with the message engine_bench
  // prints after "engine_bench: ". The type lives as long as the process.
  static PyObject* const model_error = PyErr_NewExceptionWithDoc(
      "minfer.ModelError", "A model, input or setting the engine refuses, with the tools' one-line message.",
      PyExc_ValueError, nullptr);
  m.attr("ModelError") = py::handle(model_error);
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const ModelError& e) {
      PyErr_SetString(model_error, e.what());
    } catch (const UsageError& e) {
      PyErr_SetString(model_error, e.what());
    } catch (const NumericsError& e) {
      PyErr_SetString(model_error, e.what());
    } catch (const OpError& e) {
      PyErr_SetString(model_error, e.what());
    }
  });

  py::class_<CompileOptions>(m, "CompileOptions")
      .def(py::init<>())
      .def_readwrite("num_threads", &CompileOptions::num_threads)
      .def_readwrite("max_memory", &CompileOptions::max_memory)
      .def_readwrite("check_numerics", &CompileOptions::check_numerics)
      .def_property(
          "fold_bn", [](const CompileOptions& o) { return o.passes.fold_bn; },
          [](CompileOptions& o, bool v) { o.passes.fold_bn = v; })
      .def_property(
          "fuse", [](const CompileOptions& o) { return o.passes.fuse; },
          [](CompileOptions& o, bool v) { o.passes.fuse = v; })
      .def_property(
          "clean", [](const CompileOptions& o) { return o.passes.clean; },
          [](CompileOptions& o, bool v) { o.passes.clean = v; })
      .def_property(
          "blocked_layout", [](const CompileOptions& o) { return o.passes.blocked_layout; },
          [](CompileOptions& o, bool v) { o.passes.blocked_layout = v; })
      .def("choose", &cli::choose_attribute, py::arg("name"), py::arg("value"));
  m.def("attribute_choices", [] {
    std::vector<std::pair<std::string, std::vector<std::string>>> out;
    for (const cli::AttributeChoice& c : cli::attribute_choices()) out.emplace_back(c.name, c.values);
    return out;
  });
  m.def("parse_byte_size", &parse_byte_size, py::arg("name"), py::arg("text"));

  py::class_<MachineOptions>(m, "MachineOptions")
      .def(py::init<>())
      .def_readwrite("peak_gflops", &MachineOptions::peak_gflops)
      .def_readwrite("bandwidth_gbs", &MachineOptions::bandwidth_gbs)
      .def_readwrite("fma_units", &MachineOptions::fma_units)
      .def_readwrite("reprobe", &MachineOptions::reprobe)
      .def_readwrite("cache_file", &MachineOptions::cache_file);
  m.def("default_machine_cache_file", &default_machine_cache_file);

  py::class_<cli::ProfileSettings>(m, "ProfileSettings")
      .def(py::init<>())
      .def_readwrite("warmup_runs", &cli::ProfileSettings::warmup_runs)
      .def_readwrite("num_runs", &cli::ProfileSettings::num_runs)
      .def_readwrite("machine", &cli::ProfileSettings::machine)
      .def_readwrite("image", &cli::ProfileSettings::image)
      .def_readwrite("mean", &cli::ProfileSettings::mean)
      .def_readwrite("std", &cli::ProfileSettings::std)
      .def_readwrite("top_k", &cli::ProfileSettings::top_k);

  py::class_<cli::CompareRun>(m, "CompareRun")
      .def(py::init<>())
      .def_readwrite("warmup_runs", &cli::CompareRun::warmup_runs)
      .def_readwrite("num_runs", &cli::CompareRun::num_runs)
      .def_readwrite("machine", &cli::CompareRun::machine);

  py::class_<Report>(m, "Report")
      .def("json_text", &Report::json_text)
      .def("text", &Report::text)
      .def("csv", &Report::csv)
      .def("html", &Report::html)
      .def("memory_plan", &Report::memory_plan)
      .def("trace", &Report::trace);

  py::class_<Comparison>(m, "Comparison")
      .def("json_text", &Comparison::json_text)
      .def("text", &Comparison::text)
      .def("csv", &Comparison::csv)
      .def("html", &Comparison::html);

  py::class_<Model, std::shared_ptr<Model>>(m, "Model")
      .def_property_readonly("spec", &Model::spec)
      .def_property_readonly("inputs", &Model::inputs)
      .def_property_readonly("outputs", &Model::outputs)
      .def("run", &Model::run, py::arg("feeds"))
      .def("profile", &Model::profile, py::arg("settings"));

  m.def(
      "load",
      [](const std::string& path, const CompileOptions& options, const std::map<std::string, Shape>& input_shapes,
         const std::string& spec) {
        std::shared_ptr<const CompiledModel> compiled;
        {
          py::gil_scoped_release release;
          compiled = compile_file(path, options, input_shapes);
        }
        return std::make_shared<Model>(std::move(compiled), spec);
      },
      py::arg("path"), py::arg("options"), py::arg("input_shapes"), py::arg("spec"));

  // [(name, declared dimensions with -1 where dynamic, or None)] of the tensor inputs.
  m.def(
      "model_inputs",
      [](const std::string& path) {
        std::vector<std::pair<std::string, std::optional<std::vector<int64_t>>>> inputs;
        for (const InputSignature& in : model_inputs(path))
          if (in.is_tensor) inputs.emplace_back(in.name, in.has_shape ? std::optional(in.dims) : std::nullopt);
        return inputs;
      },
      py::arg("path"));

  m.def(
      "compare",
      [](const Side& a, const Side& b, const std::string& model_path, const std::map<std::string, Shape>& input_shapes,
         const CompileOptions& options, const cli::CompareRun& run) {
        return compare(a, b, {model_path, input_shapes, options}, run);
      },
      py::arg("a"), py::arg("b"), py::arg("model_path"), py::arg("input_shapes"), py::arg("options"), py::arg("run"));
}
