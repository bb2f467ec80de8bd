#include "ops/broadcast.h"

#include <fmt/format.h>

#include "graph/errors.h"

namespace minfer {

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw OpError(fmt::format("shapes {} and {} do not broadcast", shape_str(a), shape_str(b)));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

BroadcastIndex::BroadcastIndex(const Shape& from, const Shape& to) : dims_(to), strides_(to.size(), 0) {
  const size_t offset = to.size() - from.size();
  int64_t stride = 1;
  for (size_t i = from.size(); i-- > 0;) {
    if (from[i] != 1) strides_[i + offset] = stride;
    stride *= from[i];
  }
}

}  // namespace minfer
