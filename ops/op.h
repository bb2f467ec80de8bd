// The one interface every operator implements (see shared/design.md): validation and
// shape inference, analytic cost, workspace, one-time preparation and the kernel.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/errors.h"
#include "graph/graph.h"
#include "profiler/cost.h"

namespace minfer {

// What is known about one op input before running: its shape and, for initializers
// (and constants folded at load time), its data. Omitted optional inputs have
// present == false.
struct ArgInfo {
  Shape shape;
  const Tensor* constant = nullptr;
  bool present = true;
};
using ArgInfos = std::vector<ArgInfo>;

// A tensor as a kernel sees it. Views are built once per execution context, so a
// run allocates nothing.
struct TensorView {
  float* data = nullptr;
  Shape shape;
  int64_t size() const { return num_elements(shape); }
};

// An omitted optional output (an empty name in the node, as in ONNX) reaches cost(),
// details(), workspace_bytes() and prepare() as this shape, with no elements (so it is
// never counted as written), and run() as a TensorView with data == nullptr.
inline const Shape kOmittedOutput{0};

struct RunContext {
  int num_threads = 1;
};

class Op {
 public:
  virtual ~Op() = default;

  // Output shapes from input shapes. Throws OpError for invalid attributes or inputs.
  virtual std::vector<Shape> infer_shapes(const ArgInfos& in) const = 0;

  // Analytic cost by the conventions in spec/net-json.md; pure and exact.
  virtual Cost cost(const ArgInfos& in, const std::vector<Shape>& out) const = 0;

  // A finer classification shown in reports (Conv: regular/depthwise/pointwise/grouped).
  virtual std::string kind(const ArgInfos& /*in*/) const { return ""; }

  // Scratch the kernel needs while it runs (im2col buffers and the like).
  virtual int64_t workspace_bytes(const ArgInfos& /*in*/, const std::vector<Shape>& /*out*/,
                                  int /*threads*/) const {
    return 0;
  }

  // Facts about this instance the report shows beside the cost (e.g. the method a
  // ConvTranspose runs, an LSTM's state bytes); an empty object when there are none.
  virtual nlohmann::json details(const ArgInfos& /*in*/, const std::vector<Shape>& /*out*/) const { return {}; }

  // One-time work once shapes and constant inputs are known (weight packing).
  // The op is immutable afterwards, so one prepared op serves concurrent runs.
  virtual void prepare(const ArgInfos& /*in*/, const std::vector<Shape>& /*out*/) {}

  // The kernel: no allocation, no timing, no I/O.
  virtual void run(const RunContext& ctx, std::span<const TensorView> in, std::span<const TensorView> out,
                   std::span<float> workspace) const = 0;

  // Index of an input whose buffer the output may reuse, or -1. The memory planner
  // decides whether it does.
  virtual int inplace_input() const { return -1; }

  // Whether a node may omit output `index`; a required output cannot be omitted.
  virtual bool output_optional(size_t /*index*/) const { return false; }
};

// Creates the op for a node (parsing and checking its attributes); throws OpError
// for an unknown op type or a bad attribute.
std::unique_ptr<Op> create_op(const Node& node);
bool is_known_op(const std::string& op_type);
std::vector<std::string> known_ops();

// Helpers for op implementations.
const Shape& required_shape(const ArgInfos& in, size_t index, const char* what);
void check_input_count(const ArgInfos& in, size_t min_count, size_t max_count);
// The values of a constant integer-valued input (Reshape's shape, Pad's pads, axes),
// stored as float32; throws OpError if it is not constant or not integral.
std::vector<int64_t> constant_ints(const ArgInfos& in, size_t index, const char* what);
// The traffic part of every op's cost: params (constant inputs' elements), bytes read
// (all inputs) and bytes written (all outputs). Ops add their MACs and FLOPs to it.
Cost data_movement(const ArgInfos& in, const std::vector<Shape>& out);

}  // namespace minfer
