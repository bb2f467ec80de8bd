// LSTM (ONNX opset 14) over ops/recurrent_op.cc's shared op and kernel, one LstmCell
// step per time step and direction (docs/lstm.md).
#include "ops/lstm_cell.h"
#include "ops/recurrent_op.h"

namespace minfer {
namespace {

const RecurrentKind kLstm = {
    "LSTM",
    4,
    {"Sigmoid", "Tanh", "Tanh"},
    &CellConfig::input_forget,
    "input_forget",
    true,
    [](const CellConfig& c) -> std::unique_ptr<RecurrentCell> { return std::make_unique<LstmCell>(c); }};

}  // namespace

std::unique_ptr<Op> make_lstm(const Node& node) {
  return make_recurrent_op(kLstm, node);
}

}  // namespace minfer
