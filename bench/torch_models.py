#!/usr/bin/python3
"""PyTorch's side of the side-by-side benchmark (issue 5): the reference models in eager mode, under
torch.compile and under torch.compile(mode="reduce-overhead"), in fp32 (TF32 off) and fp16, on the
same input as vkfuse (the model folder's input.npy, repeated to the batch).

    python3 bench/torch_models.py --models-dir DIR [--models a,b] [--out FILE.jsonl] [--device cuda|cpu]
        [--configs MODE:DTYPE:BATCH,...] [--dtypes fp32,fp16] [--warm-only] [--parallel N]
        [--model-timeout S] [--deadline UNIX_TIME] [--gpu-lock FILE]

    # locally, on the CPU, with the small committed models:
    /usr/bin/python3 bench/torch_models.py --device cpu --models-dir tests/data/models \\
        --models tiny_cnn,tiny_transformer

Default configurations, in this order (the issue's targets need batch 1 only, so torch.compile and
reduce-overhead are measured at batch 1; eager at batch 1 and 8):
    fp32: eager 1, reduce-overhead 1, compile 1, eager 8      fp16: the same
Each model is rebuilt exactly as scripts/export_models.py built it (same seed, same calibration), and
its fp32 eager output is checked against the folder's output.npy, so the numbers are for the model
vkfuse runs. fp32 runs with TF32 off (matmul and cuDNN) and float32 matmul precision "highest"; fp16
is model.half() with a half input. Reported, never asserted: every output's error relative to the
largest magnitude of the fp32 eager output (fp16 against fp32 is the fp16 sanity check).

Timing: after a warm-up (at least 3 calls and about 0.3 s), the median of --repeats measurements,
each a loop of back-to-back forwards (under torch.inference_mode) timed with CUDA events (perf_counter
on the CPU) and long enough to cover about 20 ms; reported per forward. reduce-overhead marks a new
CUDA-graph step before every call. With --gpu-lock only the warm-up and the timed loops hold the lock,
so several processes can trace and compile while one measures; before its first work on the GPU each
process waits until the lock has been free once (whoever holds it at the start is timed alone).

--warm-only compiles each compiled configuration once and runs one forward (nothing is timed): that
fills Inductor's on-disk caches (FX graph, AOTAutograd, Triton kernels; TORCHINDUCTOR_CACHE_DIR) so a
later measuring process compiles from cache. --parallel N runs one child process per model (per
model and dtype with --warm-only), N at a time, each under --model-timeout, all under --deadline.

One JSON object per line: {"kind": "env", ...} per process, {"kind": "torch", "model", "mode", "dtype",
"batch", "status": ok|error|unsupported|skipped|timeout, "ms_median", ...} per configuration, and
{"kind": "torch_warm", ...} per compiled configuration with --warm-only. Measures only.
"""
import argparse
import contextlib
import copy
import fcntl
import importlib.util
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = ("eager", "compile", "reduce-overhead")
DTYPES = ("fp32", "fp16")
DEFAULT_CONFIGS = ("eager:fp32:1,reduce-overhead:fp32:1,compile:fp32:1,eager:fp32:8,"
                   "eager:fp16:1,reduce-overhead:fp16:1,compile:fp16:1,eager:fp16:8")
# Rough relative compile cost, largest first, so that a pool starts the long ones early.
COMPILE_COST = ["densenet121", "vit_b_16", "convnext_tiny", "efficientnet_b0", "regnet_y_400mf", "googlenet",
                "shufflenet_v2_x1_0", "mobilenet_v3_small", "resnet50", "mobilenet_v2", "squeezenet1_1", "vgg11",
                "resnet18"]


def stamp():
    return time.strftime("%H:%M:%S", time.gmtime())


def progress(text):
    print(f"[{stamp()}] torch_models: {text}", file=sys.stderr, flush=True)


def parse_configs(text, dtypes):
    configs = []
    for item in text.split(","):
        mode, dtype, batch = item.split(":")
        if mode not in MODES or dtype not in DTYPES:
            sys.exit(f"--configs: '{item}' is not MODE:DTYPE:BATCH with MODE in {MODES} and DTYPE in {DTYPES}")
        if dtype in dtypes:
            configs.append((mode, dtype, int(batch)))
    return configs


