#include "codegen/kernel_root.h"

#include "codegen/row_chain.h"
#include "codegen/glsl_types.h"
#include "codegen/shader_library.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace vkfuse {

namespace {

bool is_float(DType dtype) { return dtype == DType::kF32 || dtype == DType::kF16; }

// VKF_IN<k>_X4(i): elements i .. i + 3 of pre-fused argument k (i a multiple of 4) as a vec4, the
// chain `name` run on each lane of the stage's vector loads; VKF_IN<k>_X4_SHARED 1 where an operand
// of the chain is loaded once for the four (a per-channel operand where they lie in one plane).
std::string load_x4(std::size_t k, const Stage& load, const std::string& name) {
  std::ostringstream out;
  for (std::size_t j = 0; j < load.inputs.size(); ++j)
    if (load.access[j] == InputAccess::kBroadcast && load.lane_access(j) == LaneAccess::kShared) {
      out << "#define VKF_IN" << k << "_X4_SHARED 1\n";
      break;
    }
  const std::string fn = "vkf_load" + std::to_string(k) + "_x4";
  out << "vec4 " << fn << "(uint i) {\n";
  std::istringstream loads(load.vector_loads("i", "i / 4u"));
  for (std::string line; std::getline(loads, line);) out << "  " << line << "\n";
  out << "  vec4 r;\n";
  for (std::uint32_t l = 0; l < kStageVec; ++l) {
    std::vector<std::string> args = load.call_inputs("_" + std::to_string(l));
    args.push_back("r[" + std::to_string(l) + "]");
    out << "  " << join_call(name, args) << "\n";
  }
  out << "  return r;\n}\n#define VKF_IN" << k << "_X4(i) " << fn << "(i)\n";
  return out.str();
}

}  // namespace

