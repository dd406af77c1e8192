#!/usr/bin/env bash
# Compares the fusion plans of two `vkfuse` binaries byte for byte: `vkfuse plan` text and --json, fused
# and --no-fusion, fp32 and fp16, the model's own batch and --batch 1 and 8, for every model.onnx (and
# model_batched.onnx) under tests/data and the directories given. A planner change that must not change
# planning (a faster data structure, a refactor) is checked with it against a build of the commit before.
#
#   scripts/compare_plans.sh BEFORE_VKFUSE AFTER_VKFUSE [MODELS_DIR...]
#   e.g. scripts/compare_plans.sh build-base/tools/vkfuse build/tools/vkfuse build/models
#
# A model that both binaries refuse the same way (same exit status and message) counts as refused, not
# as a difference. Exits 1 on any difference, printing the first lines of the diff.
set -uo pipefail

if [ $# -lt 2 ]; then
  sed -n '2,10p' "$0" >&2
  exit 2
fi
before=$1 after=$2
shift 2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mapfile -t models < <(find "$root/tests/data" "$@" \( -name model.onnx -o -name model_batched.onnx \) | sort)
same=0 refused=0 differ=0
for model in "${models[@]}"; do
  for precision in fp32 fp16; do
    for batch in "" 1 8; do
      for fusion in "" --no-fusion; do
        for format in "" --json; do
          args=(plan "$model" --precision "$precision" ${batch:+--batch "$batch"} $fusion $format)
          "$before" "${args[@]}" >"$work/before.out" 2>"$work/before.err"
          before_rc=$?
          "$after" "${args[@]}" >"$work/after.out" 2>"$work/after.err"
          after_rc=$?
          if [ "$before_rc" -ne "$after_rc" ] || ! cmp -s "$work/before.out" "$work/after.out" ||
             { [ "$before_rc" -ne 0 ] && ! cmp -s "$work/before.err" "$work/after.err"; }; then
            differ=$((differ + 1))
            echo "DIFFERS: vkfuse ${args[*]} (exit $before_rc -> $after_rc)"
            diff "$work/before.out" "$work/after.out" | head -20
            diff "$work/before.err" "$work/after.err" | head -5
          elif [ "$before_rc" -ne 0 ]; then
            refused=$((refused + 1))
          else
            same=$((same + 1))
          fi
        done
      done
    done
  done
done
echo "${#models[@]} models: $same plans identical, $refused refused by both alike, $differ different"
[ "$differ" -eq 0 ]
