"""Writes cartoon.onnx, the video viewer's default filter: an image-to-image "cartoon" effect whose
weights are set by hand (no training), so every pixel it produces can be checked against
cartoon_reference.py.

    python3 make_cartoon.py [-o cartoon.onnx]
    python3 make_cartoon.py --check path/to/vkfuse     # also compare vkfuse's output with numpy

Input "image" and output "cartoon" are float32 [1, 3, height, width], RGB in 0..1; height and width
are symbolic, so one file serves every camera or video size.

The filter: blur, edges from the blurred luma (dark lines), flat colour from a mix of the blur and a
pooled-and-upsampled copy of it, saturation boost and a soft colour staircase, lines multiplied in.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ left beside the committed model
import cartoon_reference as ref  # noqa: E402  (the parameters and kernels live there, shared)

OPSET = 17


def build_model():
    inits = []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array, dtype=np.float32), name))
        return name

    n_steps = ref.LEVELS - 1
    blur_w = const("blur_w", np.tile(ref.gaussian_kernel()[None, None], (3, 1, 1, 1)))  # [3,1,5,5]
    luma_w = const("luma_w", ref.LUMA.reshape(1, 3, 1, 1))
    sx, sy = ref.sobel_kernels()
    sobel_x_w = const("sobel_x_w", sx.reshape(1, 1, 3, 3))
    sobel_y_w = const("sobel_y_w", sy.reshape(1, 1, 3, 3))
    mix_w = const("mix_w", ref.mix_matrix().reshape(3, 6, 1, 1))
    # Grouped 1x1 Convs spread each channel over its level thresholds and sum them back: the
    # staircase as Conv + Sigmoid + Conv, which needs no rank-5 broadcasting.
    step_w = const("step_w", np.full((3 * n_steps, 1, 1, 1), ref.STEP_SHARPNESS * n_steps))
    step_b = const("step_b", np.tile(-ref.STEP_SHARPNESS * ref.step_offsets(), 3))
    sum_w = const("sum_w", np.full((3, n_steps, 1, 1), 1.0 / n_steps))
    eps = const("eps", 1e-6)
    threshold = const("threshold", ref.EDGE_THRESHOLD)
    sharpness = const("sharpness", ref.EDGE_SHARPNESS)
    one = const("one", 1.0)
    zero = const("zero", 0.0)
    p_blur = ref.BLUR_SIZE // 2
    inits.append(numpy_helper.from_array(np.array([0, 0, p_blur, p_blur, 0, 0, p_blur, p_blur], np.int64), "blur_pads"))
    inits.append(numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "sobel_pads"))

    N = helper.make_node
    nodes = [
        # Edge-replicating Pad, then unpadded Convs: output size = input size for any H, W.
        N("Pad", ["image", "blur_pads"], ["image_padded"], mode="edge"),
        N("Conv", ["image_padded", blur_w], ["blur"], group=3, kernel_shape=[5, 5], pads=[0, 0, 0, 0]),
        # Edges
        N("Conv", ["blur", luma_w], ["luma"], kernel_shape=[1, 1]),
        N("Pad", ["luma", "sobel_pads"], ["luma_padded"], mode="edge"),
        N("Conv", ["luma_padded", sobel_x_w], ["gx"], kernel_shape=[3, 3], pads=[0, 0, 0, 0]),
        N("Conv", ["luma_padded", sobel_y_w], ["gy"], kernel_shape=[3, 3], pads=[0, 0, 0, 0]),
        N("Mul", ["gx", "gx"], ["gx2"]),
        N("Mul", ["gy", "gy"], ["gy2"]),
        N("Add", ["gx2", "gy2"], ["g2"]),
        N("Add", ["g2", eps], ["g2_eps"]),
        N("Sqrt", ["g2_eps"], ["magnitude"]),
        N("Sub", ["magnitude", threshold], ["over"]),
        N("Mul", ["over", sharpness], ["edge_logit"]),
        N("Sigmoid", ["edge_logit"], ["edges"]),
        N("Sub", [one, "edges"], ["keep"]),
        # Flat colour: ceil_mode keeps the last partial block of an odd size, and Resize to the
        # input's own Shape lands exactly on H x W whatever H and W are.
        N("AveragePool", ["blur"], ["pooled"], kernel_shape=[ref.POOL, ref.POOL], strides=[ref.POOL, ref.POOL],
          pads=[0, 0, 0, 0], ceil_mode=1, count_include_pad=0),
        N("Shape", ["image"], ["image_shape"]),
        N("Resize", ["pooled", "", "", "image_shape"], ["coarse"], mode="linear",
          coordinate_transformation_mode="half_pixel"),
        N("Concat", ["blur", "coarse"], ["fine_coarse"], axis=1),
        N("Conv", ["fine_coarse", mix_w], ["mixed"], kernel_shape=[1, 1]),
        # Soft staircase (see cartoon_reference.py for why not Floor)
        N("Conv", ["mixed", step_w, step_b], ["step_logits"], group=3, kernel_shape=[1, 1]),
        N("Sigmoid", ["step_logits"], ["steps"]),
        N("Conv", ["steps", sum_w], ["quantized"], group=3, kernel_shape=[1, 1]),
        # Lines
        N("Mul", ["quantized", "keep"], ["lined"]),
        N("Clip", ["lined", zero, one], ["cartoon"]),
    ]

    def image(name):
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 3, "height", "width"])

    graph = helper.make_graph(nodes, "cartoon", [image("image")], [image("cartoon")], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="make_cartoon.py")
    model.ir_version = 8  # opset 17's IR version; newer onnx packages would stamp one older readers reject
    model.doc_string = "Cartoon filter with analytic weights; numpy reference: cartoon_reference.py"
    onnx.checker.check_model(model, full_check=True)
    return model


def test_image(h, w):
    """Gradients, flat shapes with hard edges and fine stripes: every path of the filter is exercised."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    u, v = xx / max(w - 1, 1), yy / max(h - 1, 1)
    img = np.stack([u, v, 0.5 + 0.4 * np.sin(6.0 * u + 3.0 * v)])
    disc = (xx - 0.3 * w) ** 2 + (yy - 0.4 * h) ** 2 < (0.2 * min(h, w)) ** 2
    img[:, disc] = np.array([0.9, 0.2, 0.1])[:, None]
    box = (np.abs(xx - 0.7 * w) < 0.15 * w) & (np.abs(yy - 0.6 * h) < 0.2 * h)
    img[:, box] = np.array([0.1, 0.3, 0.8])[:, None]
    stripes = (yy > 0.85 * h) & ((xx.astype(int) // 3) % 2 == 0)
    img[:, stripes] = 1.0
    return img[None].astype(np.float32)


def check(vkfuse, model_path, tolerance):
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for h, w in [(240, 320), (97, 131)]:
            x = test_image(h, w)
            want = ref.cartoon_chw(x[0])[None]
            np.save(os.path.join(tmp, "in.npy"), x)
            for precision, tol in [("fp32", tolerance), ("fp16", None)]:
                out_dir = os.path.join(tmp, precision)
                run = subprocess.run([vkfuse, "run", model_path, "--shape", f"image=1x3x{h}x{w}", "--input",
                                      f"image={tmp}/in.npy", "--precision", precision, "--output-dir", out_dir],
                                     capture_output=True, text=True)
                if run.returncode != 0:
                    print(f"{h}x{w} {precision}: vkfuse failed\n{run.stderr}", file=sys.stderr)
                    ok = False
                    continue
                got = np.load(os.path.join(out_dir, "cartoon.npy")).astype(np.float64)
                err = float(np.abs(got - want).max())
                verdict = "" if tol is None else (" ok" if err < tol else " FAIL")
                ok = ok and (tol is None or err < tol)
                print(f"{h}x{w} {precision}: max abs error {err:.2e}{verdict}")
            changed = float((np.abs(want - x).max(axis=1) > 0.1).mean())
            print(f"{h}x{w}: {changed:.0%} of pixels changed by more than 0.1")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", default=os.path.join(HERE, "cartoon.onnx"))
    parser.add_argument("--check", metavar="VKFUSE", help="vkfuse CLI to run the model with and compare to numpy")
    parser.add_argument("--tolerance", type=float, default=1e-3, help="fp32 max abs error allowed by --check")
    args = parser.parse_args()
    model = build_model()
    onnx.save(model, args.output)
    print(f"{args.output}: {len(model.graph.node)} nodes, {os.path.getsize(args.output)} bytes")
    if args.check and not check(args.check, args.output, args.tolerance):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
