#!/usr/bin/python3
"""PyTorch's side of vkfuse_bench_frame: one model per frame, end to end, the two ways an application
feeds it. Host path: the frame as a numpy array, to the GPU, the model, the output back to numpy.
Device path: the frame already a CUDA tensor, the model replayed as a CUDA graph into a static output
that stays on the GPU, then a synchronize. Median wall milliseconds per frame after a warm-up; fp32
with TF32 off (fp16: the model in half). One JSON line per model.

    python3 bench/torch_frame.py --models-dir DIR --models mobilenet_v3_small,resnet50 [--frames 300]
        [--image 1920x1080]

With --image the frame is WxH RGBA8 bytes: the host path sends them to the GPU as they are, and both
paths resize them there (bilinear, F.interpolate), normalize (ImageNet mean and std) and run the model.
The device path's frame is already a CUDA tensor. With --output-image palette too (a segmentation
model's scores [1, C, H, W]), both paths show the output as vkfuse_bench_frame does: each pixel's best
class through a palette, an RGBA8 image, on the GPU (the host path then copies that image back).
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
import torch_models  # noqa: E402  (the model set rebuilt exactly as exported)


def median_ms(call, frames):
    times = []
    for i in range(frames + frames // 5):
        start = time.perf_counter()
        call()
        if i >= frames // 5:
            times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    return times[len(times) // 2]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models-dir", required=True)
    parser.add_argument("--models", required=True)
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--precision", default="fp32", choices=["fp32", "fp16"])
    parser.add_argument("--image", default="")
    parser.add_argument("--output-image", default="", choices=["", "palette"])
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    dtype = torch.float16 if args.precision == "fp16" else torch.float32
    for name in args.models.split(","):
        model = torch_models.build_model(name).eval().cuda().to(dtype)
        frame = np.load(os.path.join(args.models_dir, name, "input.npy")).astype(np.float32)
        prepare = lambda x: x.to(dtype)  # noqa: E731
        if args.image:
            w, h = (int(v) for v in args.image.split("x"))
            size = frame.shape[2:]
            ys, xs = np.mgrid[0:h, 0:w]
            frame = np.stack([(xs * 3 + ys * 5 + c * 70) & 255 for c in range(4)], axis=-1).astype(np.uint8)
            mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1)
            std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1)

            def prepare(x):
                x = x[..., :3].permute(2, 0, 1).unsqueeze(0).float() / 255.0
                x = torch.nn.functional.interpolate(x, size=size, mode="bilinear", align_corners=False)
                return ((x - mean) / std).to(dtype)
        run = model
        if args.output_image:
            classes = int(np.load(os.path.join(args.models_dir, name, "output.npy")).shape[1])
            c = torch.arange(classes)
            palette = torch.stack([(c * 67) % 256, (c * 131) % 256, (c * 199) % 256, torch.full_like(c, 255)],
                                  dim=1).to(torch.uint8).cuda()

            def run(x):
                return palette[model(x).argmax(dim=1)[0]]  # [H, W, 4] RGBA8
        with torch.inference_mode():
            def host():
                x = prepare(torch.from_numpy(frame).cuda())
                y = run(x)
                return (y if args.output_image else y.float()).cpu().numpy()
            host_ms = median_ms(host, args.frames)

            raw_in = torch.from_numpy(frame).cuda()
            static_in = prepare(raw_in)
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(3):
                    run(static_in)
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                static_out = run(prepare(raw_in))

            def device():
                graph.replay()
                torch.cuda.synchronize()
            device_ms = median_ms(device, args.frames)
            del static_out
        print(json.dumps({"model": name, "precision": args.precision, "frames": args.frames,
                          "frame": (args.image + " rgba8") if args.image else "input tensor",
                          "output": "palette image" if args.output_image else "tensor",
                          "torch_host_ms": round(host_ms, 4), "torch_cuda_graph_ms": round(device_ms, 4),
                          "torch": torch.__version__, "device": torch.cuda.get_device_name()}), flush=True)


if __name__ == "__main__":
    main()
