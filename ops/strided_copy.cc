#include "ops/strided_copy.h"

#include <array>
#include <cstring>
#include <stdexcept>

#include "ops/kernels/threads.h"
#include "ops/kernels/transpose.h"

namespace minfer {
namespace {

// Elements of `Bytes` bytes, the axes walked like an odometer, both offsets following.
// Strides may be negative: the offsets are computed in signed bytes.
template <size_t Bytes>
void copy_elements(const std::byte* src, std::byte* dst, int64_t count, int64_t src_stride, int64_t dst_stride) {
  constexpr auto kBytes = static_cast<int64_t>(Bytes);
  for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * dst_stride * kBytes, src + i * src_stride * kBytes, Bytes);
}

template <size_t Bytes>
void repeat_element(const std::byte* src, std::byte* dst, int64_t count) {
  for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * Bytes, src, Bytes);
}

}  // namespace

Shape dense_strides(const Shape& shape) {
  Shape s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

StridedCopy::StridedCopy(const Shape& dims, const Shape& src_strides, const Shape& dst_strides, int64_t bytes)
    : bytes_(bytes) {
  if (src_strides.size() != dims.size() || dst_strides.size() != dims.size())
    throw std::invalid_argument("StridedCopy: dims and strides differ in rank");
  std::vector<Axis> axes;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 0) empty_ = true;
    elements_ *= dims[d];
    if (dims[d] != 1) axes.push_back({dims[d], src_strides[d], dst_strides[d]});
  }
  // Innermost first; an axis whose strides are its inner neighbour's times that one's
  // size, on both sides, continues it: one axis of both sizes' product.
  std::vector<Axis> merged;
  for (size_t d = axes.size(); d-- > 0;) {
    const Axis a = axes[d];
    if (!merged.empty()) {
      Axis& in = merged.back();
      if (a.src_stride == in.src_stride * in.size && a.dst_stride == in.dst_stride * in.size) {
        in.size *= a.size;
        continue;
      }
    }
    merged.push_back(a);
  }
  if (merged.empty()) merged.push_back({1, 1, 1});
  inner_ = merged.front();
  merged.erase(merged.begin());
  if (inner_.src_stride == 1 && inner_.dst_stride == 1) {
    kind_ = Inner::kRows;
  } else if (inner_.src_stride == 0 && inner_.dst_stride == 1) {
    kind_ = Inner::kRepeat;
  } else {
    kind_ = Inner::kElements;
    // The destination contiguous along the inner axis and the source along another: 2-D
    // transposes of that pair, 4x4 tiles at a time.
    if (bytes == 4 && inner_.dst_stride == 1)
      for (size_t d = 0; d < merged.size(); ++d)
        if (merged[d].src_stride == 1) {
          across_ = merged[d];
          merged.erase(merged.begin() + static_cast<std::ptrdiff_t>(d));
          kind_ = Inner::kTranspose;
          break;
        }
  }
  outer_.assign(merged.rbegin(), merged.rend());  // outermost first
  if (outer_.size() > kMaxAxes) throw std::invalid_argument("StridedCopy: too many axes");
}

void StridedCopy::run(const void* src_data, void* dst_data, int64_t src_offset, int64_t dst_offset, int threads) const {
  if (empty_) return;
  const auto* src = static_cast<const std::byte*>(src_data);
  auto* dst = static_cast<std::byte*>(dst_data);
  // A team splits the outermost loop, or with none the inner run, into contiguous ranges.
  const int64_t split = outer_.empty() ? inner_.size : outer_[0].size;
  const int team = kernels::threads_worth_starting(elements_, split, threads, kernels::Work::kStreaming);
  if (team <= 1) return run_range(src, dst, src_offset, dst_offset, 0, split);
#pragma omp parallel num_threads(team)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
    run_range(src, dst, src_offset, dst_offset, split * t / n, split * (t + 1) / n);
  }
}

void StridedCopy::run_range(const std::byte* src, std::byte* dst, int64_t s, int64_t d, int64_t begin,
                            int64_t end) const {
  if (begin >= end) return;
  // The split axis restricted to [begin, end).
  const Axis& split = outer_.empty() ? inner_ : outer_[0];
  s += begin * split.src_stride;
  d += begin * split.dst_stride;
  const int64_t inner = outer_.empty() ? end - begin : inner_.size;
  const auto outer_size = [&](size_t k) { return k == 0 ? end - begin : outer_[k].size; };
  std::array<int64_t, kMaxAxes> idx{};
  const size_t n = outer_.size();
  for (;;) {
    const std::byte* from = src + s * bytes_;
    std::byte* to = dst + d * bytes_;
    switch (kind_) {
      case Inner::kRows: std::memcpy(to, from, static_cast<size_t>(inner * bytes_)); break;
      case Inner::kRepeat:
        if (bytes_ == 4)
          repeat_element<4>(from, to, inner);
        else if (bytes_ == 8)
          repeat_element<8>(from, to, inner);
        else
          for (int64_t i = 0; i < inner; ++i) std::memcpy(to + i * bytes_, from, static_cast<size_t>(bytes_));
        break;
      case Inner::kTranspose:
        // Row i of the source's pair is inner index i; its contiguous columns j the
        // destination's rows across_.dst_stride apart.
        kernels::transpose(reinterpret_cast<const float*>(from), inner_.src_stride, inner, across_.size,
                           reinterpret_cast<float*>(to), across_.dst_stride);
        break;
      case Inner::kElements:
        if (bytes_ == 4)
          copy_elements<4>(from, to, inner, inner_.src_stride, inner_.dst_stride);
        else if (bytes_ == 8)
          copy_elements<8>(from, to, inner, inner_.src_stride, inner_.dst_stride);
        else
          for (int64_t i = 0; i < inner; ++i)
            std::memcpy(to + i * inner_.dst_stride * bytes_, from + i * inner_.src_stride * bytes_,
                        static_cast<size_t>(bytes_));
        break;
    }
    size_t k = n;
    for (; k-- > 0;) {
      if (++idx[k] < outer_size(k)) {
        s += outer_[k].src_stride;
        d += outer_[k].dst_stride;
        break;
      }
      s -= (outer_size(k) - 1) * outer_[k].src_stride;
      d -= (outer_size(k) - 1) * outer_[k].dst_stride;
      idx[k] = 0;
    }
    if (k == static_cast<size_t>(-1)) return;
  }
}

}  // namespace minfer
