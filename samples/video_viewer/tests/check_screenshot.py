#!/usr/bin/env python3
"""Checks the viewer's screenshot against a CPU reference of its model on the same decoded frame.

    check_screenshot.py SHOT.png FRAME.png [--max-error N] [--model cartoon|segmenter]

SHOT.png is the last frame shown with --view output --no-hud at the output's own size, FRAME.png the
frame the model read (--dump-frame). The model's output is computed on FRAME.png with numpy
(models/cartoon_reference.py) and rounded to 8 bits as the output image stores it; every pixel of the
screenshot must be within N/255 (default 2). The screenshot must not be blank, and must differ from the
frame: a viewer that skipped inference, or showed the frame, fails.

--model segmenter: models/segmenter.onnx on the ImageNet-normalized frame, shown as the viewer's
palette (inference.cpp's make_palette, class 0 black); a pixel whose two best scores are within 1e-3
may take either class.
"""
import argparse
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import cartoon_reference  # noqa: E402
import make_segmenter  # noqa: E402

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32)


def palette(classes):
    """inference.cpp's make_palette: hues spread by the golden ratio, class 0 transparent (black here)."""
    out = [(0.0, 0.0, 0.0)]
    for k in range(1, classes):
        h = np.float32((0.61803398875 * k) % 1.0) * 6.0
        x = 1.0 - abs(h % 2.0 - 1.0)
        rgb = [(1, x, 0), (x, 1, 0), (0, 1, x), (0, x, 1), (x, 0, 1), (1, 0, x)][min(int(h), 5)]
        out.append(tuple(0.15 + 0.85 * c for c in rgb))
    return np.round(np.array(out) * 255.0)


def segmenter_expected(frame):
    """The expected picture, and where a near-tie lets either of the two best classes win."""
    normalized = (frame[..., :3].astype(np.float32) / 255.0 - IMAGENET_MEAN) / IMAGENET_STD
    scores = normalized @ make_segmenter.WEIGHTS.T + make_segmenter.BIAS
    order = np.sort(scores, axis=-1)
    colours = palette(scores.shape[-1])
    return colours[np.argmax(scores, axis=-1)], order[..., -1] - order[..., -2] < 1e-3


def read_png(path):
    """RGBA8 [H, W, 4] through the ffmpeg CLI (no imaging library needed)."""
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                            "-of", "csv=p=0", path], capture_output=True, text=True)
    if probe.returncode != 0:
        sys.exit(f"check_screenshot: cannot read {path}: {probe.stderr.strip()}")
    width, height = (int(v) for v in probe.stdout.strip().split(","))
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgba", "-"],
                         capture_output=True, check=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(height, width, 4)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("shot")
    parser.add_argument("frame")
    parser.add_argument("--max-error", type=int, default=2)
    parser.add_argument("--model", choices=["cartoon", "segmenter"], default="cartoon")
    args = parser.parse_args()
    shot = read_png(args.shot)[..., :3].astype(np.int32)
    frame = read_png(args.frame)
    if shot.shape[:2] != frame.shape[:2]:
        sys.exit(f"check_screenshot: the screenshot is {shot.shape[1]}x{shot.shape[0]}, the frame "
                 f"{frame.shape[1]}x{frame.shape[0]}; run the viewer with --view output --size of the frame")
    if args.model == "segmenter":
        want, tie = segmenter_expected(frame)
    else:
        want = np.clip(np.round(cartoon_reference.cartoon(frame[..., :3].astype(np.float32) / 255.0) * 255.0), 0, 255)
        tie = np.zeros(shot.shape[:2], bool)
    error = np.abs(shot - want.astype(np.int32))
    error[tie] = 0
    worst = np.unravel_index(np.argmax(error), error.shape)
    changed = np.mean(np.abs(shot - frame[..., :3].astype(np.int32)) > 24)
    print(f"check_screenshot: {shot.shape[1]}x{shot.shape[0]}, max error {error.max()}/255 at (x {worst[1]}, y {worst[0]}), "
          f"mean {error.mean():.4f}; pixels std {shot.std():.1f}; {100 * changed:.1f}% of pixels differ from the frame")
    failures = []
    if error.max() > args.max_error:
        failures.append(f"{np.count_nonzero(error.max(axis=2) > args.max_error)} pixels differ from the reference "
                        f"by more than {args.max_error}/255")
    if shot.std() < 8.0:
        failures.append("the screenshot is blank")
    if changed < 0.02:
        failures.append("the screenshot is the frame itself: the model's output is not shown")
    if failures:
        sys.exit("check_screenshot: FAIL: " + "; ".join(failures))
    print("check_screenshot: pass")


if __name__ == "__main__":
    main()
