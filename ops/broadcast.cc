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

BroadcastRow broadcast_row(const Shape& out, const std::vector<Shape>& inputs) {
  enum Status { kUnknown, kContiguous, kRepeated };
  std::vector<Status> status(inputs.size(), kUnknown);
  BroadcastRow row;
  for (size_t d = out.size(); d-- > 0;) {
    if (out[d] == 1) continue;  // either reading
    std::vector<Status> next = status;
    bool same = true;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const Shape& in = inputs[k];
      const size_t offset = out.size() - in.size();
      const Status s = d >= offset && in[d - offset] == out[d] ? kContiguous : kRepeated;
      if (next[k] != kUnknown && next[k] != s) same = false;
      next[k] = s;
    }
    if (!same) break;
    status = next;
    row.length *= out[d];
  }
  for (Status s : status) row.strides.push_back(s == kContiguous ? 1 : 0);
  return row;
}

}  // namespace minfer