Result<std::string> kernel_root_body(const KernelSpec& spec, const Stage& pre, const std::vector<LoadStages>& loads,
                                     const Stage* rows, const Stage& post, int first_output_binding) {
  std::ostringstream out;
  bool raw_inputs = false;
  const std::string* split_groups = nullptr;
  for (const auto& [name, value] : spec.kernel_defines) {
    out << "#define " << name << " " << value << "\n";
    raw_inputs = raw_inputs || (name == "VKF_RAW_INPUTS" && value == "1");
    if (name == "VKF_SPLIT_GROUPS") split_groups = &value;
  }
  if (split_groups) {
    // The roots that may split K across workgroups (GEMM, coopmat, Conv) walk their loop index t as a
    // tile and a part of K. Without a split the bounds are constants, not t % 1: from that, the NVIDIA
    // driver (580.159.04) gave vit_b_16's 197x768x3072 coopmat MatMuls 53 registers instead of 69 and
    // 0.055 ms instead of 0.035.
    out << "// VKF_SPLIT_PART(item, t, k_total): declares `item` (t's tile), part (its part of K) and k_begin ..\n"
        << "// k_end (the k's it walks: whole VKF_K_PART steps, up to k_total); a tile's parts follow each other.\n";
    if (*split_groups != "1")
      out << "#define VKF_SPLIT_PART(item, t, k_total) const uint item = (t) / uint(VKF_SPLIT_GROUPS), \\\n"
          << "  part = (t) % uint(VKF_SPLIT_GROUPS), k_begin = part * VKF_K_PART, k_end = min((k_total), k_begin + VKF_K_PART)\n";
    else
      out << "#define VKF_SPLIT_PART(item, t, k_total) const uint item = (t), part = 0u, k_begin = 0u, k_end = (k_total)\n";
  }
  std::set<std::pair<int, bool>> declared;
  for (std::size_t k = 0; k < spec.inputs.size(); ++k)
    for (int b = pre.binding[k]; b < pre.binding[k] + static_cast<int>(spec.inputs[k].bindings()); ++b)
      if (spec.inputs[k].image) {
        if (declared.insert({b, false}).second) out << image_declaration(b, spec.inputs[k]);
      } else if (declared.insert({b, false}).second)
        out << "layout(std430, set = 0, binding = " << b << ") restrict readonly buffer VkfBuf" << b << " { "
            << glsl_storage_type(spec.inputs[k].dtype) << " d[]; } vkf_b" << b << ";\n";
  for (const LoadStages& load : loads) {
    if (load.element) load.element->declare(out, declared);
    load.chain.declare(out, declared);
  }
  if (rows) rows->declare(out, declared);
  post.declare(out, declared);
  for (std::size_t k = 0; k < spec.outputs.size(); ++k) {
    const int b = first_output_binding + static_cast<int>(k);
    if (!spec.outputs[k].image_format.empty()) {
      out << "layout(set = 0, binding = " << b << ", " << spec.outputs[k].image_format
          << ") uniform restrict writeonly image2D vkf_out" << k << "_image;\n#define VKF_OUT" << k
          << "_TEXEL(xy, v) imageStore(vkf_out" << k << "_image, ivec2(xy), (v))\n";
      continue;
    }
    out << "layout(std430, set = 0, binding = " << b << ") restrict writeonly buffer VkfBuf" << b << " { "
        << glsl_storage_type(spec.outputs[k].dtype) << " d[]; } vkf_out" << k << ";\n";
    out << "layout(std430, set = 0, binding = " << b << ") restrict writeonly buffer VkfBuf" << b << "V { "
        << glsl_storage_vec4(spec.outputs[k].dtype) << " d[]; } vkf_out" << k << "v;\n";
  }
  if (spec.split_counters > 0) {
    const int b = first_output_binding + static_cast<int>(spec.outputs.size());
    out << "layout(std430, set = 0, binding = " << b << ") coherent buffer VkfSplitCounters { uint d[]; } vkf_split_counters;\n"
        << "layout(std430, set = 0, binding = " << b + 1
        << ") coherent buffer VkfSplitPartials { vec4 d[]; } vkf_split_partials;\n"
        << "layout(std430, set = 0, binding = " << b + 1
        << ") coherent buffer VkfSplitPartialsF { float d[]; } vkf_split_partials_f;  // the same, as floats\n"
        // The roots that split K across workgroups share this hand-off (a macro, not a function: shared
        // variables are laid out in the order the code first uses them, see roots/gemm_coopmat.glsl).
        << "// VKF_SPLIT_ARRIVE(item, parts): once this workgroup's part of `item` is in vkf_split_partials,\n"
        << "// it counts itself in item's counter; vkf_split_last is then true in the last of the parts to\n"
        << "// arrive, which sees the others' sums and sets the counter back to zero for the next dispatch.\n"
        << "// Uniform control flow only (barriers).\n"
        << "shared bool vkf_split_last;\n"
        << "#define VKF_SPLIT_ARRIVE(item, parts) \\\n"
        << "  memoryBarrierBuffer(); \\\n"
        << "  barrier(); \\\n"
        << "  if (gl_LocalInvocationIndex == 0u) vkf_split_last = atomicAdd(vkf_split_counters.d[item], 1u) == (parts) - 1u; \\\n"
        << "  barrier(); \\\n"
        << "  if (vkf_split_last && gl_LocalInvocationIndex == 0u) vkf_split_counters.d[item] = 0u; \\\n"
        << "  memoryBarrierBuffer()\n"
        // Under the Vulkan memory model (roots that enable GL_KHR_memory_scope_semantics, as the coopmat
        // root must) barrier() orders shared memory only, so the other invocations' partial sums would not
        // be ordered before invocation 0's count, nor the count before their reads of the other parts: the
        // barriers carry the buffers too, and the count releases and acquires them. The flag is a float of
        // the root's own shared memory (see roots/gemm_coopmat.glsl for why not vkf_split_last).
        << "// VKF_SPLIT_ARRIVE_SCOPED(item, parts, flag): the same for roots on the Vulkan memory model; the\n"
        << "// shared float `flag` is then non-zero in the last part to arrive.\n"
        << "#define VKF_SPLIT_BARRIER() controlBarrier(gl_ScopeWorkgroup, gl_ScopeQueueFamily, \\\n"
        << "  gl_StorageSemanticsBuffer | gl_StorageSemanticsShared, \\\n"
        << "  gl_SemanticsAcquireRelease | gl_SemanticsMakeAvailable | gl_SemanticsMakeVisible)\n"
        << "#define VKF_SPLIT_ARRIVE_SCOPED(item, parts, flag) \\\n"
        << "  VKF_SPLIT_BARRIER(); \\\n"
        << "  if (gl_LocalInvocationIndex == 0u) \\\n"
        << "    flag = atomicAdd(vkf_split_counters.d[item], 1u, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, \\\n"
        << "                     gl_SemanticsAcquireRelease | gl_SemanticsMakeAvailable | gl_SemanticsMakeVisible) == (parts) - 1u \\\n"
        << "               ? 1.0 : 0.0; \\\n"
        << "  VKF_SPLIT_BARRIER(); \\\n"
        << "  if ((flag) != 0.0 && gl_LocalInvocationIndex == 0u) vkf_split_counters.d[item] = 0u\n";
  }
  std::set<int> raw_declared;  // bindings with their uvec4 view declared
  for (std::size_t k = 0; k < spec.inputs.size(); ++k) {
    const KernelInput& input = spec.inputs[k];
    const bool x4 = k < spec.kernel_vec4_inputs.size() && spec.kernel_vec4_inputs[k] && is_float(input.dtype);
    if (input.load >= 0) {
      // Pre-fusion: the chain at element i of the argument.
      const LoadStages& stages = loads[static_cast<std::size_t>(input.load)];
      const Stage& load = stages.chain;
      const KernelLoad& chain = spec.loads[static_cast<std::size_t>(input.load)];
      if (chain.element) {
        // The producer's element template, over its own bindings.
        const KernelElement& element = *chain.element;
        for (const auto& [name, value] : element.defines) out << "#define " << name << " " << value << "\n";
        for (std::size_t j = 0; j < element.inputs.size(); ++j)
          out << "#define VKF_E_IN" << j << "(i) "
              << glsl_load(element.inputs[j].dtype, stages.element->buffer(j) + ".d[i]") << "\n";
        VKFUSE_ASSIGN_OR_RETURN(std::string_view text, find_shader(element.root));
        out << "// ---- " << element.root << "\n" << text << "\n";
      }
      const std::string name = "vkf_chain" + std::to_string(k);
      std::vector<std::string> leading;
      if (chain.element) leading.push_back("in float red0");
      out << load.function(name, leading, {{chain.value, input.dtype}}) << "\n";
      const char* type = glsl_register_type(input.dtype);
      out << type << " vkf_load" << k << "(uint i) {\n";
      std::istringstream loads_at_i(load.scalar_loads("i"));
      for (std::string line; std::getline(loads_at_i, line);) out << "  " << line << "\n";
      std::vector<std::string> args = load.call_inputs("");
      if (chain.element) args.insert(args.begin(), "vkf_element(i)");
      args.push_back("r");
      out << "  " << type << " r;\n  " << join_call(name, args) << "\n  return r;\n}\n";
      out << "#define VKF_IN" << k << "(i) vkf_load" << k << "(i)\n";
      if (x4 && !chain.element) out << load_x4(k, load, name);
      continue;
    }
    if (input.image) {  // sampled: no vector or raw views
      out << "#define VKF_IN" << k << "(i) " << pre.image_load(k, "(i)") << "\n";
      continue;
    }
    const int first = pre.binding[k];
    const int chunks = static_cast<int>(input.bindings());
    if (chunks == 1) {
      out << "#define VKF_IN" << k << "(i) " << glsl_load(input.dtype, pre.buffer(k) + ".d[i]") << "\n";
      if (x4) {
        pre.declare_vec4_view(out, declared, k);
        out << "#define VKF_IN" << k << "_X4(i) vec4(" << pre.buffer(k) << "v.d[(i) / 4u])\n";
      }
      // Roots that load whole 16-byte runs (roots/gemm_coopmat.glsl, roots/gemm_tiled.glsl) ask for
      // VKF_RAW_INPUTS 1: the raw 16 bytes from element i on (i a multiple of 16 / element size), the same
      // binding seen as uvec4s, declared once where inputs share a binding (Gemm(x, x)).
      if (raw_inputs && raw_declared.insert(first).second)
        out << "layout(std430, set = 0, binding = " << first << ") restrict readonly buffer VkfBuf" << first
            << "Q { uvec4 d[]; } vkf_b" << first << "q;\n";
      if (raw_inputs)
        out << "#define VKF_IN" << k << "_RAW 1\n#define VKF_IN" << k << "_RAW16(i) vkf_b" << first << "q.d[(i) / "
            << 16 / dtype_size(input.dtype) << "u]\n";
      continue;
    }
    // A chunked tensor: element i lives in chunk i / chunk_elements.
    const std::string size = std::to_string(input.chunk_elements) + "u";
    out << glsl_register_type(input.dtype) << " vkf_in" << k << "_load(uint i) {\n  const uint c = i / " << size
        << ", j = i - c * " << size << ";\n";
    for (int c = 0; c < chunks - 1; ++c)
      out << "  if (c == " << c << "u) return " << glsl_load(input.dtype, "vkf_b" + std::to_string(first + c) + ".d[j]")
          << ";\n";
    out << "  return " << glsl_load(input.dtype, "vkf_b" + std::to_string(first + chunks - 1) + ".d[j]") << ";\n}\n";
    out << "#define VKF_IN" << k << "(i) vkf_in" << k << "_load(i)\n";
  }
  if (rows) out << row_chain_code(spec, *rows);
  const KernelOperand anchor{KernelOperand::Source::kReduced, 0};
  const bool plain = spec.post_ops.empty() && spec.outputs.size() == 1 && !spec.outputs[0].plane_sum &&
                     spec.outputs[0].value.source == anchor.source && spec.outputs[0].value.index == 0;
  // VKF_OUT0(i, v) stores element i; VKF_OUT0_X4(i, v) elements i .. i + 3 (a vec4; i a multiple of 4, all
  // four in the output), with vector loads and stores where the layouts allow (float results: the GEMM
  // and Conv roots use it).
  static const char* kLanes[] = {"v.x", "v.y", "v.z", "v.w"};
  const bool texels = std::any_of(spec.outputs.begin(), spec.outputs.end(),
                                  [](const KernelOutput& o) { return !o.image_format.empty(); });
  if (texels) {  // the template stores its texels itself, through VKF_OUT<k>_TEXEL
    if (!plain) return make_error(ErrorCode::kInternal, spec.label + ": a root writing an image stores nothing else");
    return out.str();
  }
  if (plain) {
    out << "#define VKF_OUT0(i, v) vkf_out0.d[" << spec.outputs[0].placement.index("i") << "] = "
        << glsl_store(spec.outputs[0].dtype, "(v)") << "\n";
    if (!is_float(spec.outputs[0].dtype)) return out.str();  // (the vector roots store floats)
    std::string lanes[kStageVec];
    for (std::uint32_t l = 0; l < kStageVec; ++l) lanes[l] = kLanes[l];
    out << "void vkf_store0_x4(uint i, vec4 v) {\n  "
        << store_lanes("vkf_out0", spec.outputs[0].dtype, spec.outputs[0].placement, "i", "i / 4u", lanes)
        << "}\n#define VKF_OUT0_X4(i, v) vkf_store0_x4((i), (v))\n";
    return out.str();
  }
  std::vector<std::pair<KernelOperand, DType>> results;
  for (const KernelOutput& output : spec.outputs) results.push_back({output.value, output.dtype});
  out << post.function("vkf_post", {"in float red0"}, results) << "\n";
  const auto folded = std::find_if(spec.outputs.begin(), spec.outputs.end(), [](const KernelOutput& o) { return o.plane_sum; });
  if (folded != spec.outputs.end()) {
    // Plane sums: each invocation adds what it stores to its own sum; the root folds the sums of a
    // plane's invocations and stores the plane's value through vkf_plane_store.
    const auto k = static_cast<std::size_t>(folded - spec.outputs.begin());
    out << "#define VKF_PLANE_SUMS 1\nfloat vkf_plane_acc = 0.0;\n"
        << "void vkf_plane_store(uint plane, float sum) {\n  vkf_out" << k << ".d[" << folded->placement.index("plane")
        << "] = " << glsl_store(folded->dtype, "sum * " + glsl_float_literal(folded->plane_scale)) << ";\n}\n";
  }
  out << "void vkf_store0(uint i, float v) {\n";
  std::istringstream post_loads(post.scalar_loads("i"));
  for (std::string line; std::getline(post_loads, line);) out << "  " << line << "\n";
  std::vector<std::string> args{"v"};
  for (const std::string& a : post.call_inputs("")) args.push_back(a);
  for (std::size_t k = 0; k < spec.outputs.size(); ++k) {
    out << "  " << glsl_register_type(spec.outputs[k].dtype) << " o" << k << ";\n";
    args.push_back("o" + std::to_string(k));
  }
  out << "  " << join_call("vkf_post", args) << "\n";
  for (std::size_t k = 0; k < spec.outputs.size(); ++k)
    if (spec.outputs[k].plane_sum)
      out << "  vkf_plane_acc += float(o" << k << ");\n";
    else
      out << "  vkf_out" << k << ".d[" << spec.outputs[k].placement.index("i") << "] = "
          << glsl_store(spec.outputs[k].dtype, "o" + std::to_string(k)) << ";\n";
  out << "}\n#define VKF_OUT0(i, v) vkf_store0((i), (v))\n";
  if (folded != spec.outputs.end()) return out.str();  // (the plane-summing root stores one element at a time)
  out << "void vkf_store0_x4(uint i, vec4 v) {\n";
  std::istringstream chain(post.vector_chain("vkf_post", {kLanes, kLanes + kStageVec}, spec.outputs, "o", "i", "i / 4u"));
  for (std::string line; std::getline(chain, line);) out << "  " << line << "\n";
  out << "}\n#define VKF_OUT0_X4(i, v) vkf_store0_x4((i), (v))\n";
  return out.str();
}

}  // namespace vkfuse
