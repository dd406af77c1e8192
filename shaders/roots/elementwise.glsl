// Elementwise root. Each invocation computes VKF_VEC consecutive elements of the group's domain:
// inputs and outputs with the domain's own shape move as vectors, broadcast inputs are gathered per
// lane, and the last partial vector takes the scalar path. A grid-stride loop lets any size run
// within the device's workgroup-count limit.
//
// Hooks filled by the code generator:
//   vkf_lane(...)      the fused chain for one element (inputs in, outputs out)
//   @vkf_vector_body   loads VKF_VEC lanes, calls vkf_lane per lane, stores vectors
//   @vkf_scalar_body   same for one element `i`

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

//@vkf_lane_function

void main() {
  const uint vkf_stride = gl_NumWorkGroups.x * uint(VKF_WORKGROUP_SIZE);
  for (uint t = gl_GlobalInvocationID.x; t < VKF_NUM_VECS; t += vkf_stride) {
    const uint base = t * VKF_VEC;
    if (base + VKF_VEC <= VKF_NUMEL) {
      //@vkf_vector_body
    } else {
      for (uint l = 0u; l < VKF_VEC; ++l) {
        const uint i = base + l;
        if (i < VKF_NUMEL) {
          //@vkf_scalar_body
        }
      }
    }
  }
}
