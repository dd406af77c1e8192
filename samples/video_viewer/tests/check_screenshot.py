#!/usr/bin/env python3
"""Checks the viewer's screenshot against a CPU reference of its model on the same decoded frame.

    check_screenshot.py SHOT.png FRAME.png [--max-error N] [--reference cartoon]

SHOT.png is the last frame shown with --view output --no-hud at the output's own size, FRAME.png the
frame the model read (--dump-frame). The model's output is computed on FRAME.png with numpy
(models/cartoon_reference.py) and rounded to 8 bits as the output image stores it; every pixel of the
screenshot must be within N/255 (default 2). The screenshot must not be blank, and must differ from the
frame: a viewer that skipped inference, or showed the frame, fails.
"""
import argparse
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import cartoon_reference  # noqa: E402


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
    args = parser.parse_args()
    shot = read_png(args.shot)[..., :3].astype(np.int32)
    frame = read_png(args.frame)
    if shot.shape[:2] != frame.shape[:2]:
        sys.exit(f"check_screenshot: the screenshot is {shot.shape[1]}x{shot.shape[0]}, the frame "
                 f"{frame.shape[1]}x{frame.shape[0]}; run the viewer with --view output --size of the frame")
    want = np.clip(np.round(cartoon_reference.cartoon(frame[..., :3].astype(np.float32) / 255.0) * 255.0), 0, 255)
    error = np.abs(shot - want.astype(np.int32))
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
