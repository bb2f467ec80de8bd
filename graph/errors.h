// Error types. Every message a user sees names the file, the node and the cause, on
// one line: each type escapes the control characters of its message (escape_controls),
// so a name or path quoted from a hostile file can neither break the line nor drive the
// terminal, wherever it was quoted.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace minfer {

// `text` with every control character (C0, DEL, C1) and every byte that is not part of
// valid UTF-8 written as an escape: \n, \r, \t, \xNN for bytes, \u00NN for C1
// characters. Other text, backslashes included, is unchanged, so escaping twice is
// escaping once.
std::string escape_controls(std::string_view text);

// What a message quotes of a value that may be long (a JSON value's text, a field of a
// model file): `text` up to kExcerptChars characters, then "..." when it was cut.
inline constexpr size_t kExcerptChars = 60;
std::string excerpt(std::string_view text);

// A std::runtime_error whose message is escaped. A message of several lines (a model
// refused for several problems) has each line escaped on its own, so its only line
// breaks are those between the lines.
struct EscapedError : std::runtime_error {
  explicit EscapedError(std::string_view message) : std::runtime_error(escape_controls(message)) {}
  explicit EscapedError(const std::vector<std::string>& lines) : std::runtime_error(escape_lines(lines)) {}

 private:
  static std::string escape_lines(const std::vector<std::string>& lines);
};

// Raised by an op about itself (bad attribute, incompatible input shapes). It does not
// know the file or node name; the graph driver catches it and rethrows a ModelError.
struct OpError : EscapedError {
  using EscapedError::EscapedError;
};

// A model the engine refuses, with a complete one-line message:
// "<file>: node '<name>' (<op>): <cause>" or "<file>: <cause>".
struct ModelError : EscapedError {
  using EscapedError::EscapedError;
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
struct NumericsError : EscapedError {
  using EscapedError::EscapedError;
};

// A caller mistake at run time: unknown input name, wrong input size.
struct UsageError : EscapedError {
  using EscapedError::EscapedError;
};

}  // namespace minfer
