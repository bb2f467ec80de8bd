// Error types. Every message a user sees names the file, the node and the cause.
#pragma once

#include <stdexcept>
#include <string>

namespace minfer {

// Raised by an op about itself (bad attribute, incompatible input shapes). It does not
// know the file or node name; the graph driver catches it and rethrows a ModelError.
struct OpError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A model the engine refuses, with a complete one-line message:
// "<file>: node '<name>' (<op>): <cause>" or "<file>: <cause>".
struct ModelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Something valid that the engine does not implement: an op type, a data type, an
// attribute or an attribute value. Ops throw it where they refuse a feature, so tools
// can tell "not supported" (engine_check: SKIP) from "broken" (FAIL).
struct UnsupportedError : OpError {
  using OpError::OpError;
};

// An UnsupportedError with its file and node context.
struct UnsupportedModelError : ModelError {
  using ModelError::ModelError;
};

// A NaN or infinity where Session::set_check_numerics looks for one, with the op,
// input or constant that holds it first.
struct NumericsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A caller mistake at run time: unknown input name, wrong input size.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace minfer
