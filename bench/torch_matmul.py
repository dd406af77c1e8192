"""torch.matmul's GEMM throughput on the local GPU, for side-by-side ratios with vkfuse_bench_gemm, and
torch's copy bandwidth (Tensor.clone of f32 tensors) beside vkfuse_bench_chain's copy kernel.

    python3 bench/torch_matmul.py [--sizes 1024,2048,197x768x3072,...] [--dtype f32|f16|both]
                                  [--copy-mi 1,4,16,64,256] [--json]

A size is N (N^3) or MxNxK (A is M x K, B is K x N), as vkfuse_bench_gemm takes them. fp32 runs with
TF32 off. Prints one line per size: median ms over CUDA-event timed batches, TFLOP/s
(and GB/s for the copies, one read plus one write counted); with --json, one JSON object per line
instead. --sizes '' skips the GEMMs. Measures only.
"""
import argparse
import json
import statistics

import torch


def median_ms(fn, iterations, runs):
    for _ in range(3):
        fn()
    samples = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iterations):
            fn()
        end.record()
        torch.cuda.synchronize()
        samples.append(start.elapsed_time(end) / iterations)
    return statistics.median(samples)


def parse_size(text):
    dims = [int(d) for d in text.split("x")]
    if len(dims) == 1:
        return dims * 3
    if len(dims) != 3:
        raise argparse.ArgumentTypeError(f"--sizes takes N or MxNxK, not '{text}'")
    return dims


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1024,2048,4096,8192")
    parser.add_argument("--dtype", default="both", choices=["f32", "f16", "both"])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--copy-mi", default="", help="clone bandwidth at these sizes, in Mi f32 elements")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    dtypes = {"f32": [torch.float32], "f16": [torch.float16], "both": [torch.float32, torch.float16]}[args.dtype]
    device = torch.cuda.get_device_name()
    if args.json:
        print(json.dumps({"kind": "torch_env", "device": device, "torch": torch.__version__, "tf32": False}), flush=True)
    else:
        print(f"device: {device}, torch {torch.__version__}, TF32 off")
    for dtype in dtypes:
        name = {torch.float32: "f32", torch.float16: "f16"}[dtype]
        for m, n, k in (parse_size(s) for s in args.sizes.split(",") if s):
            a = torch.randn(m, k, device="cuda", dtype=dtype)
            b = torch.randn(k, n, device="cuda", dtype=dtype)
            flops = 2 * m * n * k
            ms = median_ms(lambda: torch.matmul(a, b), max(3, int(2e12 / flops)), args.runs)
            tflops = flops / ms / 1e9
            label = f"{m}^3" if m == n == k else f"{m}x{n}x{k}"
            if args.json:
                print(json.dumps({"kind": "torch_gemm", "dtype": name, "m": m, "n": n, "k": k, "ms": ms,
                                  "tflops": tflops}), flush=True)
            else:
                print(f"torch {str(dtype).replace('torch.', ''):8s} {label:>15s}  {ms:9.4f} ms  {tflops:8.2f} TFLOP/s")
    for mi in (int(s) for s in args.copy_mi.split(",") if s):
        x = torch.randn(mi << 20, device="cuda")
        ms = median_ms(lambda: x.clone(), max(3, int(2e10 / (8 * (mi << 20)))), args.runs)
        gbs = 8 * (mi << 20) / ms / 1e6
        if args.json:
            print(json.dumps({"kind": "torch_copy", "mi": mi, "ms": ms, "gbs": gbs}), flush=True)
        else:
            print(f"torch clone f32 {mi:4d} Mi  {ms:9.4f} ms  {gbs:8.1f} GB/s")


if __name__ == "__main__":
    main()
