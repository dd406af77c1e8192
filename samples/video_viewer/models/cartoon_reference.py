"""Cartoon filter in plain numpy: the ground truth that cartoon.onnx is checked against.

make_cartoon.py builds the ONNX graph from the constants and kernels defined here, so the two cannot
drift apart; this file deliberately has its own convolution, pooling and resize code (no ONNX
runtime) so that it is an independent second implementation of the same math.

    python3 cartoon_reference.py in.npy out.npy    # in.npy: [1,3,H,W] or [H,W,3], RGB in 0..1

The output is written in the layout of the input, so a [1,3,H,W] result compares directly with
`vkfuse run ... --output-dir`'s cartoon.npy.
"""
import sys

import numpy as np

# --- Parameters (shared with make_cartoon.py) -------------------------------------------------------

BLUR_SIZE = 5            # Gaussian taps per axis; odd so the blur has a centre pixel
BLUR_SIGMA = 1.0
LUMA = np.array([0.299, 0.587, 0.114])  # Rec. 601: edges should follow perceived brightness
EDGE_THRESHOLD = 0.1     # gradient (luma per pixel) at which the edge mask is half on
EDGE_SHARPNESS = 50.0    # steep enough that smooth gradients stay unlined
POOL = 4                 # downsample factor of the flat-colour path
COARSE_WEIGHT = 0.5      # share of the coarse (pooled) colour in the mix
SATURATION = 1.25        # cartoons look flat and vivid: push colours away from grey
LEVELS = 6               # colour levels per channel
STEP_SHARPNESS = 12.0    # staircase steepness, in units of one level


def gaussian_kernel():
    r = np.arange(BLUR_SIZE) - BLUR_SIZE // 2
    g = np.exp(-(r * r) / (2.0 * BLUR_SIGMA ** 2))
    g /= g.sum()
    return np.outer(g, g)  # [5, 5], sums to 1


def sobel_kernels():
    # Divided by 8 so a ramp of slope s (per pixel) gives gradient s: the threshold reads in luma units.
    sx = np.array([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]]) / 8.0
    return sx, sx.T.copy()


def mix_matrix():
    """[3, 6]: out = S (w_fine * fine + w_coarse * coarse), S the saturation matrix about luma."""
    s = SATURATION * np.eye(3) + (1.0 - SATURATION) * np.outer(np.ones(3), LUMA)
    return np.concatenate([(1.0 - COARSE_WEIGHT) * s, COARSE_WEIGHT * s], axis=1)


def step_offsets():
    """Thresholds between levels, in units of one level: 0.5, 1.5, ... LEVELS - 1.5."""
    return np.arange(LEVELS - 1) + 0.5


# --- Building blocks, on float64 [C, H, W] arrays ---------------------------------------------------

def sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # overflow-free form


def pad_edge(x, p):
    return np.pad(x, ((0, 0), (p, p), (p, p)), mode="edge")


def correlate(x, k):
    """Valid 2-D cross-correlation (ONNX Conv's convention) of every channel of x with k [kh, kw]."""
    kh, kw = k.shape
    h, w = x.shape[1] - kh + 1, x.shape[2] - kw + 1
    out = np.zeros((x.shape[0], h, w))
    for i in range(kh):
        for j in range(kw):
            out += k[i, j] * x[:, i:i + h, j:j + w]
    return out


def average_pool_ceil(x, k):
    """AveragePool kernel=stride=k, ceil_mode=1, no pads, count_include_pad=0: the last window of an
    odd size holds fewer pixels and is divided by how many it holds."""
    c, h, w = x.shape
    oh, ow = -(-h // k), -(-w // k)
    padded = np.zeros((c, oh * k, ow * k))
    padded[:, :h, :w] = x
    count = np.zeros((oh * k, ow * k))
    count[:h, :w] = 1.0
    sums = padded.reshape(c, oh, k, ow, k).sum(axis=(2, 4))
    return sums / count.reshape(oh, k, ow, k).sum(axis=(1, 3))


def linear_taps(n_out, n_in):
    """ONNX Resize linear, half_pixel: source coordinate (i + 0.5) * n_in / n_out - 0.5, its two
    neighbours clamped to the input (which is what ONNX's edge handling amounts to)."""
    src = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
    lo = np.floor(src)
    frac = src - lo
    lo = lo.astype(np.int64)
    return np.clip(lo, 0, n_in - 1), np.clip(lo + 1, 0, n_in - 1), frac


def resize_linear(x, h, w):
    y0, y1, fy = linear_taps(h, x.shape[1])
    x0, x1, fx = linear_taps(w, x.shape[2])
    rows = x[:, y0, :] * (1.0 - fy)[None, :, None] + x[:, y1, :] * fy[None, :, None]
    return rows[:, :, x0] * (1.0 - fx) + rows[:, :, x1] * fx


# --- The filter -------------------------------------------------------------------------------------

def cartoon_chw(x):
    """[3, H, W] float -> [3, H, W] float64; step for step what cartoon.onnx computes."""
    x = np.asarray(x, dtype=np.float64)
    _, h, w = x.shape
    # Edge padding (not zeros) so the border neither darkens in the blur nor draws a frame of edges.
    blur = correlate(pad_edge(x, BLUR_SIZE // 2), gaussian_kernel())

    luma = np.tensordot(LUMA, blur, axes=1)[None]
    sx, sy = sobel_kernels()
    lp = pad_edge(luma, 1)
    gx, gy = correlate(lp, sx), correlate(lp, sy)
    magnitude = np.sqrt(gx * gx + gy * gy + 1e-6)  # epsilon keeps sqrt off its infinite slope at 0
    edges = sigmoid(EDGE_SHARPNESS * (magnitude - EDGE_THRESHOLD))

    coarse = resize_linear(average_pool_ceil(blur, POOL), h, w)
    mixed = np.tensordot(mix_matrix(), np.concatenate([blur, coarse]), axes=1)

    # A smooth staircase instead of floor(): hard steps flip on tiny differences (sensor noise between
    # video frames, or rounding between two implementations), a sigmoid step only moves a little.
    t = mixed[:, None] * (LEVELS - 1) - step_offsets()[None, :, None, None]
    quantized = sigmoid(STEP_SHARPNESS * t).sum(axis=1) / (LEVELS - 1)

    return np.clip(quantized * (1.0 - edges), 0.0, 1.0)


def cartoon(rgb):
    """rgb: float [H, W, 3] in 0..1 -> float32 [H, W, 3] in 0..1."""
    rgb = np.asarray(rgb)
    if rgb.ndim != 3 or rgb.shape[2] != 3:
        raise ValueError(f"expected [H, W, 3], got {list(rgb.shape)}")
    return cartoon_chw(rgb.transpose(2, 0, 1)).transpose(1, 2, 0).astype(np.float32)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: cartoon_reference.py in.npy out.npy  (in: [1,3,H,W] or [H,W,3])", file=sys.stderr)
        return 2
    x = np.load(argv[0])
    if x.ndim == 4 and x.shape[:2] == (1, 3):
        y = cartoon_chw(x[0])[None].astype(np.float32)
    elif x.ndim == 3 and x.shape[2] == 3:
        y = cartoon(x)
    else:
        print(f"{argv[0]}: expected [1,3,H,W] or [H,W,3], got {list(x.shape)}", file=sys.stderr)
        return 2
    np.save(argv[1], y)
    return 0


if __name__ == "__main__":
    sys.exit(main())