def config_record(model, config, **fields):
    mode, dtype, batch = config
    return {"kind": "torch", "model": model, "mode": mode, "dtype": dtype, "batch": batch, **fields}


class Writer:
    """Appends JSON lines to a file (flushed per line, so a killed process keeps what it finished)."""

    def __init__(self, path):
        self.file = open(path, "a") if path else sys.stdout

    def write(self, record):
        self.file.write(json.dumps(record) + "\n")
        self.file.flush()


# ---------------------------------------------------------------------------------------------------
# One process: build, compile, measure.

def load_export_module():
    spec = importlib.util.spec_from_file_location("export_models", os.path.join(ROOT, "scripts", "export_models.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_model(name):
    """The model as scripts/export_models.py exported it: same seed, same re-drawn parameters, same
    BatchNorm calibration (on the CPU, as there)."""
    import torch
    em = load_export_module()
    torch.manual_seed(em.SEED)
    generator = torch.Generator().manual_seed(em.SEED)
    model = em.build(name).eval()
    em.redraw_constant_parameters(model, generator)
    em.recompute_batchnorm_statistics(model, generator, em.input_shape(name))
    return model.eval()


def configure_torch(device):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    env = {"kind": "env", "torch": torch.__version__, "device_type": device, "pid": os.getpid(),
           "tf32_matmul": torch.backends.cuda.matmul.allow_tf32, "tf32_cudnn": torch.backends.cudnn.allow_tf32,
           "float32_matmul_precision": torch.get_float32_matmul_precision(),
           "cudnn_benchmark": torch.backends.cudnn.benchmark, "cpu_threads": torch.get_num_threads(),
           "has_compile": hasattr(torch, "compile")}
    try:
        import torchvision
        env["torchvision"] = torchvision.__version__
    except ImportError:
        pass
    if device == "cuda":
        env.update(device=torch.cuda.get_device_name(), cuda=torch.version.cuda,
                   cudnn=torch.backends.cudnn.version())
        try:
            import triton
            env["triton"] = triton.__version__
        except ImportError:
            pass
    else:
        env["device"] = "cpu"
    return env


def first_tensor(output):
    import torch
    if isinstance(output, torch.Tensor):
        return output
    if isinstance(output, (tuple, list)):
        return first_tensor(output[0])
    if hasattr(output, "logits"):
        return output.logits
    raise TypeError(f"cannot find a tensor in the model's output ({type(output).__name__})")


def relative_error(got, want):
    """max |got - want| / max |want| (want's finite values), as vkfuse run --compare reports it."""
    got = got.detach().float().cpu().numpy().astype(np.float64)
    want = want.detach().float().cpu().numpy().astype(np.float64) if hasattr(want, "detach") else want.astype(np.float64)
    if got.shape != want.shape:
        return float("inf")
    scale = float(np.max(np.abs(want[np.isfinite(want)]))) if np.isfinite(want).any() else 0.0
    diff = np.abs(got - want)
    if not np.isfinite(diff).all():
        return float("inf")
    error = float(diff.max()) if diff.size else 0.0
    return error / scale if scale > 0 else (0.0 if error == 0 else float("inf"))


@contextlib.contextmanager
def gpu_lock(path):
    if not path:
        yield 0.0
        return
    waited = time.perf_counter()
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield time.perf_counter() - waited
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


_gpu_waited = False


def wait_for_gpu(args):
    """Once per process, before its first work on the GPU (moving a model there, first calls, checks):
    waits until the GPU lock has been free, so that whoever holds it when the process starts (vkfuse's
    batch-1 measurements, bench/h100_session.sh) is timed with no other work on the GPU. Kernels of
    another process share the GPU by time slices, which the holder's timestamps would count."""
    global _gpu_waited
    if _gpu_waited or not args.gpu_lock or args.device != "cuda" or args.warm_only:
        return
    with gpu_lock(args.gpu_lock):
        pass
    _gpu_waited = True


class Timer:
    """Wall time per loop of calls: CUDA events on a GPU, perf_counter on the CPU."""

    def __init__(self, device):
        import torch
        self.torch = torch
        self.cuda = device == "cuda"

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def loop_ms(self, call, iterations):
        if self.cuda:
            start = self.torch.cuda.Event(enable_timing=True)
            end = self.torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iterations):
                call()
            end.record()
            end.synchronize()
            return start.elapsed_time(end)
        begin = time.perf_counter()
        for _ in range(iterations):
            call()
        return (time.perf_counter() - begin) * 1e3


def measure(call, timer, repeats, min_iterations, target_ms=20.0, warmup_s=0.3):
    """Median, min and max milliseconds per call over `repeats` timed loops, after a warm-up."""
    timer.sync()
    begin = time.perf_counter()
    calls = 0
    while calls < 3 or (time.perf_counter() - begin < warmup_s and calls < 1000):
        call()
        calls += 1
        if calls % 10 == 0:
            timer.sync()
    timer.sync()
    estimate = max(timer.loop_ms(call, 3) / 3, 1e-3)
    iterations = max(min_iterations, min(2000, math.ceil(target_ms / estimate)))
    samples = sorted(timer.loop_ms(call, iterations) / iterations for _ in range(repeats))
    return {"ms_median": statistics.median(samples), "ms_min": samples[0], "ms_max": samples[-1],
            "iterations": iterations, "repeats": repeats}


def make_callable(model, mode, device):
    """The model as called for `mode`, and the per-call step marker (reduce-overhead), or an
    'unsupported' reason."""
    import torch
    if mode == "eager":
        return model, None, None
    if not hasattr(torch, "compile"):
        return None, None, f"torch {torch.__version__} has no torch.compile"
    compiled = torch.compile(model, mode="reduce-overhead" if mode == "reduce-overhead" else None, dynamic=False)
    step = None
    if mode == "reduce-overhead":
        step = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)
    return compiled, step, None


