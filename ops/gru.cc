// GRU (ONNX opset 14, both linear_before_reset values) over ops/recurrent_op.cc's shared
// op and kernel, one GruCell step per time step and direction (docs/gru.md).
#include "ops/gru_cell.h"
#include "ops/recurrent_op.h"

namespace minfer {
namespace {

const RecurrentKind kGru = {
    "GRU",
    3,
    {"Sigmoid", "Tanh"},
    &CellConfig::linear_before_reset,
    "linear_before_reset",
    false,
    [](const CellConfig& c) -> std::unique_ptr<RecurrentCell> { return std::make_unique<GruCell>(c); }};

}  // namespace

std::unique_ptr<Op> make_gru(const Node& node) {
  return make_recurrent_op(kGru, node);
}

}  // namespace minfer
