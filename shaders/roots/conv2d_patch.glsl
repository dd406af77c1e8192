// Conv root, direct with staged input patches (2-D, NCHW, one group, windows of more than one tap).
// Workgroup = a block of BM output channels x TH output rows x TW output columns of one image. Each step
// stages CK input channels of the block's input patch (the TH x TW outputs' windows, zero in the pads:
// PH x PW values per channel, rows PWS apart) and their BM x CK x KH x KW weights in shared memory; each
// invocation then keeps RM output channels x RW neighbouring outputs of one row in fp32 registers:
//   Y[n, m, oh, ow] = sum_{c, kh, kw} X[n, c, oh*SH - PT + kh*DH, ow*SW - PL + kw*DW] * W[m, c, kh, kw].
// Unlike the implicit GEMM (roots/conv2d.glsl), which gathers every input value once per tap of the
// window, each input value is loaded from memory once per step, and the RW outputs of an invocation
// share the row segment they read (3 taps x 4 outputs: 6 reads of shared memory, not 12).
// Invocation `tid` = channel group cm (tid / POS_THREADS: RM neighbouring channels, whose weights are
// read as vec4s, the same for all of a warp's invocations) x position `pos` (its output row and its RW
// columns). Split K across workgroups (VKF_SPLIT_GROUPS = G > 1): G workgroups share each block, part p
// walking input channels p*VKF_K_PART .. (p+1)*VKF_K_PART - 1; the last to arrive adds the parts in part
// order and stores (as roots/conv2d.glsl).
// Every output is stored once, by VKF_OUT0, with its bias added (by VKF_OUT0_X4 where an invocation's
// four outputs are four aligned neighbours).
// Defines (u: uint, else int): the Conv's shape as roots/conv2d.glsl (VKF_N .. VKF_HAS_BIAS, one group:
// VKF_CG == VKF_C, VKF_MG == VKF_M); VKF_RM u (a multiple of 4), VKF_RW u, VKF_TH u, VKF_TW u (a multiple
// of RW), VKF_BM u (a multiple of RM), VKF_CK u, VKF_PWS u (the patch's row stride, at least PW: chosen
// against bank conflicts), VKF_TILES_W u, VKF_TILES_H u (blocks across the output), VKF_BLOCKS u (all
// blocks), VKF_VEC_STORES (0/1: RW is 4 and OW and TW are multiples of 4, so an invocation's outputs are
// four aligned neighbours, all inside or all outside), VKF_SPLIT_GROUPS and VKF_K_PART (a multiple of
// VKF_CK; VKF_C without a split).
#extension GL_EXT_control_flow_attributes : enable

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

#define VKF_THREADS uint(VKF_WORKGROUP_SIZE)
#define VKF_ROW_THREADS (VKF_TW / VKF_RW)
#define VKF_POS_THREADS (VKF_TH * VKF_ROW_THREADS)
#define VKF_KHW uint(VKF_KH * VKF_KW)
#define VKF_PH uint((int(VKF_TH) - 1) * VKF_SH + (VKF_KH - 1) * VKF_DH + 1)
#define VKF_PW uint((int(VKF_TW) - 1) * VKF_SW + (VKF_KW - 1) * VKF_DW + 1)
#define VKF_PATCH (VKF_PH * VKF_PWS)
#define VKF_SEG ((int(VKF_RW) - 1) * VKF_SW + (VKF_KW - 1) * VKF_DW + 1)  // a row's values for RW outputs
#define VKF_WROW (VKF_BM / 4u + 1u)  // vec4s per (channel, tap) row of weights: BM, padded by one
#define VKF_HW uint(VKF_H * VKF_W)
#define VKF_OHW (VKF_OH * VKF_OW)

shared float vkf_x[VKF_CK * VKF_PATCH];
shared vec4 vkf_w[VKF_CK * VKF_KHW * VKF_WROW];

#define VKF_X_VALUES (VKF_CK * VKF_PH * VKF_PW)
#define VKF_W_VALUES (VKF_CK * VKF_KHW * VKF_BM)
#define VKF_X_LOADS ((VKF_X_VALUES + VKF_THREADS - 1u) / VKF_THREADS)
#define VKF_W_LOADS ((VKF_W_VALUES + VKF_THREADS - 1u) / VKF_THREADS)