def reset_compiler():
    import torch
    if hasattr(torch, "_dynamo"):
        torch._dynamo.reset()


def run_model(name, configs, args, writer):
    """Measures (or, with --warm-only, compiles) every configuration of one model, in order."""
    import torch
    device = args.device
    timer = Timer(device)
    folder = os.path.join(args.models_dir, name)
    if os.path.exists(os.path.join(folder, "input.npy")):
        x1 = torch.from_numpy(np.load(os.path.join(folder, "input.npy")))
    elif args.warm_only:  # the export may still be running: compiling needs the shape, not the values
        x1 = torch.randn(load_export_module().input_shape(name))
    else:
        raise FileNotFoundError(f"{folder}/input.npy (export the model first)")
    reference = np.load(os.path.join(folder, "output.npy")) if os.path.exists(os.path.join(folder, "output.npy")) else None
    started = time.perf_counter()
    model32 = build_model(name)
    progress(f"{name}: built in {time.perf_counter() - started:.1f} s")
    wait_for_gpu(args)
    models = {}
    fp32_eager = None  # the fp32 eager batch-1 output: what every other output is compared with

    def model_for(dtype):
        if dtype not in models:
            m = model32 if dtype == "fp32" else copy.deepcopy(model32).half()
            models[dtype] = m.to(device)
        return models[dtype]

    def input_for(dtype, batch):
        x = x1.repeat(batch, *([1] * (x1.dim() - 1))) if batch != 1 else x1
        return x.to(device=device, dtype=torch.float16 if dtype == "fp16" else torch.float32).contiguous()

    def fp32_eager_output():
        nonlocal fp32_eager
        if fp32_eager is None:
            with torch.inference_mode():
                fp32_eager = first_tensor(model_for("fp32")(input_for("fp32", 1))).float().clone()
        return fp32_eager

    for config in configs:
        mode, dtype, batch = config
        if args.warm_only and mode == "eager":
            continue
        kind = "torch_warm" if args.warm_only else "torch"
        record = {"kind": kind, "model": name, "mode": mode, "dtype": dtype, "batch": batch}
        if args.deadline and time.time() > args.deadline - args.deadline_margin:
            writer.write({**record, "status": "skipped", "error": "time budget spent before this configuration"})
            continue
        try:
            model = model_for(dtype)
            x = input_for(dtype, batch)
            fn, step, unsupported = make_callable(model, mode, device)
            if unsupported:
                writer.write({**record, "status": "unsupported", "error": unsupported})
                continue

            def call():
                if step is not None:
                    step()
                return fn(x)

            with torch.inference_mode():
                timer.sync()
                begin = time.perf_counter()
                y = first_tensor(call()).float().clone()
                timer.sync()
                record["first_call_s"] = round(time.perf_counter() - begin, 3)
                if batch == 1 and not args.warm_only:
                    if mode == "eager" and dtype == "fp32" and reference is not None:
                        record["rel_err_vs_reference"] = relative_error(y, reference)
                    if not (mode == "eager" and dtype == "fp32"):
                        record["rel_err_vs_fp32_eager"] = relative_error(y, fp32_eager_output())
                if mode == "reduce-overhead" and device != "cuda":
                    record["note"] = "CUDA graphs need a CUDA device: this ran as plain torch.compile"
                if not args.warm_only:
                    with gpu_lock(args.gpu_lock) as waited:
                        record.update(measure(call, timer, args.repeats, args.min_iterations))
                        record["lock_wait_s"] = round(waited, 3)
            record["status"] = "ok"
        except Exception as error:  # a failing configuration is a result, not the end of the run
            record.update(status="error", error=f"{type(error).__name__}: {str(error)[:400]}")
        writer.write(record)
        shown = f"{record['ms_median']:.4f} ms" if "ms_median" in record else record["status"]
        progress(f"{name} {mode} {dtype} b{batch}: {shown} (first call {record.get('first_call_s', '-')} s)")
        if mode != "eager":
            reset_compiler()
        if device == "cuda":
            torch.cuda.empty_cache()


