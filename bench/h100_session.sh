#!/usr/bin/env bash
# The side-by-side benchmark of issue 5 on the lent GPU machine, as ONE command that ends inside the
# 600 s a command may run there. scripts/bench_h100.sh builds, bundles and prints the exact call:
#   bash .device/run.sh bash bench/h100_session.sh
# It measures and reports; it asserts nothing.
#
# Phases (PHASES=a,b,... runs a subset, in this order; default: all):
#   export      the model set with this machine's torch (scripts/export_models.py, 3 processes, background)
#   micro       vkfuse_bench_gemm f32+f16 and torch.matmul on a quiet GPU, then torch's clone and
#               vkfuse_bench_chain
#   torch-warm  from the end of the GEMM comparisons, background processes (niced) fill Inductor's on-disk
#               caches: torch.compile and reduce-overhead of every model, fp32 and fp16, batch 1, one
#               forward each (their Triton autotuning uses the GPU now and then: nothing timed on the
#               GPU runs beside them except batch 8, marked so)
#   compare     meanwhile, `vkfuse run --compare` against torch's output, fused and --no-fusion, fp32 and
#               fp16, batch 1 (also fills vkfuse's kernel cache for bench)
#   b8          then `vkfuse bench` and compare at batch 8 while torch-warm still runs; the rest at the end
#   startup     `vkfuse startup --json` per model (cold, then warm from the disk cache), CPU quiet
#   bench       `vkfuse bench --json`, fp32 and fp16, batch 1, holding the GPU lock
#   torch       PyTorch eager / compile / reduce-overhead (bench/torch_models.py): 6 processes build their
#               models meanwhile, touch the GPU once vkfuse is done, trace and compile from the warm caches
#               while one at a time holds the GPU lock to be timed
#   summarize   bench/summarize.py over the raw outputs
# Every step runs under `timeout`, every phase under a deadline inside BUDGET_S; a step that does not
# fit is skipped and recorded as skipped in steps.tsv (the summary lists it). Progress lines carry
# the time since the start.
#
# Environment: OUT (default /tmp/vkfuse-out), BUDGET_S (default 540), WORK (default /tmp/vkfuse-bench),
# VKFUSE_MODELS (a comma-separated subset), VKFUSE_MODELS_DIR (exported models; default $WORK/models),
# PRECISIONS (default fp32,fp16), TORCH_DEVICE (cuda; cpu for a local dry run), TORCH_WARMERS (7),
# TORCH_MEASURERS (6), GEMM_SIZES (1024,2048,4096,8192), CHAIN_FLAGS (--runs 5), PYTHON (python3).
# Back to the caller, under $OUT (at most 8 files): session.log, raw.tar.gz (every raw output),
# summary.md, summary.csv, headline.md.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/vkfuse-out}
work=${WORK:-/tmp/vkfuse-bench}
budget=${BUDGET_S:-540}
python=${PYTHON:-python3}
vkfuse=${VKFUSE:-vkfuse}
models_dir=${VKFUSE_MODELS_DIR:-$work/models}
precisions=${PRECISIONS:-fp32,fp16}
torch_device=${TORCH_DEVICE:-cuda}
gemm_sizes=${GEMM_SIZES:-1024,2048,4096,8192}
phases=,${PHASES:-export,micro,torch-warm,compare,b8,startup,bench,torch,summarize},
raw=$work/raw
for p in ${phases//,/ }; do
  case $p in
    export|micro|torch-warm|compare|bench|b8|startup|torch|summarize) ;;
    *) echo "h100_session.sh: unknown phase '$p'" >&2; exit 2 ;;
  esac
done
rm -rf "$raw"  # a machine still warm from an earlier call keeps $WORK: its models and caches, not its results
mkdir -p "$out" "$raw"/{micro,compare,unfused,bench,startup,torch} "$work/b8"
export VKFUSE_CACHE_DIR=$work/vkfuse-cache TORCHINDUCTOR_CACHE_DIR=$work/inductor-cache PYTHONUNBUFFERED=1

