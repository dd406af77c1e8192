// FusionGroup (GroupRoot::kElementRows) -> KernelSpec (roots/element_rows.glsl). The element op's result,
// read through the group's view of it, enters the row chain as its operand kReduced R (R: the chain's
// reductions); the reduce group's ops run along each row; the chain's value is the group's one output,
// stored by the post stage at its index in the chain's domain.
#include "host/element_rows_kernel.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "host/ops/kernel_support.h"
#include "host/row_chain_builder.h"

namespace vkfuse {
namespace {

// GLSL for the element of `layout`'s base that element (row, n) of its shape reads, rows being every
// axis but the last.
std::string element_index_glsl(const StridedLayout& layout) {
  std::ostringstream out;
  const std::size_t rank = layout.shape.size();
  out << "(" << layout.offset << "u + (n) * " << layout.strides[rank - 1] << "u";
  std::int64_t below = 1;  // rows per step of axis d
  for (std::size_t d = rank - 1; d-- > 0;) {
    out << " + (((row) / " << below << "u) % " << layout.shape[d] << "u) * " << layout.strides[d] << "u";
    below *= layout.shape[d];
  }
  out << ")";
  return out.str();
}

}  // namespace

Result<ElementRowsLayout> element_rows_layout(const GraphIR& graph, const FusionGroup& group, const DevicePlan& device) {
  auto fail = [&](const std::string& why) {
    return group_error(ErrorCode::kUnsupported, group.label, why);
  };
  ElementRowsLayout layout;
  layout.element = group.anchor;
  if (layout.element == kNoNode || !graph.node(layout.element).op->element) return fail("no element op");
  if (!device.subgroup_arithmetic) return fail("the row chain needs subgroup arithmetic");
  const Node& element = graph.node(layout.element);
  std::vector<TensorInfo> infos;
  for (ValueId u : element.inputs) {
    if (!is_contiguous_value(graph, u)) return fail("'" + element.name + "' reads a strided view");
    if (graph.value(u).bytes() > device.max_binding_bytes) return fail("an input is larger than one binding");
    infos.push_back({graph.value(u).shape, graph.value(u).dtype});
  }
  const ValueId result = element.output;
  auto launch = element.op->element(infos, {graph.value(result).shape, graph.value(result).dtype}, element.op_attrs());
  if (!launch.ok()) return fail(launch.status().message());
  layout.launch = std::move(*launch);
  bool found = false;
  for (NodeId n : group.nodes) {
    if (n == layout.element) continue;
    for (ValueId u : graph.node(n).inputs) {
      const bool reads = u == result || (graph.is_view(u) && graph.view_base(u) == result);
      if (!reads) continue;
      if (found && u != layout.read) return fail("the chain reads the element op's result through two views");
      layout.read = u;
      found = true;
    }
  }
  if (!found) return fail("the chain does not read the element op's result");
  // Any other view of a value the group computes (a post op's, between the op and the view) would be
  // read as stored: the chain reads the op's result through `read` alone.
  std::set<ValueId> computed;
  for (NodeId n : group.nodes) computed.insert(graph.node(n).output);
  for (NodeId n : group.nodes)
    for (ValueId u : graph.node(n).inputs)
      if (graph.is_view(u) && u != layout.read && computed.count(graph.view_base(u)))
        return fail("the chain reads a computed value through another view");
  VKFUSE_ASSIGN_OR_RETURN(layout.view, resolve_view(graph, layout.read));
  if (layout.view.base != result) return fail("the chain reads another tensor's view");
  const Shape& domain = group.domain;
  if (domain.size() < 2 || graph.value(layout.read).shape != domain) return fail("the chain's rows are not the view's");
  layout.row_length = domain.back();
  layout.rows = shape_numel(domain) / layout.row_length;
  // The largest block of 32, 16 or 8 rows that still gives fill_workgroups / 2 workgroups (half the
  // compute units), each invocation computing one run of a block (the workgroup sized to the block, in whole
  // subgroups, up to 1024):
  // fewer rows leave the GPU idle (or, in smaller blocks, gather uncoalesced), and the op and the chain
  // run faster apart (docs/tuning-log.md, "element_rows_layout").
  for (std::int64_t rows : {32, 16, 8}) {
    if (rows * (layout.row_length + 1) * 4 > static_cast<std::int64_t>(device.shared_memory_bytes) ||
        div_up(layout.rows, rows) < fill_workgroups(device) / 2)
      continue;
    layout.rows_per_block = rows;
    break;
  }
  if (layout.rows_per_block == 0) return fail("too few rows to fill the GPU in blocks that fit shared memory");
  // Runs: neighbouring rows that are neighbouring elements of one row of the op's output.
  const StridedLayout& view = layout.view.layout;
  const std::size_t rank = view.shape.size();
  layout.run = 1;
  for (std::int64_t run : {4, 2}) {
    bool aligned = layout.launch.run_row > 0 && layout.launch.run_row % run == 0 && layout.rows_per_block % run == 0 &&
                   view.strides[rank - 2] == 1 && view.shape[rank - 2] % run == 0 && view.offset % run == 0;
    for (std::size_t d = 0; d < rank; ++d) aligned = aligned && (d == rank - 2 || view.strides[d] % run == 0);
    if (!aligned) continue;
    layout.run = run;
    break;
  }
  // Whole subgroups: a row's walk steps by the subgroup's width, which a partial last subgroup lacks.
  const std::int64_t runs = layout.rows_per_block / layout.run * layout.row_length;
  const std::int64_t width = std::max<std::int64_t>(32, device.subgroup_size);
  const std::uint32_t most = std::min<std::uint32_t>(1024, device.max_workgroup_invocations);
  layout.workgroup = static_cast<std::uint32_t>(std::min<std::int64_t>(most, div_up(runs, width) * width));
  return layout;
}

Result<GroupKernel> make_element_rows_kernel(const GraphIR& graph, const FusionGroup& group, const DevicePlan& device) {
  VKFUSE_ASSIGN_OR_RETURN(const ElementRowsLayout layout, element_rows_layout(graph, group, device));
  auto fail = [&](const std::string& why) {
    return group_error(ErrorCode::kInternal, group.label, why);
  };
  if (group.outputs.size() != 1) return fail("the chain stores more than its value");
  GroupKernel kernel;
  KernelSpec& spec = kernel.spec;
  const Node& element = graph.node(layout.element);
  spec.label = group.label;
  spec.domain = spec.reduced = group.domain;
  spec.workgroup_size = layout.workgroup;
  spec.preserve_inf_nan = device.preserve_inf_nan;
  spec.subgroup_reduce = true;
  spec.kernel_root = "roots/element_rows.glsl";

  // The element op's inputs, bound whole and contiguous; its template reads them as the root's.
  for (ValueId u : element.inputs) {
    VKFUSE_ASSIGN_OR_RETURN(KernelInput input, whole_input(graph, u, group.label));
    spec.inputs.push_back(std::move(input));
  }
  spec.kernel_element = layout.launch.root;
  spec.kernel_defines = layout.launch.defines;
  const std::int64_t blocks = div_up(layout.rows, layout.rows_per_block);
  spec.kernel_workgroups = {grid_for(blocks, 1, device), 1, 1};
  spec.kernel_defines.insert(spec.kernel_defines.end(),
                             {{"VKF_ROWS", glsl_uint(layout.rows)},
                              {"VKF_ROW_N", glsl_uint(layout.row_length)},
                              {"VKF_ROW_PITCH", glsl_uint(layout.row_length + 1)},
                              {"VKF_BQ", glsl_uint(layout.rows_per_block)},
                              {"VKF_BLOCKS", glsl_uint(blocks)},
                              {"VKF_RUN", std::to_string(layout.run)},
                              {"VKF_E_RUN", glsl_uint(layout.run)},
                              {"vkf_element_index(row, n)", element_index_glsl(layout.view.layout)}});

  // The row chain: the element (through the view), then the reduce group's nodes.
  int reductions = 0;
  for (NodeId n : group.nodes) reductions += graph.node(n).op->kind == OpKind::kReduce ? 1 : 0;
  RowChainBuilder chain(graph, group.label, group.domain, reductions);
  chain.hold(layout.read, chain.source());
  for (NodeId n : group.nodes)
    if (n != layout.element) VKFUSE_TRY(chain.add(n));
  const ValueId stored = group.outputs[0];
  if (graph.value(stored).shape != group.domain) return fail("the chain's value is not of its domain");
  VKFUSE_ASSIGN_OR_RETURN(spec.row_chain, chain.finish(stored));
  KernelOutput output;  // the post stage stores the chain's value (its reduced value 0) as it is
  output.value = {KernelOperand::Source::kReduced, 0};
  output.dtype = graph.value(stored).dtype;
  output.pre_stage = false;
  output.placement = output_placement(group, stored);
  spec.outputs.push_back(output);

  // Bindings in the code generator's order: the element op's inputs, the chain's stored inputs, the output.
  std::set<ValueId> bound;
  auto bind = [&](ValueId v) { return bind_once(graph, v, group.label, device, bound, kernel); };
  for (ValueId v : element.inputs) VKFUSE_TRY(bind(v));
  for (ValueId v : chain.stored()) VKFUSE_TRY(bind(v));
  VKFUSE_TRY(check_storage(graph, stored, group.label, device));
  kernel.bound_values.push_back(output_binding(group, stored));
  return kernel;
}

}  // namespace vkfuse