def run_in_process(args):
    import torch
    if args.threads:
        torch.set_num_threads(args.threads)
    writer = Writer(args.out)
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("torch_models: no CUDA device (use --device cpu to run on the CPU)")
    env = configure_torch(args.device)
    env["warm_only"] = args.warm_only
    writer.write(env)
    configs = parse_configs(args.configs, args.dtypes.split(","))
    for name in args.models.split(","):
        try:
            run_model(name, configs, args, writer)
        except Exception as error:
            for config in configs:
                writer.write(config_record(name, config, status="error",
                                           error=f"model: {type(error).__name__}: {str(error)[:400]}"))
            progress(f"{name}: {type(error).__name__}: {error}")


# ---------------------------------------------------------------------------------------------------
# A pool of child processes, one per model (per model and dtype with --warm-only).

def pool_items(args):
    order = {name: i for i, name in enumerate(COMPILE_COST)}
    models = sorted(args.models.split(","), key=lambda m: order.get(m, -1))  # the longest compiles first
    if args.warm_only:
        return [(m, d) for m in models for d in args.dtypes.split(",")]
    return [(m, args.dtypes) for m in models]


def child_command(args, model, dtypes, out):
    command = [sys.executable, os.path.abspath(__file__), "--models-dir", args.models_dir, "--models", model,
               "--dtypes", dtypes, "--configs", args.configs, "--device", args.device, "--out", out,
               "--repeats", str(args.repeats), "--min-iterations", str(args.min_iterations),
               "--threads", str(args.threads or max(1, (os.cpu_count() or 1) // args.parallel))]
    if args.deadline:
        command += ["--deadline", str(args.deadline), "--deadline-margin", str(args.deadline_margin)]
    if args.gpu_lock:
        command += ["--gpu-lock", args.gpu_lock]
    if args.warm_only:
        command.append("--warm-only")
    return command


def run_pool(args):
    parts_dir = args.out + ".parts"
    os.makedirs(parts_dir, exist_ok=True)
    writer = Writer(args.out)
    configs = parse_configs(args.configs, args.dtypes.split(","))
    queue = pool_items(args)
    running = {}  # pid -> (process, model, dtypes, part, log, started)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if args.compile_threads:
        env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", str(args.compile_threads))

    def missing_records(model, dtypes, part, status, why):
        done = set()
        if os.path.exists(part):
            for line in open(part):
                r = json.loads(line)
                if r.get("kind") in ("torch", "torch_warm"):
                    done.add((r["mode"], r["dtype"], r["batch"]))
        for config in configs:
            if config[1] in dtypes.split(",") and config not in done and not (args.warm_only and config[0] == "eager"):
                writer.write({**config_record(model, config, status=status, error=why),
                              "kind": "torch_warm" if args.warm_only else "torch"})

    def stop(entry):
        process = entry[0]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def finish(pid, status=None, why=None):
        process, model, dtypes, part, log, started = running.pop(pid)
        log.close()
        if os.path.exists(part):
            with open(part) as f:
                for line in f:
                    writer.file.write(line)
            writer.file.flush()
        if status:
            missing_records(model, dtypes, part, status, why)
        else:
            missing_records(model, dtypes, part, "error", f"the child process exited with code {process.returncode} "
                                                          f"before this configuration (see the log)")
        progress(f"{model} [{dtypes}] {status or 'finished'} after {time.time() - started:.0f} s "
                 f"(rc {process.returncode})")

    def terminate(signum, frame):
        for pid in list(running):
            stop(running[pid])
            finish(pid, "timeout", f"the pool was stopped (signal {signum})")
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGINT, terminate)
    progress(f"pool of {args.parallel}: {len(queue)} items ({'warm-only' if args.warm_only else 'measure'}), "
             f"{max(0, args.deadline - time.time()):.0f} s left" if args.deadline else f"pool of {args.parallel}")
    while queue or running:
        now = time.time()
        while queue and len(running) < args.parallel:
            model, dtypes = queue.pop(0)
            if args.deadline and now > args.deadline - args.deadline_margin:
                missing_records(model, dtypes, "", "skipped", "time budget spent before this model started")
                progress(f"{model} [{dtypes}] skipped: time budget spent")
                continue
            part = os.path.join(parts_dir, f"{model}.{dtypes.replace(',', '_')}.jsonl")
            if os.path.exists(part):
                os.remove(part)
            log = open(part[:-len(".jsonl")] + ".log", "w")
            command = child_command(args, model, dtypes, part)
            try:
                process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, process_group=0)
            except TypeError:  # Python < 3.11
                process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                           preexec_fn=os.setpgrp)
            running[process.pid] = (process, model, dtypes, part, log, now)
            progress(f"{model} [{dtypes}] started (pid {process.pid})")
        for pid in list(running):
            process, model, dtypes, part, log, started = running[pid]
            if process.poll() is not None:
                finish(pid)
            elif now - started > args.model_timeout:
                stop(running[pid])
                finish(pid, "timeout", f"over the per-model limit of {args.model_timeout:.0f} s")
            elif args.deadline and now > args.deadline:
                stop(running[pid])
                finish(pid, "timeout", "stopped at the time budget's end")
        time.sleep(0.2)
    progress(f"pool done; results in {args.out}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models-dir", required=True, help="folders <model>/input.npy (and output.npy)")
    parser.add_argument("--models", default=None, help="comma-separated (default: every folder with input.npy)")
    parser.add_argument("--out", default=None, help="JSON lines file to append to (default stdout)")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--configs", default=DEFAULT_CONFIGS, help="MODE:DTYPE:BATCH,... in order")
    parser.add_argument("--dtypes", default="fp32,fp16", help="keeps only the configurations of these dtypes")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--min-iterations", type=int, default=5)
    parser.add_argument("--warm-only", action="store_true", help="compile and run once; time nothing")
    parser.add_argument("--parallel", type=int, default=0, help="N child processes (0: this process)")
    parser.add_argument("--model-timeout", type=float, default=300.0, help="seconds per child process")
    parser.add_argument("--deadline", type=float, default=0.0, help="Unix time after which nothing new starts")
    parser.add_argument("--deadline-margin", type=float, default=5.0)
    parser.add_argument("--gpu-lock", default=None, help="a file locked around every timed section")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads per process")
    parser.add_argument("--compile-threads", type=int, default=0, help="TORCHINDUCTOR_COMPILE_THREADS per child")
    args = parser.parse_args()
    if args.models is None:
        args.models = ",".join(sorted(d for d in os.listdir(args.models_dir)
                                      if os.path.exists(os.path.join(args.models_dir, d, "input.npy"))))
    if not args.models:
        sys.exit(f"torch_models: no models in {args.models_dir}")
    if args.parallel > 0:
        if not args.out:
            sys.exit("torch_models: --parallel needs --out (the children's results are gathered there)")
        run_pool(args)
    else:
        run_in_process(args)


if __name__ == "__main__":
    main()
