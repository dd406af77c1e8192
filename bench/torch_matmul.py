"""torch.matmul's GEMM throughput on the local GPU, for side-by-side ratios with vkfuse_bench_gemm.

    python3 bench/torch_matmul.py [--sizes 1024,2048,4096,8192] [--dtype f32|f16|both]

fp32 runs with TF32 off. Prints one line per size: median ms over CUDA-event timed batches, TFLOP/s.
Measures only.
"""
import argparse
import statistics

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1024,2048,4096,8192")
    parser.add_argument("--dtype", default="both", choices=["f32", "f16", "both"])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dtypes = {"f32": [torch.float32], "f16": [torch.float16], "both": [torch.float32, torch.float16]}[args.dtype]
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, TF32 off")
    for dtype in dtypes:
        for n in (int(s) for s in args.sizes.split(",")):
            a = torch.randn(n, n, device="cuda", dtype=dtype)
            b = torch.randn(n, n, device="cuda", dtype=dtype)
            iterations = max(3, int(2e12 / (2 * n**3)))
            for _ in range(3):
                torch.matmul(a, b)
            samples = []
            for _ in range(args.runs):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(iterations):
                    torch.matmul(a, b)
                end.record()
                torch.cuda.synchronize()
                samples.append(start.elapsed_time(end) / iterations)
            ms = statistics.median(samples)
            print(f"torch {str(dtype).replace('torch.', ''):8s} {n:5d}^3  {ms:9.4f} ms  {2 * n**3 / ms / 1e9:8.2f} TFLOP/s")


if __name__ == "__main__":
    main()
