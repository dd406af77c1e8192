#!/usr/bin/env bash
# FusionBench over a model set: `vkfuse bench --json` for every MODELS_DIR/<name>/model.onnx, then one
# Markdown table (and the raw JSON lines beside it).
#   bench/fusion_bench.sh MODELS_DIR OUT.md [VKFUSE_BINARY] [extra vkfuse bench flags...]
# The binary defaults to `vkfuse` on PATH. Measures only; asserts nothing.
set -euo pipefail
models_dir=${1:?usage: fusion_bench.sh MODELS_DIR OUT.md [VKFUSE_BINARY] [flags...]}
out=${2:?usage: fusion_bench.sh MODELS_DIR OUT.md [VKFUSE_BINARY] [flags...]}
vkfuse=${3:-vkfuse}
shift $(( $# < 3 ? $# : 3 ))
jsonl=${out%.md}.jsonl
: > "$jsonl"
for dir in "$models_dir"/*/; do
  name=$(basename "$dir")
  model=$dir/model.onnx
  [ -f "$model" ] || continue
  # With --batch: the graph with a symbolic batch where export_models.py wrote one.
  [[ " $* " == *" --batch "* && -f "$dir/model_batched.onnx" ]] && model=$dir/model_batched.onnx
  echo "== $name" >&2
  if ! "$vkfuse" bench "$model" --json "$@" >> "$jsonl"; then
    echo "{\"model\": \"$model\", \"error\": true}" >> "$jsonl"
  fi
done
python3 - "$jsonl" "$out" <<'PY'
import json, math, os, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
ok = [r for r in rows if not r.get("error")]
out = []
if ok:
    r0 = ok[0]
    out.append(f"- device: {r0['device']} ({r0['driver']}); precision {r0['precision']}, batch {r0['batch']}")
out.append("- GPU ms: median of `vkfuse bench` measurements (back-to-back replays of the recorded dispatches)")
out.append("")
out.append("| model | ONNX ops | dispatches fused / unfused | fused ms | unfused ms | fused speedup | intermediates fused / unfused (MiB) | slowest fused group |")
out.append("|---|---:|---:|---:|---:|---:|---:|---|")
for r in rows:
    name = os.path.basename(os.path.dirname(os.path.normpath(r["model"])))
    if r.get("error"):
        out.append(f"| {name} | failed | | | | | | |")
        continue
    f, u = r["fused"], r["unfused"]
    top = r["slowest_fused_groups"][0] if r["slowest_fused_groups"] else {"label": "", "gpu_ms": 0}
    out.append(f"| {name} | {r['onnx_ops']} | {f['dispatches']} / {u['dispatches']} | {f['gpu_ms_median']:.4f} | "
               f"{u['gpu_ms_median']:.4f} | {r['speedup']:.2f}x | {f['intermediate_bytes']/2**20:.1f} / "
               f"{u['intermediate_bytes']/2**20:.1f} | {top['label']} ({top['gpu_ms']:.3f} ms) |")
if ok:
    geo = math.exp(sum(math.log(r["speedup"]) for r in ok) / len(ok))
    out.append("")
    out.append(f"geomean fused speedup over {len(ok)} models: {geo:.2f}x; slowest ratio: "
               f"{min(r['speedup'] for r in ok):.2f}x")
open(sys.argv[2], "w").write("\n".join(out) + "\n")
print("\n".join(out))
PY
