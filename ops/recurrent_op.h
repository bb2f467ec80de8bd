// The op and kernel of ONNX's recurrent ops (LSTM, GRU, RNN) around their cells: the
// attributes they share (direction, hidden_size, layout, clip, activations, the engine's
// "plan"), the shapes of X [seq, batch, D] (layout 1: [batch, seq, D]), W, R, B,
// sequence_lens and the initial states, and the run over every direction: the state set
// from initial_h (initial_c) or 0, one cell step per time step, Y [seq, dirs, batch, H]
// (layout 1: [batch, seq, dirs, H]) and Y_h (Y_c) [dirs, batch, H] (layout 1: [batch,
// dirs, H]) written, each optional. The cell's state, scratch and GEMM packing scratch
// are the kernel's workspace; weights that are initializers are packed when it binds.
#pragma once

#include <memory>
#include <vector>

#include "ops/recurrent_cell.h"

namespace minfer {

// What one recurrent op is.
struct RecurrentKind {
  const char* op_type;                   // "LSTM", for messages
  int gates;                             // gate blocks in W and R: H rows each
  std::vector<const char*> activations;  // the default activations of one direction
  bool CellConfig::*flag = nullptr;      // the op's own 0/1 attribute, when it has one
  const char* flag_name = nullptr;       // its name ("input_forget", "linear_before_reset")
  bool cell_state = false;               // LSTM: C (initial_c, input 6; Y_c, output 2) and P (input 7)
  std::unique_ptr<RecurrentCell> (*make_cell)(const CellConfig& config);
  // RNN: Relu, run instead of the default when every direction names it (PyTorch's
  // nonlinearity='relu'), with `relu` set in the cell's configuration; nullptr: none.
  const char* relu_activation = nullptr;
};

// `kind` must outlive the op (a static in the op's file).
std::unique_ptr<Op> make_recurrent_op(const RecurrentKind& kind, const Node& node);

}  // namespace minfer
