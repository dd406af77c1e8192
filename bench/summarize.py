#!/usr/bin/python3
"""Turns the raw outputs of bench/h100_session.sh into the results of issue 5's side-by-side run.

    python3 bench/summarize.py RAW [--results-dir bench/results] [--out-md F.md] [--out-csv F.csv]
                               [--headline F.md]

RAW is the session's raw/ folder or its raw.tar.gz. --results-dir writes h100_<date>.md and .csv there
(the date of the run, from its env.txt; h100_<date>_<commit> when that date already has a run, so no
result is overwritten); --out-md / --out-csv name the files instead. Prints the
headline table (Markdown, for the README) and writes it to --headline. Standard library only, so that
it also runs on the GPU machine at the end of the session.

Targets (issue 5), each a ratio of two numbers from the same run:
  fp32, batch 1: vkfuse at least 2x faster than the best PyTorch fp32 configuration measured
  fp16, batch 1: vkfuse no slower than torch.compile(mode="reduce-overhead") in fp16
  GEMM: fp32 at least 0.9x of torch.matmul's TFLOP/s, fp16 (cooperative matrix) at least 0.6x
  resnet50: cold start at most 1.5 s, warm start (disk cache) at most 50 ms
A missing number shows why it is missing (skipped, timeout, unsupported, failed, error) and is neither
a PASS nor a MISS; the steps that did not finish are listed at the end. Measures nothing itself.
"""
import argparse
import csv
import glob
import json
import math
import os
import re
import sys
import tarfile
import tempfile

FP32_TARGET = 2.0
FP16_TARGET = 1.0
GEMM_TARGETS = {"f32": 0.9, "f16": 0.6}
FUSION_TARGET = 1.5  # issue 4: geomean of fused over unfused at batch 1
COLD_TARGET_MS = 1500.0
WARM_TARGET_MS = 50.0
TORCH_MODES = ("eager", "compile", "reduce-overhead")


# ---------------------------------------------------------------------------------------------------
# Reading

def read_json_lines(path):
    rows = []
    if not os.path.exists(path):
        return rows
    for line in open(path, errors="replace"):
        line = line.strip()
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return rows


def read_markdown_tables(path):
    """Every Markdown table in a file, as lists of {header: cell} dicts."""
    tables, header, rows = [], None, None
    if not os.path.exists(path):
        return tables
    for line in open(path, errors="replace"):
        line = line.strip()
        if not line.startswith("|"):
            if header and rows is not None:
                tables.append(rows)
            header, rows = None, None
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            header = cells
        elif rows is None:
            rows = [] if all(set(c) <= set("-: ") for c in cells) else None
            if rows is None:
                header = cells
        else:
            rows.append(dict(zip(header, cells)))
    if header and rows is not None:
        tables.append(rows)
    return tables


