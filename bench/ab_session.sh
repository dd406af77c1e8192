#!/usr/bin/env bash
# An A/B call on the lent GPU machine: two builds of vkfuse side by side in ONE command, so that a change
# is judged against its base on the same machine, clocks and driver (timings from different calls or
# machines move by several percent; see bench/results). scripts/ab_h100.sh builds and bundles both and
# prints the call:
#   bash .device/run.sh bash bench/ab_session.sh
# Variant a is the base (a commit), b the change (the working tree); .device/AB names both. Measures
# and reports; asserts nothing.
#
# Steps, each under `timeout` and skipped (and said so) once BUDGET_S is spent:
#   export   AB_MODELS with this machine's torch (scripts/export_models.py, background lanes)
#   gemm     vkfuse_bench_gemm_a and _b on AB_GEMM_SIZES (none by default) in AB_GEMM_DTYPE, with AB_TILES
#   compare  each model, precision and batch: `vkfuse run --compare` against torch's output, per variant
#   bench    AB_ROUNDS rounds of `vkfuse bench --json`, a then b in each round (interleaved, so that a
#            drift of the GPU's clocks meets both)
# Environment: OUT (default /tmp/vkfuse-ab), WORK (/tmp/vkfuse-ab-work), BUDGET_S (540), AB_MODELS
# (resnet50,vit_b_16), AB_PRECISIONS (fp16), AB_BATCHES (1), AB_ROUNDS (2), AB_GEMM_SIZES, AB_GEMM_DTYPE
# (f16), AB_TILES (auto), VKFUSE_MODELS_DIR (models already exported: no export step), PYTHON (python3).
# Back under $OUT: ab.md (the tables, b / a ratios), ab.jsonl (one line per bench run), ab.log.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/vkfuse-ab}
work=${WORK:-/tmp/vkfuse-ab-work}
budget=${BUDGET_S:-540}
python=${PYTHON:-python3}
models=${AB_MODELS:-resnet50,vit_b_16}
precisions=${AB_PRECISIONS:-fp16}
batches=${AB_BATCHES:-1}
rounds=${AB_ROUNDS:-2}
models_dir=${VKFUSE_MODELS_DIR:-$work/models}
mkdir -p "$out" "$work" "$models_dir"
: > "$out/ab.jsonl"
start=$(date +%s)
deadline=$(( start + budget - 10 ))
log() { printf '[+%3ds] %s\n' $(( $(date +%s) - start )) "$*" | tee -a "$out/ab.log"; }
# step LIMIT_S CMD...: CMD under `timeout`, never past the deadline; 125 (skipped) when under 5 s are left.
step() {
  local limit=$1 left=$(( deadline - $(date +%s) ))
  shift
  if (( left < 5 )); then log "skipped (time budget): $*"; return 125; fi
  (( limit > left )) && limit=$left
  timeout -k 5 "$limit" "$@"
}
for v in a b; do
  command -v "vkfuse_$v" >/dev/null || { echo "ab_session.sh: no vkfuse_$v on PATH (made by scripts/ab_h100.sh)" >&2; exit 2; }
done
log "a: $(sed -n 1p "$root/.device/AB" 2>/dev/null || echo unknown); b: $(sed -n 2p "$root/.device/AB" 2>/dev/null || echo unknown)"
log "$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi')"

