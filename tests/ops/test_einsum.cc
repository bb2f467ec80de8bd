// Einsum against a loop over every combination of its letters written here (numpy's
// definition: the product of the operands' elements, summed over the letters the output
// lacks; an axis of size 1 repeats), and its cost against the product of the letters'
// sizes worked by hand.
#include <gtest/gtest.h>

#include <map>

#include "tests/op_test_util.h"

namespace minfer::test {
namespace {

Attributes equation(const std::string& eq) {
  Attributes a;
  a.set("equation", eq);
  return a;
}

// `labels`: each operand's letters and the output's, one letter per axis (the test's own
// spelling of the equation, "..." written out as letters).
std::vector<float> naive_einsum(const std::vector<std::string>& labels, const std::string& out,
                                const std::vector<Shape>& shapes, const std::vector<std::vector<float>>& data) {
  std::map<char, int64_t> size;
  for (size_t i = 0; i < labels.size(); ++i)
    for (size_t a = 0; a < labels[i].size(); ++a) size[labels[i][a]] = std::max(size[labels[i][a]], shapes[i][a]);
  std::vector<char> letters;
  for (const auto& [c, n] : size) letters.push_back(c);
  int64_t out_elements = 1;
  for (char c : out) out_elements *= size[c];
  std::vector<double> y(static_cast<size_t>(out_elements), 0.0);
  std::map<char, int64_t> at;
  for (char c : letters) at[c] = 0;
  for (;;) {
    double product = 1.0;
    for (size_t i = 0; i < labels.size(); ++i) {
      int64_t offset = 0;
      for (size_t a = 0; a < labels[i].size(); ++a)
        offset = offset * shapes[i][a] + (shapes[i][a] == 1 ? 0 : at[labels[i][a]]);
      product *= data[i][static_cast<size_t>(offset)];
    }
    int64_t o = 0;
    for (char c : out) o = o * size[c] + at[c];
    y[static_cast<size_t>(o)] += product;
    size_t d = 0;
    for (; d < letters.size(); ++d) {
      if (++at[letters[d]] < size[letters[d]]) break;
      at[letters[d]] = 0;
    }
    if (d == letters.size()) break;
  }
  return {y.begin(), y.end()};
}

struct EinsumCase {
  std::string equation;             // as the model writes it
  std::vector<std::string> labels;  // each operand's letters, "..." written out
  std::string out;                  // the output's letters
  std::vector<Shape> shapes;
  int64_t macs;  // worked by hand: the product of every letter's size
};

TEST(Einsum, MatchesTheDefinitionWithItsCost) {
  const std::vector<EinsumCase> cases = {
      // Attention's scores and weighted values: batch b, h; rows i; columns j; k = d.
      {"bhid,bhjd->bhij", {"bhid", "bhjd"}, "bhij", {{2, 3, 5, 4}, {2, 3, 6, 4}}, 2 * 3 * 5 * 6 * 4},
      {"bhij,bhjd->bhid", {"bhij", "bhjd"}, "bhid", {{2, 3, 5, 6}, {2, 3, 6, 4}}, 2 * 3 * 5 * 4 * 6},
      {"ij,jk", {"ij", "jk"}, "ik", {{5, 4}, {4, 7}}, 5 * 4 * 7},      // implicit output
      {"ij,jk->ki", {"ij", "jk"}, "ki", {{5, 4}, {4, 7}}, 5 * 4 * 7},  // the product transposed
      {"ij,kj->ik", {"ij", "kj"}, "ik", {{5, 4}, {7, 4}}, 5 * 4 * 7},  // B transposed
      {"i,j->ij", {"i", "j"}, "ij", {{5}, {3}}, 15},                   // outer product: k = 1
      {"i,i->", {"i", "i"}, "", {{5}, {5}}, 5},                        // inner product
      {"ijk,ikl->jil", {"ijk", "ikl"}, "jil", {{3, 4, 5}, {3, 5, 2}}, 3 * 4 * 5 * 2},
      {"ij,jk->i", {"ij", "jk"}, "i", {{5, 4}, {4, 7}}, 5 * 4 * 7},  // k of B alone summed
      {"nchw,kc->nkhw", {"nchw", "kc"}, "nkhw", {{2, 32, 7, 6}, {48, 32}}, 2 * 32 * 7 * 6 * 48},
      // "...": right-aligned leading axes, size 1 repeating (a's 1 against b's 5).
      {"...ij,...jk->...ik", {"abij", "bjk"}, "abik", {{2, 1, 3, 4}, {5, 4, 6}}, 2 * 5 * 3 * 4 * 6},
      {"b...,b->b...", {"bxy", "b"}, "bxy", {{3, 4, 5}, {3}}, 3 * 4 * 5},
      // One operand: a transpose, sums.
      {"bij->bji", {"bij"}, "bji", {{2, 3, 4}}, 0},
      {"ij->j", {"ij"}, "j", {{3, 4}}, 0},
      {"...i->i...", {"abi"}, "iab", {{2, 3, 4}}, 0},
  };
  uint32_t seed = 10;
  for (const EinsumCase& c : cases) {
    SCOPED_TRACE(c.equation);
    std::vector<TestTensor> inputs;
    std::vector<std::vector<float>> data;
    for (const Shape& s : c.shapes) {
      data.push_back(random_values(num_elements(s), seed++));
      inputs.push_back(input(s, data.back()));
    }
    const std::vector<float> want = naive_einsum(c.labels, c.out, c.shapes, data);
    for (int threads : {1, 2}) {
      const OpResult r = run_op("Einsum", inputs, equation(c.equation), 1, threads);
      ASSERT_EQ(r.outputs[0].size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(r.outputs[0][i], want[i], 1e-5) << i;
    }
    const OpResult cost = cost_of("Einsum", inputs, equation(c.equation));
    EXPECT_EQ(cost.cost.macs, c.macs);
    if (c.shapes.size() == 2) {
      EXPECT_EQ(cost.cost.flops, 2 * c.macs);
    }
  }
}

TEST(Einsum, OneOperandCostsAnAddPerElementSummed) {
  EXPECT_EQ(cost_of("Einsum", {input({3, 4}, {})}, equation("ij->j")).cost.flops, 12);
  EXPECT_EQ(cost_of("Einsum", {input({3, 4}, {})}, equation("ij->ji")).cost.flops, 0);
}

TEST(Einsum, RefusesWhatItCannotRunNamingTheEquation) {
  const TestTensor a = input({2, 3}, {}), b = input({3, 4}, {}), c = input({4, 5}, {});
  EXPECT_EQ(compile_error("Einsum", {a, b, c}, equation("ij,jk,kl->il")),
            "<test>: node 'node' (Einsum): equation 'ij,jk,kl->il': 3 operands (one or two are supported)");
  EXPECT_EQ(compile_error("Einsum", {input({3, 3}, {})}, equation("ii->i")),
            "<test>: node 'node' (Einsum): equation 'ii->i': a letter repeated in one term (a diagonal) is not "
            "supported");
  EXPECT_EQ(compile_error("Einsum", {a, b}, equation("ijk,jk->i")),
            "<test>: node 'node' (Einsum): equation 'ijk,jk->i': operand 0 has 2 axes, its term 3");
  EXPECT_EQ(compile_error("Einsum", {a, input({4, 4}, {})}, equation("ij,jk->ik")),
            "<test>: node 'node' (Einsum): equation 'ij,jk->ik': axis 0 of operand 1 has size 4, another axis of its "
            "label 3");
  EXPECT_EQ(compile_error("Einsum", {a, b}, equation("ij,jk->iz")),
            "<test>: node 'node' (Einsum): equation 'ij,jk->iz': an output letter is in no input");
  EXPECT_EQ(compile_error("Einsum", {a, b}, equation("i1,jk->ik")),
            "<test>: node 'node' (Einsum): equation 'i1,jk->ik': '1' is not a letter");
}

}  // namespace
}  // namespace minfer::test
