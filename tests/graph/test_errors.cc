// Messages are one line whatever a model names: escape_controls, which every error type
// applies to its message.
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "graph/errors.h"
#include "graph/netjson_loader.h"

namespace minfer {
namespace {

TEST(EscapeControls, EscapesControlCharactersAndBytesThatAreNotUtf8) {
  EXPECT_EQ(escape_controls("conv_1/weights:0"), "conv_1/weights:0");
  EXPECT_EQ(escape_controls("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(escape_controls(std::string("\0\x1b[31m\x7f", 7)), "\\x00\\x1b[31m\\x7f");
  EXPECT_EQ(escape_controls("caf\xc3\xa9 \xe2\x88\x9a \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x88\x9a \xf0\x9f\x98\x80");
  EXPECT_EQ(escape_controls(std::string("\xc2\x9b") + "2J"), "\\u009b2J");  // U+009B: CSI on some terminals
  // A stray continuation byte, a truncated sequence, an overlong encoding, a surrogate.
  EXPECT_EQ(escape_controls("\x80 \xc3 \xc0\xaf \xed\xa0\x80"), "\\x80 \\xc3 \\xc0\\xaf \\xed\\xa0\\x80");
  const std::string once = escape_controls("x\n\\y\x01");
  EXPECT_EQ(once, "x\\n\\y\\x01");
  EXPECT_EQ(escape_controls(once), once);  // a message wrapped in another is escaped once
}

TEST(EscapeControls, EveryErrorTypeEscapesItsMessage) {
  EXPECT_STREQ(ModelError("a\nb").what(), "a\\nb");
  EXPECT_STREQ(UnsupportedModelError("a\nb").what(), "a\\nb");
  EXPECT_STREQ(OpError("a\nb").what(), "a\\nb");
  EXPECT_STREQ(UnsupportedError("a\nb").what(), "a\\nb");
  EXPECT_STREQ(UsageError("a\nb").what(), "a\\nb");
  EXPECT_STREQ(NumericsError("a\nb").what(), "a\\nb");
}

TEST(EscapeControls, NamesFromAModelCannotBreakTheLine) {
  // A node name with a newline and a terminal escape, an op type with a tab.
  const std::string text = R"({"inputs": [{"name": "x", "shape": [1, 4]}], "outputs": ["y"], "nodes": [
      {"name": "relu\nfake: line\u001b[2J", "op": "Re\tlu", "inputs": ["x"], "outputs": ["y"]}]})";
  try {
    compile(parse_netjson(text, "m.json", "."));
    ADD_FAILURE() << "compiled";
  } catch (const ModelError& e) {
    EXPECT_STREQ(e.what(), "m.json: node 'relu\\nfake: line\\x1b[2J' (Re\\tlu): op type 'Re\\tlu' is not supported");
  }
}

}  // namespace
}  // namespace minfer