pids=()
if [ -z "${VKFUSE_MODELS_DIR:-}" ]; then
  lanes=("" "" "")
  i=0
  for m in ${models//,/ }; do
    [ -f "$models_dir/$m/model.onnx" ] && continue  # a machine still warm from an earlier call keeps $WORK
    lanes[$((i % 3))]+="${lanes[$((i % 3))]:+,}$m"
    i=$((i + 1))
  done
  for lane in "${lanes[@]}"; do
    [ -n "$lane" ] || continue
    OMP_NUM_THREADS=4 step 300 "$python" "$root/scripts/export_models.py" --out "$models_dir" --models "$lane" \
      >> "$out/ab.log" 2>&1 &
    pids+=($!)
  done
fi

{
  echo "# A/B: a = $(sed -n 1p "$root/.device/AB" 2>/dev/null || echo unknown), b = $(sed -n 2p "$root/.device/AB" 2>/dev/null || echo unknown)"
  echo
  echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null); $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$out/ab.md"

if [ -n "${AB_GEMM_SIZES:-}" ]; then
  for v in a b; do
    log "gemm $v"
    echo -e "\n## vkfuse_bench_gemm, variant $v\n" >> "$out/ab.md"
    VKFUSE_CACHE_DIR=$work/cache-$v step 200 "vkfuse_bench_gemm_$v" --sizes "$AB_GEMM_SIZES" \
      --dtype "${AB_GEMM_DTYPE:-f16}" --tiles "${AB_TILES:-auto}" 2>> "$out/ab.log" | grep '^|' >> "$out/ab.md"
  done
fi

for pid in "${pids[@]}"; do wait "$pid"; done
for m in ${models//,/ }; do
  dir=$models_dir/$m
  model=$dir/model.onnx
  [ -f "$dir/model_batched.onnx" ] && model=$dir/model_batched.onnx  # a symbolic batch (export_models.py)
  if [ ! -f "$model" ]; then log "$m: not exported (see ab.log)"; continue; fi
  for precision in ${precisions//,/ }; do
    for batch in ${batches//,/ }; do
      for v in a b; do
        # Correctness at batch 1 against torch's output (the batch-8 bench reuses the same kernels' code).
        ((batch == 1)) || continue
        result=$(VKFUSE_CACHE_DIR=$work/cache-$v step 120 "vkfuse_$v" run "$dir/model.onnx" --input "input=$dir/input.npy" \
                   --precision "$precision" --compare "$dir" 2>&1 | tail -1)
        log "$m $precision b$batch $v compare: $result"
      done
      for ((r = 1; r <= rounds; ++r)); do
        for v in a b; do
          json=$(VKFUSE_CACHE_DIR=$work/cache-$v step 120 "vkfuse_$v" bench "$model" --batch "$batch" \
                   --precision "$precision" --json 2> "$work/stderr") ||
            { log "$m $precision b$batch $v: bench failed: $(tail -1 "$work/stderr")"; continue; }
          echo "{\"variant\": \"$v\", \"round\": $r, \"bench\": $json}" >> "$out/ab.jsonl"
        done
      done
    done
  done
done

# The table: per model, precision and batch, each variant's fused and unfused medians over the rounds
# (their spread beside them) and b / a.
"$python" - "$out/ab.jsonl" >> "$out/ab.md" <<'PY'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    row = json.loads(line)
    b = row["bench"]
    key = (b["model"].split("/")[-2] if "/" in b["model"] else b["model"], b["precision"], b["batch"])
    runs.setdefault(key, {}).setdefault(row["variant"], []).append((b["fused"]["gpu_ms_median"], b["unfused"]["gpu_ms_median"],
                                                                   b["fused"]["dispatches"]))
def cell(values):
    return f"{statistics.median(values):.4f} ({min(values):.4f}-{max(values):.4f})" if values else "-"
print("\n## vkfuse bench, GPU ms: median over the rounds (min-max)\n")
print("| model | precision | batch | a fused | b fused | b / a fused | a unfused | b unfused | dispatches a / b |")
print("|---|---|---:|---:|---:|---:|---:|---:|---|")
for (model, precision, batch), by in sorted(runs.items()):
    a, b = by.get("a", []), by.get("b", [])
    ratio = f"{statistics.median(x[0] for x in b) / statistics.median(x[0] for x in a):.3f}" if a and b else "-"
    disp = f"{a[0][2] if a else '-'} / {b[0][2] if b else '-'}"
    print(f"| {model} | {precision} | {batch} | {cell([x[0] for x in a])} | {cell([x[0] for x in b])} | {ratio} | "
          f"{cell([x[1] for x in a])} | {cell([x[1] for x in b])} | {disp} |")
PY
log "done"
cat "$out/ab.md"
