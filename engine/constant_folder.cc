#include "engine/constant_folder.h"

#include <fmt/format.h>

#include "ops/kernels/workspace.h"

namespace minfer {

std::vector<Tensor> fold_constant_node(const Op& op, const OpSignature& sig, MemoryBudget& budget) {
  const std::unique_ptr<Kernel> kernel = op.bind(sig, BindContext{});
  std::vector<Tensor> outputs;
  std::vector<TensorView> in, out;
  for (const OpInput& i : sig.inputs) {
    // Kernels never write their inputs; TensorView is one type for both directions.
    void* data = i.constant ? const_cast<std::byte*>(i.constant->data()) : nullptr;
    in.push_back({data, i.type});
  }
  for (const OpOutput& o : sig.outputs) {
    if (!o.present) {
      outputs.emplace_back();
      out.push_back({nullptr, o.type});
      continue;
    }
    budget.reserve(tensor_bytes(num_elements(o.type.shape), dtype_size(o.type.dtype)),
                   fmt::format("folding a {} tensor of shape {}", dtype_name(o.type.dtype), shape_str(o.type.shape)));
    outputs.emplace_back(o.type.dtype, o.type.shape);
    out.push_back({outputs.back().mutable_data(), o.type});
  }
  // The workspace, then the one thread's kept scratch.
  const int64_t scratch = kernel->facts().workspace_bytes, own = whole_line_bytes(kernel->facts().thread_scratch_bytes);
  budget.check(checked_add({scratch, own}), "folding's scratch");
  AlignedBuffer workspace(checked_add({whole_line_bytes(scratch), own}));
  kernel->run(RunContext{}, in, out,
              Workspace({workspace.data(), static_cast<size_t>(scratch)},
                        ThreadScratch(workspace.data() + whole_line_bytes(scratch), 1, own)));
  return outputs;
}

}  // namespace minfer