// The input and weight values of the step at channel c0 that this invocation stages (zero past the
// channels of its part, in the pads and past the output channels). Neighbouring invocations load
// neighbouring values of a patch row and of a weight row.
void vkf_fetch(const uint x_image, const int ih0, const int iw0, const uint m0, const uint c0, const uint c_end,
               out float x[VKF_X_LOADS], out float w[VKF_W_LOADS]) {
  [[unroll]] for (uint i = 0u; i < VKF_X_LOADS; ++i) {
    const uint e = gl_LocalInvocationID.x + i * VKF_THREADS;
    const uint ci = e / (VKF_PH * VKF_PW), r = (e / VKF_PW) % VKF_PH, col = e % VKF_PW;
    const int ih = ih0 + int(r), iw = iw0 + int(col);
    x[i] = 0.0;
    if (e < VKF_X_VALUES && c0 + ci < c_end && uint(ih) < uint(VKF_H) && uint(iw) < uint(VKF_W))
      x[i] = VKF_IN0(x_image + (c0 + ci) * VKF_HW + uint(ih * VKF_W + iw));
  }
  [[unroll]] for (uint i = 0u; i < VKF_W_LOADS; ++i) {
    const uint e = gl_LocalInvocationID.x + i * VKF_THREADS;
    const uint j = e % (VKF_CK * VKF_KHW), m = e / (VKF_CK * VKF_KHW);  // j = channel * KHW + tap
    w[i] = 0.0;
    if (e < VKF_W_VALUES && m0 + m < VKF_M && c0 + j / VKF_KHW < c_end)
      w[i] = VKF_IN1((m0 + m) * (VKF_C * VKF_KHW) + c0 * VKF_KHW + j);
  }
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint cm = tid / VKF_POS_THREADS, pos = tid % VKF_POS_THREADS;
  const uint ty = pos / VKF_ROW_THREADS, tx = (pos % VKF_ROW_THREADS) * VKF_RW;
  for (uint t = gl_WorkGroupID.x; t < VKF_BLOCKS * uint(VKF_SPLIT_GROUPS); t += gl_NumWorkGroups.x) {
    VKF_SPLIT_PART(block, t, VKF_C);  // block; part, k_begin, k_end (input channels)
    const uint bw = block % VKF_TILES_W, bh = (block / VKF_TILES_W) % VKF_TILES_H;
    const uint n = (block / (VKF_TILES_W * VKF_TILES_H)) % VKF_N, m0 = block / (VKF_TILES_W * VKF_TILES_H * VKF_N) * VKF_BM;
    const uint oh0 = bh * VKF_TH, ow0 = bw * VKF_TW;
    const int ih0 = int(oh0) * VKF_SH - VKF_PT, iw0 = int(ow0) * VKF_SW - VKF_PL;
    const uint x_image = n * VKF_C * VKF_HW;

    float acc[VKF_RM][VKF_RW];
    [[unroll]] for (uint r = 0u; r < VKF_RM; ++r)
      [[unroll]] for (uint v = 0u; v < VKF_RW; ++v) acc[r][v] = 0.0;

    // Software pipelining: the next step's loads are issued before this step's multiply.
    float x_next[VKF_X_LOADS], w_next[VKF_W_LOADS];
    vkf_fetch(x_image, ih0, iw0, m0, k_begin, k_end, x_next, w_next);
    for (uint c0 = k_begin; c0 < k_end; c0 += VKF_CK) {
      [[unroll]] for (uint i = 0u; i < VKF_X_LOADS; ++i) {
        const uint e = tid + i * VKF_THREADS;
        if (e < VKF_X_VALUES) vkf_x[(e / VKF_PW) * VKF_PWS + e % VKF_PW] = x_next[i];
      }
      [[unroll]] for (uint i = 0u; i < VKF_W_LOADS; ++i) {
        const uint e = tid + i * VKF_THREADS;
        const uint j = e % (VKF_CK * VKF_KHW), m = e / (VKF_CK * VKF_KHW);
        if (e < VKF_W_VALUES) vkf_w[j * VKF_WROW + m / 4u][m % 4u] = w_next[i];
      }
      barrier();
      if (c0 + VKF_CK < k_end) vkf_fetch(x_image, ih0, iw0, m0, c0 + VKF_CK, k_end, x_next, w_next);
      for (uint ci = 0u; ci < VKF_CK; ++ci) {
        [[unroll]] for (int kh = 0; kh < VKF_KH; ++kh) {
          const uint x_row = ci * VKF_PATCH + (ty * uint(VKF_SH) + uint(kh * VKF_DH)) * VKF_PWS + tx * uint(VKF_SW);
          float seg[VKF_SEG];
          [[unroll]] for (int s = 0; s < VKF_SEG; ++s) seg[s] = vkf_x[x_row + uint(s)];
          [[unroll]] for (int kw = 0; kw < VKF_KW; ++kw) {
            const uint w_row = (ci * VKF_KHW + uint(kh * VKF_KW + kw)) * VKF_WROW + cm * (VKF_RM / 4u);
            [[unroll]] for (uint q = 0u; q < VKF_RM / 4u; ++q) {
              const vec4 wq = vkf_w[w_row + q];
              [[unroll]] for (uint v = 0u; v < VKF_RW; ++v) {
                const float xv = seg[int(v) * VKF_SW + kw * VKF_DW];
                acc[4u * q][v] = fma(wq.x, xv, acc[4u * q][v]);
                acc[4u * q + 1u][v] = fma(wq.y, xv, acc[4u * q + 1u][v]);
                acc[4u * q + 2u][v] = fma(wq.z, xv, acc[4u * q + 2u][v]);
                acc[4u * q + 3u][v] = fma(wq.w, xv, acc[4u * q + 3u][v]);
              }
            }
          }
        }
      }
      barrier();  // the next step overwrites the patch and the weights
    }

#if VKF_SPLIT_GROUPS > 1
    // This part's sums -> memory (vec4 q of invocation tid at q * THREADS + tid of the part's block);
    // the last part to arrive adds all of them in part order.
    const uint kPartVec4s = VKF_THREADS * VKF_RM * VKF_RW / 4u;
    const uint block_partials = block * uint(VKF_SPLIT_GROUPS) * kPartVec4s;
    [[unroll]] for (uint q = 0u; q < VKF_RM * VKF_RW / 4u; ++q) {
      vec4 v;
      [[unroll]] for (uint c = 0u; c < 4u; ++c) v[c] = acc[(4u * q + c) / VKF_RW][(4u * q + c) % VKF_RW];
      vkf_split_partials.d[block_partials + part * kPartVec4s + q * VKF_THREADS + tid] = v;
    }
    VKF_SPLIT_ARRIVE(block, uint(VKF_SPLIT_GROUPS));
    if (!vkf_split_last) continue;  // uniform: the block's last workgroup adds and stores
    [[unroll]] for (uint r = 0u; r < VKF_RM; ++r)
      [[unroll]] for (uint v = 0u; v < VKF_RW; ++v) acc[r][v] = 0.0;
    for (uint p = 0u; p < uint(VKF_SPLIT_GROUPS); ++p)
      [[unroll]] for (uint q = 0u; q < VKF_RM * VKF_RW / 4u; ++q) {
        const vec4 v = vkf_split_partials.d[block_partials + p * kPartVec4s + q * VKF_THREADS + tid];
        [[unroll]] for (uint c = 0u; c < 4u; ++c) acc[(4u * q + c) / VKF_RW][(4u * q + c) % VKF_RW] += v[c];
      }
#endif

    const uint oh = oh0 + ty, ow = ow0 + tx;
    if (oh >= VKF_OH) continue;
    [[unroll]] for (uint r = 0u; r < VKF_RM; ++r) {
      const uint m = m0 + cm * VKF_RM + r;
      if (m >= VKF_M) continue;
#if VKF_HAS_BIAS
      const float bias = VKF_IN2(m);
#else
      const float bias = 0.0;
#endif
      const uint y_row = (n * VKF_M + m) * VKF_OHW + oh * VKF_OW;
#if VKF_VEC_STORES
      if (ow < VKF_OW) {  // four aligned neighbours, all inside
        VKF_OUT0_X4(y_row + ow, vec4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]) + vec4(bias));
        continue;
      }
#endif
      [[unroll]] for (uint v = 0u; v < VKF_RW; ++v)
        if (ow + v < VKF_OW) VKF_OUT0(y_row + ow + v, acc[r][v] + bias);
    }
  }
}