def number(text):
    match = re.search(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", str(text))
    return float(match.group()) if match else None


def column(row, *names):
    """The cell whose header is one of `names`, else the first whose header contains one (case-insensitive)."""
    for name in names:
        for key, value in row.items():
            if name.lower() == key.lower():
                return value
    for name in names:
        for key, value in row.items():
            if name.lower() in key.lower():
                return value
    return None


class Run:
    """Everything one session left in its raw folder."""

    def __init__(self, raw):
        self.raw = raw
        self.env = {}
        for line in open(os.path.join(raw, "env.txt"), errors="replace") if os.path.exists(os.path.join(raw, "env.txt")) else []:
            key, _, value = line.partition(":")
            self.env.setdefault(key.strip(), value.strip())
        self.nvidia_smi = [l.split(":", 1)[1].strip() for l in open(os.path.join(raw, "env.txt"), errors="replace")
                           if l.startswith("nvidia-smi:")] if os.path.exists(os.path.join(raw, "env.txt")) else []
        self.steps = []
        path = os.path.join(raw, "steps.tsv")
        if os.path.exists(path):
            with open(path) as f:
                self.steps = list(csv.DictReader(f, delimiter="\t"))
        self.step_status = {s["step"]: s for s in self.steps}
        self.bench = {}
        for path in glob.glob(os.path.join(raw, "bench", "*.json")):
            rows = [r for r in read_json_lines(path) if "fused" in r]
            if rows:
                model, prec, batch = os.path.basename(path)[:-len(".json")].rsplit(".", 2)
                self.bench[(model, prec, int(batch[1:]))] = rows[-1]
        self.compare = {}
        for path in glob.glob(os.path.join(raw, "compare", "*.log")):
            model, prec, batch = os.path.basename(path)[:-len(".log")].rsplit(".", 2)
            self.compare[(model, prec, int(batch[1:]))] = parse_compare(path)
        self.unfused = {}
        for path in glob.glob(os.path.join(raw, "unfused", "*.log")):
            model, prec, batch = os.path.basename(path)[:-len(".log")].rsplit(".", 2)
            self.unfused[(model, prec, int(batch[1:]))] = parse_compare(path)
        self.startup = {}
        for path in glob.glob(os.path.join(raw, "startup", "*.json")):
            rows = read_json_lines(path)
            if rows:
                self.startup[os.path.basename(path)[:-len(".json")]] = rows[-1]
        self.torch = {}
        self.torch_env = {}
        for r in read_json_lines(os.path.join(raw, "torch", "torch.jsonl")):
            if r.get("kind") == "env" and not self.torch_env:
                self.torch_env = r
            elif r.get("kind") == "torch":
                self.torch[(r["model"], r["mode"], r["dtype"], r["batch"])] = r
        self.torch_warm = {}
        for r in read_json_lines(os.path.join(raw, "torch", "warm.jsonl")):
            if r.get("kind") == "torch_warm":
                self.torch_warm[(r["model"], r["mode"], r["dtype"], r["batch"])] = r
        self.micro_torch = read_json_lines(os.path.join(raw, "micro", "torch.jsonl"))
        self.gemm_tables = read_markdown_tables(os.path.join(raw, "micro", "gemm_vkfuse.md"))
        self.chain_tables = read_markdown_tables(os.path.join(raw, "micro", "chain_vkfuse.md"))
        self.gemm_header = first_line(os.path.join(raw, "micro", "gemm_vkfuse.md"))
        models = {k[0] for k in self.bench} | {k[0] for k in self.compare} | {k[0] for k in self.torch} | set(self.startup)
        self.models = sorted(models)

    def step(self, name):
        """The step's status when it did not finish normally ('skipped', 'timeout', ...), else ''."""
        s = self.step_status.get(name)
        if s is None:
            return "not run"
        return "" if s["status"] == "ok" else s["status"]

    def device(self):
        for r in list(self.bench.values()):
            if r.get("device"):
                return r["device"], r.get("driver", "")
        path = os.path.join(self.raw, "devices.json")
        for r in read_json_lines(path):
            devices = r.get("devices", [r]) if isinstance(r, dict) else []
            for d in devices:
                if isinstance(d, dict) and d.get("name"):
                    return d["name"], d.get("driver", "")
        return "unknown", ""


def first_line(path):
    if not os.path.exists(path):
        return ""
    for line in open(path, errors="replace"):
        if line.strip():
            return line.strip()
    return ""


def parse_compare(path):
    """vkfuse run --compare's verdict: pass / FAIL with the worst relative error, or why not."""
    text = open(path, errors="replace").read()
    relative = []
    for line in text.splitlines():
        m = re.search(r"\s([-+\d.eE]+|inf|nan)\s+(pass|FAIL)(\s|$)", line)
        if m:
            try:
                relative.append(float(m.group(1)))
            except ValueError:
                pass
    worst = max(relative) if relative else None
    if re.search(r"all \d+ outputs pass", text):
        return {"status": "pass", "relative": worst}
    if re.search(r"outputs FAIL", text):
        return {"status": "FAIL", "relative": worst}
    last = [l for l in text.splitlines() if l.strip()]
    return {"status": "error", "relative": worst, "error": last[-1][:160] if last else "no output"}


# ---------------------------------------------------------------------------------------------------
# Numbers

def fmt(value, digits=3):
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if value == 0 or not math.isfinite(value):
        return str(value)
    if abs(value) >= 100:
        return f"{value:.1f}"
    return f"{value:.{digits}f}" if abs(value) >= 0.01 else f"{value:.2e}"


def verdict(ratio, target):
    if ratio is None:
        return ""
    return "PASS" if ratio >= target else "MISS"


class Summary:
    def __init__(self, run):
        self.run = run
        self.csv_rows = []

    def add_csv(self, section, model, precision, batch, config, metric, value, unit, status="", note=""):
        self.csv_rows.append({"section": section, "model": model, "precision": precision, "batch": batch,
                              "config": config, "metric": metric,
                              "value": "" if value is None else (f"{value:.6g}" if isinstance(value, float) else value),
                              "unit": unit, "status": status, "note": note})

    # vkfuse's fused median for one configuration, or (None, reason)
    def vkfuse_ms(self, model, prec, batch):
        r = self.run.bench.get((model, prec, batch))
        if r:
            return r["fused"]["gpu_ms_median"], ""
        return None, self.run.step(f"bench {model} {prec} b{batch}") or "failed"

    def torch_ms(self, model, mode, dtype, batch):
        r = self.run.torch.get((model, mode, dtype, batch))
        if r is None:
            return None, "not run"
        if r.get("status") == "ok":
            return r["ms_median"], ""
        return None, r.get("status", "error")

    def best_torch_fp32(self, model):
        measured = {}
        missing = []
        for mode in TORCH_MODES:
            ms, why = self.torch_ms(model, mode, "fp32", 1)
            if ms is None:
                missing.append(f"{mode}: {why}")
            else:
                measured[mode] = ms
        if not measured:
            return None, None, missing
        mode = min(measured, key=measured.get)
        return measured[mode], mode, missing

    def cell(self, ms, why):
        return fmt(ms, 4) if ms is not None else f"({why})"

    # ----------------------------------------------------------------------------------------------
    def batch1_table(self):
        lines = ["| model | vkfuse fp32 ms | torch eager | torch compile | torch reduce-overhead | best torch fp32 | "
                 f"ratio | ≥{FP32_TARGET:g}x | vkfuse fp16 ms | torch fp16 eager | torch fp16 compile | "
                 f"torch fp16 reduce-overhead | ratio | ≥{FP16_TARGET:g}x |",
                 "|---|---:|---:|---:|---:|---:|---:|:-:|---:|---:|---:|---:|---:|:-:|"]
        self.targets = {}
        for m in self.run.models:
            v32, w32 = self.vkfuse_ms(m, "fp32", 1)
            best, best_mode, missing = self.best_torch_fp32(m)
            r32 = best / v32 if (best and v32) else None
            v16, w16 = self.vkfuse_ms(m, "fp16", 1)
            ro16, wro = self.torch_ms(m, "reduce-overhead", "fp16", 1)
            r16 = ro16 / v16 if (ro16 and v16) else None
            self.targets[m] = {"fp32": (r32, verdict(r32, FP32_TARGET)), "fp16": (r16, verdict(r16, FP16_TARGET))}
            t32 = [self.cell(*self.torch_ms(m, mode, "fp32", 1)) for mode in TORCH_MODES]
            t16 = [self.cell(*self.torch_ms(m, mode, "fp16", 1)) for mode in TORCH_MODES]
            best_text = f"{fmt(best, 4)} ({best_mode}{', of ' + str(3 - len(missing)) + ' measured' if missing else ''})" \
                if best else "(none measured)"
            lines.append(f"| {m} | {self.cell(v32, w32)} | {' | '.join(t32)} | {best_text} | "
                         f"{fmt(r32, 2) + 'x' if r32 else ''} | {verdict(r32, FP32_TARGET)} | {self.cell(v16, w16)} | "
                         f"{' | '.join(t16)} | {fmt(r16, 2) + 'x' if r16 else ''} | {verdict(r16, FP16_TARGET)} |")
            self.add_csv("batch1", m, "fp32", 1, "vkfuse", "gpu_ms_median", v32, "ms", w32)
            for mode in TORCH_MODES:
                for dtype in ("fp32", "fp16"):
                    ms, why = self.torch_ms(m, mode, dtype, 1)
                    self.add_csv("batch1", m, dtype, 1, f"torch {mode}", "ms_median", ms, "ms", why)
            self.add_csv("batch1", m, "fp32", 1, f"best torch ({best_mode})", "ms_median", best, "ms",
                         "" if best else "none measured", "; ".join(missing))
            self.add_csv("target", m, "fp32", 1, "best torch fp32 / vkfuse fp32", "ratio", r32, "x",
                         verdict(r32, FP32_TARGET), f"target >= {FP32_TARGET:g}x")
            self.add_csv("batch1", m, "fp16", 1, "vkfuse", "gpu_ms_median", v16, "ms", w16)
            self.add_csv("target", m, "fp16", 1, "torch reduce-overhead fp16 / vkfuse fp16", "ratio", r16, "x",
                         verdict(r16, FP16_TARGET), f"target >= {FP16_TARGET:g}x")
        return lines

    def batch8_table(self):
        lines = ["| model | vkfuse fp32 ms | torch eager fp32 ms | ratio | vkfuse fp16 ms | torch eager fp16 ms | ratio |",
                 "|---|---:|---:|---:|---:|---:|---:|"]
        for m in self.run.models:
            cells = []
            for prec in ("fp32", "fp16"):
                v, wv = self.vkfuse_ms(m, prec, 8)
                t, wt = self.torch_ms(m, "eager", prec, 8)
                ratio = t / v if (t and v) else None
                shared = "torch-warm" in self.run.step_status.get(f"bench {m} {prec} b8", {}).get("note", "")
                cells += [self.cell(v, wv) + (" *" if shared and v else ""), self.cell(t, wt),
                          fmt(ratio, 2) + "x" if ratio else ""]
                self.add_csv("batch8", m, prec, 8, "vkfuse", "gpu_ms_median", v, "ms", wv)
                self.add_csv("batch8", m, prec, 8, "torch eager", "ms_median", t, "ms", wt)
            lines.append(f"| {m} | {' | '.join(cells)} |")
        return lines

    def fusion_table(self):
        lines = ["| model | precision | batch | dispatches fused / unfused | fused ms | unfused ms | fused speedup | "
                 "intermediates fused / unfused (MiB) | bench load + fused session ms (disk cache warm) |",
                 "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        for (m, prec, batch), r in sorted(self.run.bench.items()):
            f, u = r["fused"], r["unfused"]
            lines.append(f"| {m} | {prec} | {batch} | {f['dispatches']} / {u['dispatches']} | {f['gpu_ms_median']:.4f} | "
                         f"{u['gpu_ms_median']:.4f} | {r.get('speedup', 0):.2f}x | {f['intermediate_bytes'] / 2**20:.1f} / "
                         f"{u['intermediate_bytes'] / 2**20:.1f} | {r.get('load_ms', 0) + f.get('session_create_ms', 0):.1f} |")
            self.add_csv("fusion", m, prec, batch, "vkfuse unfused", "gpu_ms_median", u["gpu_ms_median"], "ms")
            self.add_csv("fusion", m, prec, batch, "vkfuse", "speedup_vs_unfused", r.get("speedup"), "x")
            self.add_csv("fusion", m, prec, batch, "vkfuse", "dispatches", f["dispatches"], "")
        return lines

    def fusion_summary(self):
        """(batch, line) per precision and batch: the geomean of fused over unfused, the smallest gain and the
        models whose fused intermediates exceed the unfused ones (issue 4: geomean >= 1.5x at batch 1, never
        slower, never more memory)."""
        groups = {}
        for (m, prec, batch), r in sorted(self.run.bench.items()):
            if r.get("speedup"):
                groups.setdefault((prec, batch), []).append((r["speedup"], m, r["fused"], r["unfused"]))
        lines = []
        for (prec, batch), rows in sorted(groups.items(), key=lambda item: (item[0][1], item[0][0])):
            geomean = math.exp(sum(math.log(x) for x, *_ in rows) / len(rows))
            smallest, smallest_model = min((x, m) for x, m, *_ in rows)
            larger = [m for _, m, f, u in rows if f["intermediate_bytes"] > u["intermediate_bytes"]]
            target = f" ({'PASS' if geomean >= FUSION_TARGET else 'MISS'}, target ≥{FUSION_TARGET:g}x)" if batch == 1 else ""
            lines.append((batch, f"{prec} batch {batch}, {len(rows)} models: geomean {geomean:.4f}x{target}; smallest "
                                 f"{smallest:.2f}x ({smallest_model}); fused intermediates larger than unfused: "
                                 f"{', '.join(larger) if larger else 'none'}"))
        return lines

    def correctness_table(self):
        lines = ["| model | vkfuse fp32 b1 | vkfuse fp16 b1 | vkfuse fp32 b8 | vkfuse fp16 b8 | vkfuse unfused fp32 / fp16 b1 | "
                 "torch fp32 eager vs output.npy | torch fp16 eager vs fp32 | torch compile / reduce-overhead fp32 "
                 "vs eager | torch compile / reduce-overhead fp16 vs fp32 |",
                 "|---|---|---|---|---|---|---:|---:|---:|---:|"]

        def verdict_text(kind, results, m, prec, batch):
            c = results.get((m, prec, batch))
            status = self.run.step(f"{kind} {m} {prec} b{batch}")
            if c is None or status in ("skipped", "unsupported", "not run"):
                text = f"({status or 'no log'})"
            elif status == "timeout":
                text = "(timeout)"
            elif c["status"] == "error":
                text = "(failed: see the steps below)"
            else:
                text = c["status"] + (f" ({c['relative']:.1e})" if c.get("relative") is not None else "")
            self.add_csv("correctness", m, prec, batch, f"vkfuse run --compare{' --no-fusion' if kind == 'unfused' else ''}",
                         "relative_error", c.get("relative") if c else None, "", text)
            return text

        for m in self.run.models:
            cells = [verdict_text("compare", self.run.compare, m, prec, batch)
                     for prec, batch in (("fp32", 1), ("fp16", 1), ("fp32", 8), ("fp16", 8))]
            cells.append(" / ".join(verdict_text("unfused", self.run.unfused, m, prec, 1) for prec in ("fp32", "fp16")))

            def err(mode, dtype, key):
                r = self.run.torch.get((m, mode, dtype, 1))
                return r.get(key) if r else None
            cells.append(fmt(err("eager", "fp32", "rel_err_vs_reference")))
            cells.append(fmt(err("eager", "fp16", "rel_err_vs_fp32_eager")))
            cells.append(f"{fmt(err('compile', 'fp32', 'rel_err_vs_fp32_eager'))} / "
                         f"{fmt(err('reduce-overhead', 'fp32', 'rel_err_vs_fp32_eager'))}")
            cells.append(f"{fmt(err('compile', 'fp16', 'rel_err_vs_fp32_eager'))} / "
                         f"{fmt(err('reduce-overhead', 'fp16', 'rel_err_vs_fp32_eager'))}")
            for mode in TORCH_MODES:
                for dtype in ("fp32", "fp16"):
                    key = "rel_err_vs_reference" if (mode, dtype) == ("eager", "fp32") else "rel_err_vs_fp32_eager"
                    value = err(mode, dtype, key)
                    if value is not None:
                        self.add_csv("correctness", m, dtype, 1, f"torch {mode}", key, value, "")
            lines.append(f"| {m} | {' | '.join(cells)} |")
        return lines

    def gemm_table(self):
        vk = {}
        for table in self.run.gemm_tables:
            for row in table:
                n, storage = number(column(row, "n") or ""), (column(row, "storage", "dtype") or "").strip()
                tflops = number(column(row, "TFLOP") or "")
                if n and storage in ("f32", "f16") and tflops:
                    vk[(storage, int(n))] = (tflops, column(row, "blocking", "kernel") or "")
        torch = {(r["dtype"], r["n"]): r["tflops"] for r in self.run.micro_torch if r.get("kind") == "torch_gemm"}
        lines = ["| dtype | n | vkfuse TFLOP/s | torch.matmul TFLOP/s | ratio | target | vkfuse blocking |",
                 "|---|---:|---:|---:|---:|:-:|---|"]
        self.gemm_verdicts = {}
        for dtype in ("f32", "f16"):
            for n in sorted({k[1] for k in list(vk) + list(torch) if k[0] == dtype}):
                v, blocking = vk.get((dtype, n), (None, ""))
                t = torch.get((dtype, n))
                ratio = v / t if (v and t) else None
                mark = verdict(ratio, GEMM_TARGETS[dtype])
                self.gemm_verdicts[(dtype, n)] = (ratio, mark)
                lines.append(f"| {dtype} | {n} | {fmt(v, 1) if v else '(' + (self.run.step('vkfuse_bench_gemm') or 'missing') + ')'} | "
                             f"{fmt(t, 1) if t else '(' + (self.run.step('torch_matmul.py') or 'missing') + ')'} | "
                             f"{fmt(ratio, 2) + 'x' if ratio else ''} | {mark} (≥{GEMM_TARGETS[dtype]}x) | {blocking} |")
                self.add_csv("gemm", "", dtype, "", f"n={n}", "vkfuse_tflops", v, "TFLOP/s", "", blocking)
                self.add_csv("gemm", "", dtype, "", f"n={n}", "torch_tflops", t, "TFLOP/s")
                self.add_csv("gemm", "", dtype, "", f"n={n}", "ratio", ratio, "x", mark, f"target >= {GEMM_TARGETS[dtype]}x")
        if len(lines) == 2:
            lines.append(f"| | | ({self.run.step('vkfuse_bench_gemm') or 'no rows'}) | ({self.run.step('torch_matmul.py') or 'no rows'}) | | | |")
        return lines

    def bandwidth_table(self):
        torch = {r["mi"]: r["gbs"] for r in self.run.micro_torch if r.get("kind") == "torch_copy"}
        rows = {}
        for table in self.run.chain_tables:
            for row in table:
                mi = number(column(row, "elements") or "")
                ops = number(column(row, "ops") or "")
                if mi is None or ops is None:
                    continue
                entry = rows.setdefault(int(mi), {"copy": number(column(row, "copy GB/s") or ""), "fused": {}})
                entry["fused"][int(ops)] = number(column(row, "fused GB/s") or "")
        op_counts = sorted({o for e in rows.values() for o in e["fused"]})
        lines = ["| elements (f32) | vkfuse copy GB/s | torch clone GB/s | copy ratio | "
                 + " | ".join(f"vkfuse fused {o}-op chain GB/s | fused / copy" for o in op_counts) + " |",
                 "|---:|---:|---:|---:|" + "---:|---:|" * len(op_counts)]
        for mi in sorted(set(rows) | set(torch)):
            e = rows.get(mi, {"copy": None, "fused": {}})
            t = torch.get(mi)
            ratio = e["copy"] / t if (e["copy"] and t) else None
            cells = [f"{mi} Mi", fmt(e["copy"], 1), fmt(t, 1), fmt(ratio, 2) + "x" if ratio else ""]
            for o in op_counts:
                f = e["fused"].get(o)
                cells += [fmt(f, 1), fmt(f / e["copy"], 2) if (f and e["copy"]) else ""]
                self.add_csv("bandwidth", "", "fp32", "", f"{mi} Mi, {o}-op chain", "vkfuse_fused_gbs", f, "GB/s")
            self.add_csv("bandwidth", "", "fp32", "", f"{mi} Mi", "vkfuse_copy_gbs", e["copy"], "GB/s")
            self.add_csv("bandwidth", "", "fp32", "", f"{mi} Mi", "torch_clone_gbs", t, "GB/s")
            lines.append("| " + " | ".join(cells) + " |")
        if not rows and not torch:
            lines.append(f"| ({self.run.step('vkfuse_bench_chain') or 'no rows'}) | | | |" + " |" * (2 * len(op_counts)))
        return lines

    @staticmethod
    def startup_numbers(r):
        """From one `vkfuse startup --json` line: (load ms, cold ms, warm ms, breakdown text). Cold and
        warm are context + session creation ("total_ms" of each; the sum of the *_ms parts where a
        total is missing); the targets are judged on load + that."""
        def total(obj):
            if not isinstance(obj, dict):
                return None
            if isinstance(obj.get("total_ms"), (int, float)):
                return float(obj["total_ms"])
            # (pipeline_cache_create_ms is a part of context_ms, not beside it)
            parts = [v for k, v in obj.items()
                     if k.endswith("_ms") and k != "pipeline_cache_create_ms" and isinstance(v, (int, float))]
            return float(sum(parts)) if parts else None

        def breakdown(obj):
            keys = [k for k in ("context_ms", "plan_ms", "kernels_ms", "memory_ms", "record_ms") if k in obj] or \
                [k for k, v in obj.items()
                 if k.endswith("_ms") and k not in ("total_ms", "pipeline_cache_create_ms") and isinstance(v, (int, float))]
            text = " + ".join(f"{k[:-3]} {fmt(float(obj[k]), 1)}" for k in keys)
            if isinstance(obj.get("pipeline_cache_create_ms"), (int, float)):
                text += f" (of the context, pipeline cache {fmt(float(obj['pipeline_cache_create_ms']), 1)})"
            if isinstance(obj.get("constants_ms"), (int, float)):
                text += f" (constants {fmt(float(obj['constants_ms']), 1)} beside the kernels)"
            if "kernel_compiles" in obj:
                text += f" ({obj['kernel_compiles']} compiled, {obj.get('kernel_disk_hits', 0)} from disk)"
            return text
        load = r.get("load_ms")
        load = float(load) if isinstance(load, (int, float)) else None
        cold, warm = total(r.get("cold")), total(r.get("warm"))
        text = "; ".join(f"{phase}: {breakdown(r[phase])}" for phase in ("cold", "warm") if isinstance(r.get(phase), dict))
        if r.get("compile_threads"):
            text += f"; {r['compile_threads']} compile threads"
        return load, cold, warm, text

    def startup_table(self):
        lines = ["| model | load ms | cold: context + session ms | warm: context + session ms | cold start ms "
                 f"(load + cold) | warm start ms (load + warm) | resnet50 targets (≤{COLD_TARGET_MS:g} / "
                 f"≤{WARM_TARGET_MS:g} ms) | breakdown, ms | torch first reduce-overhead call, fp32 / fp16 s |",
                 "|---|---:|---:|---:|---:|---:|:-:|---|---:|"]
        self.startup_verdict = None
        for m in self.run.models:
            r = self.run.startup.get(m)
            status = self.run.step(f"startup {m}")
            t32 = self.run.torch.get((m, "reduce-overhead", "fp32", 1), {}).get("first_call_s")
            t16 = self.run.torch.get((m, "reduce-overhead", "fp16", 1), {}).get("first_call_s")
            torch_text = f"{fmt(t32, 2)} / {fmt(t16, 2)}" if (t32 or t16) else ""
            if not r:
                lines.append(f"| {m} | ({status or 'no output'}) | | | | | | | {torch_text} |")
                self.add_csv("startup", m, "fp32", 1, "vkfuse", "cold_start_ms", None, "ms", status or "no output")
                continue
            load, cold, warm, breakdown = self.startup_numbers(r)
            cold_total = cold + (load or 0.0) if cold is not None else None
            warm_total = warm + (load or 0.0) if warm is not None else None
            mark, cold_mark, warm_mark = "", "", ""
            if m == "resnet50":
                cold_mark = "PASS" if cold_total is not None and cold_total <= COLD_TARGET_MS else "MISS"
                warm_mark = "PASS" if warm_total is not None and warm_total <= WARM_TARGET_MS else "MISS"
                mark = f"cold {cold_mark}, warm {warm_mark}"
                self.startup_verdict = (cold_total, warm_total, cold_mark, warm_mark)
            lines.append(f"| {m} | {fmt(load, 1)} | {fmt(cold, 1)} | {fmt(warm, 1)} | {fmt(cold_total, 1)} | "
                         f"{fmt(warm_total, 1)} | {mark} | {breakdown} | {torch_text} |")
            self.add_csv("startup", m, "fp32", 1, "vkfuse", "load_ms", load, "ms")
            self.add_csv("startup", m, "fp32", 1, "vkfuse", "cold_context_session_ms", cold, "ms")
            self.add_csv("startup", m, "fp32", 1, "vkfuse", "warm_context_session_ms", warm, "ms")
            self.add_csv("startup", m, "fp32", 1, "vkfuse", "cold_start_ms", cold_total, "ms", cold_mark,
                         f"target <= {COLD_TARGET_MS:g} ms" if cold_mark else "")
            self.add_csv("startup", m, "fp32", 1, "vkfuse", "warm_start_ms", warm_total, "ms", warm_mark,
                         f"target <= {WARM_TARGET_MS:g} ms" if warm_mark else "")
        return lines

    def profiles(self):
        lines = []
        for m in self.run.models:
            for prec in ("fp32", "fp16"):
                ratio, mark = self.targets.get(m, {}).get(prec, (None, ""))
                if mark != "MISS":
                    continue
                r = self.run.bench.get((m, prec, 1))
                target = f"{FP32_TARGET:g}x the best torch fp32" if prec == "fp32" else "torch reduce-overhead fp16"
                lines.append(f"**{m}, {prec}, batch 1** ({fmt(ratio, 2)}x of {target}; fused "
                             f"{r['fused']['gpu_ms_median']:.4f} ms in {r['fused']['dispatches']} dispatches):")
                lines.append("")
                lines.append("| # | fused group | GPU ms | share |")
                lines.append("|---:|---|---:|---:|")
                total = r["fused"]["gpu_ms_median"] or 1.0
                for i, g in enumerate(r.get("slowest_fused_groups", [])[:10], 1):
                    lines.append(f"| {i} | {g['label']} | {g['gpu_ms']:.4f} | {100 * g['gpu_ms'] / total:.0f}% |")
                    self.add_csv("profile", m, prec, 1, g["label"], "gpu_ms", g["gpu_ms"], "ms", "", f"rank {i}")
                lines.append("")
        return lines or ["No model missed a batch-1 target that was measured."]

    def problems(self):
        lines = []
        for s in self.run.steps:
            if s["status"] != "ok":
                lines.append(f"- {s['phase']} / {s['step']}: **{s['status']}**"
                             f"{' (rc ' + s['rc'] + ')' if s['rc'] not in ('-', '0') else ''}"
                             f"{': ' + s['note'] if s['note'] else ''}")
        for (m, mode, dtype, batch), r in sorted(self.run.torch.items()):
            if r.get("status") != "ok":
                lines.append(f"- torch / {m} {mode} {dtype} b{batch}: **{r.get('status')}**"
                             f"{': ' + r['error'] if r.get('error') else ''}")
        warm_bad = [f"{k[0]} {k[1]} {k[2]}: {r.get('status')}" for k, r in sorted(self.run.torch_warm.items())
                    if r.get("status") != "ok"]
        if warm_bad:
            lines.append(f"- torch-warm (cache filling, not a measurement): {'; '.join(warm_bad)}")
        return lines or ["- none: every step ran to the end"]

    # ----------------------------------------------------------------------------------------------
    def headline(self):
        lines = ["| model | vkfuse fp32 b1 ms | best PyTorch fp32 b1 ms | speedup (≥2x) | vkfuse fp16 b1 ms | "
                 "PyTorch reduce-overhead fp16 ms | speedup (≥1x) |", "|---|---:|---:|---:|---:|---:|---:|"]
        for m in self.run.models:
            v32, w32 = self.vkfuse_ms(m, "fp32", 1)
            best, mode, _ = self.best_torch_fp32(m)
            r32, k32 = self.targets[m]["fp32"]
            v16, w16 = self.vkfuse_ms(m, "fp16", 1)
            ro16, wro = self.torch_ms(m, "reduce-overhead", "fp16", 1)
            r16, k16 = self.targets[m]["fp16"]
            lines.append(f"| {m} | {self.cell(v32, w32)} | {fmt(best, 4) + ' (' + mode + ')' if best else '(not measured)'} | "
                         f"{fmt(r32, 2) + 'x ' + k32 if r32 else ''} | {self.cell(v16, w16)} | {self.cell(ro16, wro)} | "
                         f"{fmt(r16, 2) + 'x ' + k16 if r16 else ''} |")
        extra = []
        gemm = [f"{d} {n}: {fmt(r, 2)}x {k}" for (d, n), (r, k) in
                sorted(self.gemm_verdicts.items(), key=lambda item: (item[0][0] != "f32", item[0][1])) if r]
        if gemm:
            extra.append(f"GEMM vs torch.matmul (fp32 ≥0.9x, fp16 ≥0.6x): {', '.join(gemm)}")
        if self.startup_verdict:
            cold, warm, cold_mark, warm_mark = self.startup_verdict
            extra.append(f"resnet50 start (load + context + session): cold {fmt(cold, 1)} ms {cold_mark} "
                         f"(≤{COLD_TARGET_MS:g}), warm {fmt(warm, 1)} ms {warm_mark} (≤{WARM_TARGET_MS:g})")
        count = lambda prec: sum(1 for t in self.targets.values() if t[prec][1] == "PASS")
        measured = lambda prec: sum(1 for t in self.targets.values() if t[prec][1])
        extra.insert(0, f"fp32 target met by {count('fp32')} of {measured('fp32')} models measured, fp16 target by "
                        f"{count('fp16')} of {measured('fp16')} ({len(self.run.models)} models in the run)")
        extra += [f"FusionBench {line}" for batch, line in self.fusion_summary() if batch == 1]
        return lines + [""] + [f"- {e}" for e in extra]

    def markdown(self):
        run = self.run
        device, driver = run.device()
        te = run.torch_env
        batch1, batch8, correctness = self.batch1_table(), self.batch8_table(), self.correctness_table()
        gemm, bandwidth, startup, fusion = self.gemm_table(), self.bandwidth_table(), self.startup_table(), self.fusion_table()
        date = run.env.get("date_utc", "unknown")
        md = [f"# vkfuse vs PyTorch on the {device} (issue 5's side-by-side run)", "",
              f"- device: {device}; Vulkan driver: {driver}; nvidia-smi: {'; '.join(run.nvidia_smi) or 'n/a'}",
              f"- date: {date}; commit: {run.env.get('commit', 'unknown')}; host: {run.env.get('host', '')}",
              f"- PyTorch: torch {te.get('torch', '?')}, torchvision {te.get('torchvision', '?')}, CUDA {te.get('cuda', '?')}, "
              f"cuDNN {te.get('cudnn', '?')}, Triton {te.get('triton', '?')}; TF32 off for fp32 (matmul "
              f"{te.get('tf32_matmul')}, cuDNN {te.get('tf32_cudnn')}), float32 matmul precision "
              f"{te.get('float32_matmul_precision', '?')}, cudnn.benchmark {te.get('cudnn_benchmark')}",
              f"- command: `bash .device/run.sh bash bench/h100_session.sh` (budget {run.env.get('budget_s', '?')} s; "
              "made by scripts/bench_h100.sh), summarized by bench/summarize.py", "",
              "## Method", "",
              f"- Models: the {len(run.models)} reference models exported on that machine by scripts/export_models.py (torchvision, "
              "random weights, fixed seed, calibrated), ONNX opset 17. PyTorch runs the same models rebuilt by the "
              "same code (its fp32 eager output is checked against the exported output.npy) on the same input "
              "(input.npy, repeated to the batch).",
              "- vkfuse: `vkfuse bench MODEL --batch N [--precision fp16] --json`: median GPU time of back-to-back "
              "replays of the recorded dispatches (Vulkan timestamps, no transfers), after a 0.5 s warm-up; 7 "
              "measurements at batch 1, 5 at batch 8. fp16 = float tensors stored as f16 inside the graph, fp32 "
              "interface. Fused numbers are vkfuse's; the unfused ones are in the FusionBench table.",
              "- PyTorch: eager, torch.compile and torch.compile(mode=\"reduce-overhead\") under torch.inference_mode; "
              "fp16 = model.half() with a half input. torch.compile and reduce-overhead are measured at batch 1 "
              "only (the targets need batch 1; compiling 13 models x 2 dtypes x 2 batches x 2 modes does not fit one "
              "600 s command); eager at batch 1 and 8. Median of 10 CUDA-event timed loops of back-to-back "
              "forwards (each >= ~20 ms) after a warm-up; reduce-overhead marks a CUDA-graph step before each call.",
              f"- Scheduling inside the one command: the GEMM comparisons first, on a quiet GPU (the models were "
              f"exported on the CPU meanwhile); then {run.env.get('torch_warmers', '?')} background processes (nice "
              "10) filled Inductor's caches (TORCHINDUCTOR_CACHE_DIR: torch.compile and reduce-overhead of every "
              "model and dtype, one forward each) while vkfuse ran its untimed correctness checks (which also "
              "fill its kernel cache) and its batch-8 measurements; vkfuse's cold/warm start ran after that with "
              "the CPU quiet; then vkfuse's batch-1 measurements held a GPU lock while "
              f"{run.env.get('torch_measurers', '?')} PyTorch processes built the models on the CPU (none of them "
              "touched the GPU before the lock had been free once), then compiled them from the warm caches, "
              "and each of those took the lock for its warm-up and timed loops, one at a time. "
              "vkfuse's numbers are GPU timestamps (CPU load does not enter them); PyTorch's are CUDA events "
              "around back-to-back calls, with at most the other PyTorch processes' tracing on the CPU.",
              "- GEMM: `vkfuse_bench_gemm --dtype both` (one MatMul node, median GPU time) against "
              "`bench/torch_matmul.py` (cuBLAS; TF32 off). Bandwidth: `vkfuse_bench_chain` (copy kernel and fused "
              "elementwise chains; one f32 read + one write counted) against torch's clone.",
              "", "## Targets at batch 1", ""] + batch1 + [
              "", "Cells in parentheses give why a number is missing. \"ratio\" is PyTorch's time over vkfuse's "
                  "(above 1: vkfuse is faster).", "",
              "## Batch 8 (PyTorch eager only)", ""] + batch8 + [
              "", "\\* measured while the PyTorch cache warmers compiled: their Triton autotuning shared the GPU at "
                  "times, which can only make vkfuse's number larger.",
              "", "## Correctness", "",
              "vkfuse against torch's output (`vkfuse run --compare`: worst max-abs error relative to the "
              "reference's largest magnitude; passes at 1e-3 in fp32 and 3e-2 in fp16, `vkfuse run`'s defaults; batch 8 compares against "
              "the batch-1 output repeated). PyTorch's own checks are reported, not asserted.", ""] + correctness + [
              "", "## GEMM against torch.matmul", "", f"vkfuse: {run.gemm_header}", ""] + gemm + [
              "", "## Bandwidth", ""] + bandwidth + [
              "", "## Cold and warm start", "",
              "`vkfuse startup MODEL --json`, with the CPU quiet: the model loaded once, then a cold start (a new "
              "Context and Session on empty kernel, pipeline and driver shader caches: plan, compile, pipelines, "
              "memory) and a warm start (the same on the now-filled disk caches). The targets are judged on "
              "load + context + session, the whole way from the file to a ready session; the columns before give "
              "the parts. For scale, PyTorch's first reduce-overhead call (Inductor's caches already warm, "
              "CUDA graphs recorded on it) is beside it.", ""] + startup + [
              "", "## FusionBench (vkfuse fused vs unfused)", ""] + fusion + [""] + \
            [f"- {line}" for _, line in self.fusion_summary()] + [
              "", "## Profile of the models that miss a target", "",
              "The 10 slowest fused groups of one profiled run (`vkfuse bench`'s slowest_fused_groups).", ""] + \
            self.profiles() + ["## Skipped, failed or incomplete steps", ""] + self.problems()
        return "\n".join(md) + "\n"


def open_raw(path):
    if os.path.isdir(path):
        return path, None
    tmp = tempfile.TemporaryDirectory()
    with tarfile.open(path) as tar:
        tar.extractall(tmp.name)
    inner = os.path.join(tmp.name, "raw")
    return (inner if os.path.isdir(inner) else tmp.name), tmp


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("raw", help="the session's raw/ folder or raw.tar.gz")
    parser.add_argument("--results-dir", help="writes h100_<date>[_<commit>].md and .csv here")
    parser.add_argument("--out-md")
    parser.add_argument("--out-csv")
    parser.add_argument("--headline")
    args = parser.parse_args()
    raw, keep = open_raw(args.raw)
    run = Run(raw)
    summary = Summary(run)
    markdown = summary.markdown()
    headline = "\n".join(summary.headline()) + "\n"
    out_md, out_csv = args.out_md, args.out_csv
    if args.results_dir:
        # h100_<date>, or h100_<date>_<commit> when that date already has a run: never overwrite results.
        date = run.env.get("date_utc", "unknown")[:10]
        stem = os.path.join(args.results_dir, f"h100_{date}")
        if os.path.exists(stem + ".md") or os.path.exists(stem + ".csv"):
            stem += "_" + run.env.get("commit", "unknown")[:7]
        out_md = out_md or stem + ".md"
        out_csv = out_csv or stem + ".csv"
    if out_md:
        open(out_md, "w").write(markdown)
    if out_csv:
        with open(out_csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=["section", "model", "precision", "batch", "config", "metric",
                                                   "value", "unit", "status", "note"])
            writer.writeheader()
            writer.writerows(summary.csv_rows)
    if args.headline:
        open(args.headline, "w").write(headline)
    print(headline, end="")
    if out_md:
        print(f"\nwrote {out_md}" + (f" and {out_csv}" if out_csv else ""), file=sys.stderr)


if __name__ == "__main__":
    main()
