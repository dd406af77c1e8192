#!/usr/bin/python3
"""PyTorch's side of vkfuse_bench_frame: one model per frame, end to end, the two ways an application
feeds it. Host path: the frame as a numpy array, to the GPU, the model, the output back to numpy.
Device path: the frame already a CUDA tensor, the model replayed as a CUDA graph into a static output
that stays on the GPU, then a synchronize. Median wall milliseconds per frame after a warm-up; fp32
with TF32 off (fp16: the model in half). One JSON line per model.

    python3 bench/torch_frame.py --models-dir DIR --models mobilenet_v3_small,resnet50 [--frames 300]
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
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    dtype = torch.float16 if args.precision == "fp16" else torch.float32
    for name in args.models.split(","):
        model = torch_models.build_model(name).eval().cuda().to(dtype)
        frame = np.load(os.path.join(args.models_dir, name, "input.npy")).astype(np.float32)
        with torch.inference_mode():
            def host():
                x = torch.from_numpy(frame).cuda().to(dtype)
                return model(x).float().cpu().numpy()
            host_ms = median_ms(host, args.frames)

            static_in = torch.from_numpy(frame).cuda().to(dtype)
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(3):
                    model(static_in)
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                static_out = model(static_in)

            def device():
                graph.replay()
                torch.cuda.synchronize()
            device_ms = median_ms(device, args.frames)
            del static_out
        print(json.dumps({"model": name, "precision": args.precision, "frames": args.frames,
                          "torch_host_ms": round(host_ms, 4), "torch_cuda_graph_ms": round(device_ms, 4),
                          "torch": torch.__version__, "device": torch.cuda.get_device_name()}), flush=True)


if __name__ == "__main__":
    main()
