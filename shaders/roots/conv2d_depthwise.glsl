// Conv root, depthwise and narrow groups (2-D, NCHW; CG input channels per group, at most a few, each
// group's feeding its MG output channels): too short a reduction over channels for a GEMM. One invocation
// computes VKF_VW neighbouring outputs of a row, Y[n, m, oh, ow0 .. ow0 + VW), in fp32:
//   Y[n, m, oh, ow] = sum_{c < CG, kh, kw} X[n, m / MG * CG + c, oh*SH - PT + kh*DH, ow*SW - PL + kw*DW]
//                                          * W[m, c, kh, kw].
// The KH x KW window is unrolled from the defines; the invocation keeps its KH*KW weights in registers
// and reads each input row segment once for its VW outputs (taps in the padding read as zero).
// Neighbouring invocations take neighbouring segments of a row, so their loads and stores are coalesced.
// Every output is stored once, by VKF_OUT0, with its bias added. With VKF_PLANE_SUMS (the group sums
// a result over each plane: a squeeze-and-excitation block's pooling) workgroups take whole planes.
// Defines (u: uint, else int): VKF_N u, VKF_C u, VKF_H, VKF_W, VKF_M u, VKF_OH u, VKF_OW u, VKF_CG u
// (input channels per group), VKF_MG u (output channels per group), VKF_KH, VKF_KW, VKF_SH, VKF_SW, VKF_DH, VKF_DW, VKF_PT, VKF_PL
// (top and left pads), VKF_HAS_BIAS (0/1; the bias is input 2), VKF_VW u (outputs per invocation).
#extension GL_EXT_control_flow_attributes : enable

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

#define VKF_SEGMENTS ((VKF_OW + VKF_VW - 1u) / VKF_VW)
// Input columns one row of the window covers for VW outputs.
#define VKF_ROW_SPAN ((int(VKF_VW) - 1) * VKF_SW + (VKF_KW - 1) * VKF_DW + 1)

// Output item o: VW neighbouring outputs of one row of one plane.
void vkf_dw_item(uint o) {
  const uint ow0 = (o % VKF_SEGMENTS) * VKF_VW;
  const uint oh = (o / VKF_SEGMENTS) % VKF_OH;
  const uint nm = o / (VKF_SEGMENTS * VKF_OH);  // n * M + m
  const uint m = nm % VKF_M;
  const uint x_group = ((nm / VKF_M) * VKF_C + m / VKF_MG * VKF_CG) * uint(VKF_H * VKF_W);  // its first plane
  const int ih0 = int(oh) * VKF_SH - VKF_PT;
  const int iw0 = int(ow0) * VKF_SW - VKF_PL;

  float acc[VKF_VW];
  [[unroll]] for (uint v = 0u; v < VKF_VW; ++v) acc[v] = 0.0;
  for (uint c = 0u; c < VKF_CG; ++c) {
    const uint x_plane = x_group + c * uint(VKF_H * VKF_W);
    float weight[VKF_KH * VKF_KW];
    [[unroll]] for (int t = 0; t < VKF_KH * VKF_KW; ++t)
      weight[t] = VKF_IN1((m * VKF_CG + c) * uint(VKF_KH * VKF_KW) + uint(t));
    [[unroll]] for (int kh = 0; kh < VKF_KH; ++kh) {
      const int ih = ih0 + kh * VKF_DH;
      if (uint(ih) >= uint(VKF_H)) continue;
      const uint x_row = x_plane + uint(ih * VKF_W);
      float row[VKF_ROW_SPAN];
      [[unroll]] for (int t = 0; t < VKF_ROW_SPAN; ++t) {
        row[t] = 0.0;
        if (uint(iw0 + t) < uint(VKF_W)) row[t] = VKF_IN0(x_row + uint(iw0 + t));
      }
      [[unroll]] for (int kw = 0; kw < VKF_KW; ++kw)
        [[unroll]] for (uint v = 0u; v < VKF_VW; ++v)
          acc[v] = fma(row[int(v) * VKF_SW + kw * VKF_DW], weight[kh * VKF_KW + kw], acc[v]);
    }
  }

#if VKF_HAS_BIAS
  const float bias = VKF_IN2(m);
#else
  const float bias = 0.0;
#endif
  const uint y_row = (nm * VKF_OH + oh) * VKF_OW;
  [[unroll]] for (uint v = 0u; v < VKF_VW; ++v)
    if (ow0 + v < VKF_OW) {
      VKF_OUT0(y_row + ow0 + v, acc[v] + bias);
    }
}

#if defined(VKF_PLANE_SUMS)
// Plane sums (VKF_IPP, invocations per plane, a power of two that divides the workgroup): each
// workgroup takes whole planes, VKF_IPP consecutive invocations to a plane walking its items; each
// invocation sums what it stores (vkf_plane_acc), and the plane's invocations fold their sums in
// shared memory, in a fixed order, into the value vkf_plane_store stores.
shared float vkf_plane_part[VKF_WORKGROUP_SIZE];

void main() {
  const uint id = gl_LocalInvocationID.x, lane = id % VKF_IPP;
  const uint plane = gl_WorkGroupID.x * (uint(VKF_WORKGROUP_SIZE) / VKF_IPP) + id / VKF_IPP;
  const uint items = VKF_OH * VKF_SEGMENTS;
  if (plane < VKF_N * VKF_M)
    for (uint item = lane; item < items; item += VKF_IPP) vkf_dw_item(plane * items + item);
  vkf_plane_part[id] = vkf_plane_acc;
  barrier();
  [[unroll]] for (uint half_ = VKF_IPP / 2u; half_ > 0u; half_ /= 2u) {
    if (lane < half_) vkf_plane_part[id] += vkf_plane_part[id + half_];
    barrier();
  }
  if (lane == 0u && plane < VKF_N * VKF_M) vkf_plane_store(plane, vkf_plane_part[id]);
}
#else
void main() {
  const uint total = VKF_N * VKF_M * VKF_OH * VKF_SEGMENTS;
  const uint stride = gl_NumWorkGroups.x * uint(VKF_WORKGROUP_SIZE);
  for (uint o = gl_GlobalInvocationID.x; o < total; o += stride) vkf_dw_item(o);
}
#endif