start=$(date +%s)
# Phase deadlines, in seconds from the start (fractions of the budget; see bench/README.md).
mark() { echo $(( start + budget * $1 / 100 )); }
micro_end=$(mark 20); export_end=$(mark 25); warm_end=$(mark 55); startup_end=$(mark 62); torch_end=$(mark 95)
final_end=$(( start + budget - 10 ))  # the last 10 s: summary and packing

log() { printf '[%s +%3ds] %s\n' "$(date -u +%H:%M:%S)" $(( $(date +%s) - start )) "$*" | tee -a "$out/session.log"; }
has_phase() { [[ $phases == *",$1,"* ]]; }
printf 'phase\tstep\tstatus\trc\tseconds\tnote\n' > "$raw/steps.tsv"
record() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" >> "$raw/steps.tsv"; }

# run_step PHASE STEP LIMIT_S PHASE_END STDOUT STDERR CMD...: CMD under `timeout`, at most LIMIT_S and
# never past PHASE_END; skipped (and recorded so) when fewer than 5 s are left.
run_step() {
  local phase=$1 step=$2 limit=$3 until=$4 stdout=$5 stderr=$6
  shift 6
  local left=$(( until - $(date +%s) ))
  if (( left < 5 )); then
    record "$phase" "$step" skipped - 0 "the phase's time budget was spent"
    log "$step: skipped (time budget)"
    return 125
  fi
  (( limit > left )) && limit=$left
  local t0=$(date +%s%N) rc status
  timeout -k 5 "$limit" "$@" >>"$stdout" 2>>"$stderr"
  rc=$?
  local tenths=$(( ($(date +%s%N) - t0) / 100000000 ))
  local seconds=$((tenths / 10)).$((tenths % 10))
  case $rc in
    0) status=ok ;;
    124|137) status=timeout ;;
    *) status=failed ;;
  esac
  local note=
  case $status in
    timeout) note="over its limit of ${limit} s" ;;
    failed) note=$(grep -v '^\s*$' "$stderr" 2>/dev/null | tail -1 | tr '\t' ' ' | cut -c1-200) ;;
  esac
  [ -n "${step_note:-}" ] && note="${note:+$note; }$step_note"
  record "$phase" "$step" "$status" "$rc" "$seconds" "$note"
  log "$step: $status (rc $rc, ${seconds} s)${note:+: $note}"
  return $rc
}

pack() {
  cp "$out/session.log" "$raw/session.log" 2>/dev/null
  tar -czf "$out/raw.tar.gz" -C "$work" raw 2>/dev/null
}
trap 'log "stopped by a signal"; pack; exit 130' INT TERM

