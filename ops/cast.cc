// Cast, and CastLike (to the type of its second input), between the engine's element
// types (integer targets become int64: graph/dtype.h; the real types other than float32
// are refused). Real to integer truncates toward zero, as C and numpy, and refuses a
// value outside int64; anything to bool is "not zero". 0 FLOPs.
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "graph/dtype.h"
#include "ops/op_helpers.h"

namespace minfer {
namespace {

template <typename To>
To convert(double v) {
  if constexpr (std::is_same_v<To, uint8_t>) {
    return v != 0.0;
  } else if constexpr (std::is_same_v<To, int64_t>) {
    const double t = std::trunc(v);
    if (!(std::fabs(t) < 0x1.0p63)) throw OpError(fmt::format("cannot cast {} to int64", v));
    return static_cast<int64_t>(t);
  } else {
    return static_cast<float>(v);
  }
}

template <typename From, typename To>
void cast_all(const TensorView& x, const TensorView& y) {
  const From* src = x.as<From>();
  To* dst = y.as<To>();
  for (int64_t i = 0, n = y.size(); i < n; ++i) {
    if constexpr (std::is_same_v<From, int64_t> && std::is_same_v<To, int64_t>)
      dst[i] = src[i];
    else
      dst[i] = convert<To>(static_cast<double>(src[i]));
  }
}

template <typename From>
void cast_from(const TensorView& x, const TensorView& y) {
  switch (y.type.dtype) {
    case DType::kFloat32: return cast_all<From, float>(x, y);
    case DType::kInt64: return cast_all<From, int64_t>(x, y);
    case DType::kBool: return cast_all<From, uint8_t>(x, y);
  }
}

class CastOp final : public Op {
 public:
  explicit CastOp(const Node& node) : like_(node.op_type == "CastLike") {
    // saturate (opset 19) and round_mode (24) only change casts to float8 types, refused below.
    if (like_) {
      node.attrs.check_known({"saturate", "round_mode"});
      return;
    }
    node.attrs.check_known({"to", "saturate", "round_mode"});
    if (!node.attrs.has("to")) throw OpError("attribute 'to' is required");
    const auto to = static_cast<DataType>(node.attrs.get_int("to", 0));
    // float16 and bfloat16 would be computed as float32: not what the cast means (it
    // rounds). float64 is float32 here, as the loaders read float64 constants: exact for
    // float32 and bool data (PyTorch casts a float tensor to double for
    // torch.nan_to_num), not for int64 data past 2^24, refused in infer().
    const std::optional<DType> dtype = engine_dtype(to);
    if (!dtype || to == DataType::kFloat16 || to == DataType::kBFloat16)
      throw UnsupportedError(fmt::format("casting to {} is not supported", data_type_name(to)));
    to_ = *dtype;
    to_double_ = to == DataType::kDouble;
  }
  OpTraits traits() const override {
    OpTraits t;
    t.elementwise = true;
    t.shape_only_inputs = 0b10;  // CastLike's target_type: its element type only
    return t;
  }
  std::vector<TensorType> infer(std::span<const OpInput> in) const override {
    check_input_count(in, like_ ? 2 : 1, like_ ? 2 : 1);
    if (to_double_ && in[0].dtype() == DType::kInt64)
      throw UnsupportedError(
          "casting int64 to float64 is not supported (computed as float32, it would round "
          "integers past 2^24)");
    return {{like_ ? in[1].dtype() : to_, in[0].shape()}};
  }
  OpCost cost(const OpSignature& sig) const override { return op_cost(*this, sig, 0, 0); }
  std::unique_ptr<Kernel> bind(const OpSignature& sig, const BindContext&) const override {
    return make_kernel({}, [from = sig.inputs[0].dtype()](const RunContext&, std::span<const TensorView> in,
                                                          std::span<const TensorView> out, Workspace) {
      switch (from) {
        case DType::kFloat32: return cast_from<float>(in[0], out[0]);
        case DType::kInt64: return cast_from<int64_t>(in[0], out[0]);
        case DType::kBool: return cast_from<uint8_t>(in[0], out[0]);
      }
    });
  }

 private:
  bool like_;
  bool to_double_ = false;  // `to` is float64, run as float32
  DType to_ = DType::kFloat32;
};

}  // namespace

std::unique_ptr<Op> make_cast(const Node& node) {
  return std::make_unique<CastOp>(node);
}

}  // namespace minfer