# --- environment -----------------------------------------------------------------------------------
{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(cat "$root/.device/COMMIT" 2>/dev/null || git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "host: $(uname -srm), $(nproc) CPUs"
  echo "budget_s: $budget"
  echo "phases: $phases"
  echo "torch_warmers: ${TORCH_WARMERS:-7}"
  echo "torch_measurers: ${TORCH_MEASURERS:-6}"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm,temperature.gpu,power.draw \
    --format=csv 2>&1 | sed 's/^/nvidia-smi: /'
  "$python" -c "import torch, torchvision; print('torch:', torch.__version__, 'torchvision:', torchvision.__version__)" 2>&1
} > "$raw/env.txt"
"$vkfuse" devices --json > "$raw/devices.json" 2>"$raw/devices.log" || "$vkfuse" devices > "$raw/devices.txt" 2>&1
log "start: budget ${budget} s, phases ${phases}, $(grep '^commit' "$raw/env.txt")"

if [ -n "${VKFUSE_MODELS:-}" ]; then models=${VKFUSE_MODELS//,/ }
else models=$("$python" -c "import sys; sys.path.insert(0, '$root/scripts'); import export_models; print(' '.join(export_models.MODELS))"); fi
models_csv=${models// /,}
# What this vkfuse supports, from its usage texts (no GPU needed).
usage=$("$vkfuse" bench --help 2>&1); fp16_ok=0; [[ $usage == *fp16* ]] && fp16_ok=1
usage=$("$vkfuse" startup --help 2>&1); startup_ok=1; [[ $usage == *"unknown command"* ]] && startup_ok=0
log "models: $models; vkfuse --precision fp16: $( ((fp16_ok)) && echo yes || echo unsupported ); vkfuse startup: $( ((startup_ok)) && echo yes || echo unsupported )"

# --- export (background), then micro on a quiet GPU; torch-warm starts after the GEMM comparisons -----------
export_pids=()
if has_phase export; then
  mkdir -p "$models_dir"
  lanes=("" "" "")
  i=0
  for m in $models; do lanes[$((i % 3))]+="${lanes[$((i % 3))]:+,}$m"; i=$((i + 1)); done
  for lane in "${lanes[@]}"; do
    [ -n "$lane" ] || continue
    OMP_NUM_THREADS=4 timeout -k 5 $(( export_end - $(date +%s) )) \
      "$python" "$root/scripts/export_models.py" --out "$models_dir" --models "$lane" >> "$raw/export.log" 2>&1 &
    export_pids+=($!)
  done
  log "export: ${#export_pids[@]} processes started"
fi
warm_pid=
start_warmers() {
  # Niced: vkfuse's compiles and the export come first. Each child compiles for minutes before its
  # first GPU work (Triton autotuning at the first call), which is why the GEMM comparisons run first.
  nice -n 10 timeout -k 5 $(( warm_end - $(date +%s) + 20 )) \
    "$python" "$root/bench/torch_models.py" --warm-only --parallel "${TORCH_WARMERS:-7}" --compile-threads 2 \
    --device "$torch_device" --models-dir "$models_dir" --models "$models_csv" --dtypes "$precisions" \
    --deadline "$warm_end" --model-timeout 240 --out "$raw/torch/warm.jsonl" >> "$raw/torch/warm.log" 2>&1 &
  warm_pid=$!
  log "torch-warm: pool started (pid $warm_pid, until +$(( warm_end - start )) s)"
}
warm_running() { [ -n "$warm_pid" ] && kill -0 "$warm_pid" 2>/dev/null; }

if has_phase micro; then
  run_step micro vkfuse_bench_gemm 120 "$micro_end" "$raw/micro/gemm_vkfuse.md" "$raw/micro/gemm_vkfuse.log" \
    vkfuse_bench_gemm --sizes "$gemm_sizes" --dtype both
  run_step micro torch_matmul.py 60 "$micro_end" "$raw/micro/torch.jsonl" "$raw/micro/torch.log" \
    "$python" "$root/bench/torch_matmul.py" --sizes "$gemm_sizes" --dtype both --copy-mi 1,4,16,64,256 --json
fi
has_phase torch-warm && start_warmers
if has_phase micro; then
  run_step micro vkfuse_bench_chain 60 "$micro_end" "$raw/micro/chain_vkfuse.md" "$raw/micro/chain_vkfuse.log" \
    vkfuse_bench_chain ${CHAIN_FLAGS:---runs 5}
fi
if [ ${#export_pids[@]} -gt 0 ]; then
  export_rc=0
  for p in "${export_pids[@]}"; do wait "$p" || export_rc=$?; done
  record export export-models "$( ((export_rc == 0)) && echo ok || echo failed )" "$export_rc" $(( $(date +%s) - start )) \
    "$(grep -c ': exported' "$raw/export.log") exported; ran in the background from the start"
  log "export: done (rc $export_rc): $(ls "$models_dir" | wc -l) model folders"
fi

# --- vkfuse items -------------------------------------------------------------------------------------------
# KIND MODEL PREC BATCH, recorded as "KIND MODEL PREC bBATCH": compare (`vkfuse run --compare`, fused),
# unfused (the same with --no-fusion: a check, and the unfused kernels in the disk cache for bench),
# bench (`vkfuse bench --json`). $step_note, when set, is added to each step's record.
step_note=
vk_item() {
  local kind=$1 m=$2 prec=$3 batch=$4 until=$5 phase=$6
  local name="$kind $m $prec b$batch" dir="$models_dir/$m" tag="$m.$prec.b$batch"
  if [ ! -f "$dir/model.onnx" ]; then record "$phase" "$name" skipped - 0 "no exported model"; return; fi
  if [ "$prec" = fp16 ] && ((!fp16_ok)); then record "$phase" "$name" unsupported - 0 "vkfuse has no --precision fp16"; return; fi
  local pflag=(); [ "$prec" = fp32 ] || pflag=(--precision "$prec")
  # Above batch 1, the export with a symbolic batch where the plain one bakes in batch 1
  # (scripts/export_models.py BATCH_IN_GRAPH).
  local model=$dir/model.onnx
  ((batch > 1)) && [ -f "$dir/model_batched.onnx" ] && model=$dir/model_batched.onnx
  if [ "$kind" = bench ]; then
    local extra=(); ((batch > 1)) && extra=(--repeats 5 --iterations 3)
    run_step "$phase" "$name" 150 "$until" "$raw/bench/$tag.json" "$raw/bench/$tag.log" \
      "$vkfuse" bench "$model" --batch "$batch" "${pflag[@]}" "${extra[@]}" --json
    return
  fi
  local input=$dir/input.npy refdir=$dir shape=() fusion=() logdir=$raw/compare
  [ "$kind" = unfused ] && fusion=(--no-fusion) logdir=$raw/unfused
  if ((batch > 1)); then
    refdir=$work/b8/$m
    if [ ! -f "$refdir/output.npy" ]; then
      mkdir -p "$refdir"
      "$python" -c "import numpy as np, sys; d, o, b = sys.argv[1], sys.argv[2], int(sys.argv[3])
for f in ('input.npy', 'output.npy'):
    x = np.load(d + '/' + f); np.save(o + '/' + f, np.repeat(x, b, axis=0))" "$dir" "$refdir" "$batch" \
        || { record "$phase" "$name" failed - 0 "could not write the batch-$batch input"; return; }
    fi
    input=$refdir/input.npy
    shape=(--shape "input=$("$python" -c "import numpy as np, sys; print('x'.join(map(str, np.load(sys.argv[1], mmap_mode='r').shape)))" "$input")")
  fi
  mkdir -p "$logdir"
  run_step "$phase" "$name" 120 "$until" "$logdir/$tag.log" "$logdir/$tag.log" \
    "$vkfuse" run "$model" --input "input=$input" "${shape[@]}" "${pflag[@]}" "${fusion[@]}" \
    --compare "$refdir" --runs 2
}
run_items() {  # PHASE UNTIL ITEM...: each item unless the phase's time is spent
  local phase=$1 until=$2 item
  shift 2
  for item in "$@"; do
    set -- $item
    vk_item "$1" "$2" "$3" "$4" "$until" "$phase"
  done
}

# Batch 8: the comparisons with torch first (1-2 s each), then the timings (5-11 s each), so that a short
# phase still checks every output (at 010d78f the timings came first and the comparisons ran out of time).
b1_check=() b1_bench=() b8_items=()
for prec in ${precisions//,/ }; do
  for m in $models; do
    b1_check+=("compare $m $prec 1" "unfused $m $prec 1"); b1_bench+=("bench $m $prec 1"); b8_items+=("compare $m $prec 8")
  done
done
for prec in ${precisions//,/ }; do for m in $models; do b8_items+=("bench $m $prec 8"); done; done

# --- while torch-warm compiles: vkfuse's untimed work (kernels into the disk cache), then batch 8 ---------------
if has_phase compare; then
  log "compare: ${#b1_check[@]} runs until +$(( warm_end - start )) s"
  run_items compare "$warm_end" "${b1_check[@]}"
fi
b8_next=0
if has_phase b8; then
  step_note="measured while torch-warm compiled (the GPU was shared at times)"
  while ((b8_next < ${#b8_items[@]})) && warm_running && (( $(date +%s) < warm_end - 5 )); do
    run_items b8 "$warm_end" "${b8_items[$b8_next]}"
    b8_next=$((b8_next + 1))
  done
  step_note=
fi
if [ -n "$warm_pid" ]; then
  warm_running && log "torch-warm: waiting for the pool (until +$(( warm_end - start )) s)"
  wait "$warm_pid"
  warm_rc=$?
  record torch-warm "torch_models.py --warm-only" "$( ((warm_rc == 0)) && echo ok || echo failed )" "$warm_rc" \
    $(( $(date +%s) - start )) "$(grep -c '"status": "ok"' "$raw/torch/warm.jsonl" 2>/dev/null) compiled configurations ok"
  log "torch-warm: done (rc $warm_rc)"
fi

# --- startup (CPU quiet) ------------------------------------------------------------------------------------------
if has_phase startup; then
  # resnet50 first: its cold and warm start are targets.
  for m in resnet50 $(echo "$models" | tr ' ' '\n' | grep -vx resnet50); do
    [[ " $models " == *" $m "* ]] || continue
    if ((!startup_ok)); then record startup "startup $m" unsupported - 0 "vkfuse has no startup command"; continue; fi
    [ -f "$models_dir/$m/model.onnx" ] || { record startup "startup $m" skipped - 0 "no exported model"; continue; }
    # vkfuse startup points vkfuse's and the driver's caches at fresh directories itself.
    run_step startup "startup $m" 60 "$startup_end" "$raw/startup/$m.json" "$raw/startup/$m.log" \
      "$vkfuse" startup "$models_dir/$m/model.onnx" --json
  done
fi

# --- measure: vkfuse at batch 1 holding the GPU lock, PyTorch's processes one at a time after it ------------------
# The PyTorch processes import torch and build their models on the CPU while vkfuse is measured, and touch the
# GPU only once the lock has been free (bench/torch_models.py wait_for_gpu: another process's kernels would share
# the GPU by time slices, which vkfuse's timestamps count); then they compile (from the warm caches), each
# taking the lock ($work/gpu.lock, flock) only for its warm-up and timed loops.
have_flock=0; command -v flock >/dev/null && have_flock=1
torch_pid=
if has_phase torch; then
  ((have_flock)) && { exec 9>"$work/gpu.lock"; flock 9; }
  left=$(( torch_end - $(date +%s) ))
  if (( left < 20 )); then
    record torch torch_models.py skipped - 0 "the phase's time budget was spent"
  else
    if ((!have_flock)) && has_phase bench; then
      log "no flock here: vkfuse's batch-1 bench runs first, PyTorch after it"
      run_items bench "$torch_end" "${b1_bench[@]}"
      left=$(( torch_end - $(date +%s) ))
    fi
    log "torch: measuring until +$(( torch_end - start )) s"
    run_step torch torch_models.py $(( left + 30 )) $(( torch_end + 30 )) "$raw/torch/measure.log" "$raw/torch/measure.log" \
      "$python" "$root/bench/torch_models.py" --parallel "${TORCH_MEASURERS:-6}" --gpu-lock "$work/gpu.lock" --compile-threads 2 \
      --device "$torch_device" --models-dir "$models_dir" --models "$models_csv" --dtypes "$precisions" \
      --deadline "$torch_end" --model-timeout 150 --out "$raw/torch/torch.jsonl" 9>&- &
    torch_pid=$!
  fi
fi
if has_phase bench && { ((have_flock)) || ! has_phase torch; }; then
  log "bench: ${#b1_bench[@]} runs, holding the GPU, until +$(( torch_end - start )) s"
  run_items bench "$torch_end" "${b1_bench[@]}"
fi
((have_flock)) && has_phase torch && { flock -u 9; exec 9>&-; }
[ -n "$torch_pid" ] && wait "$torch_pid"

# --- what is left of batch 8 ------------------------------------------------------------------------------------
if has_phase b8; then
  while ((b8_next < ${#b8_items[@]})); do
    run_items b8 "$final_end" "${b8_items[$b8_next]}"
    b8_next=$((b8_next + 1))
  done
fi

# --- summary -----------------------------------------------------------------------------------------------------
log "done measuring"
pack
if has_phase summarize; then
  "$python" "$root/bench/summarize.py" "$raw" --out-md "$out/summary.md" --out-csv "$out/summary.csv" \
    --headline "$out/headline.md" > "$raw/summarize.log" 2>&1 || log "summarize failed: $(tail -3 "$raw/summarize.log")"
  cat "$out/headline.md" 2>/dev/null
fi
pack
log "end: $(( $(date +%s) - start )) s; $out: $(ls "$out" | tr '\n' ' ')"
