#!/usr/bin/env bash
# Runs every libFuzzer target of a VKFUSE_FUZZ build for SECONDS each (default 60): first over its
# regression inputs (tests/fuzz/regressions/<target>/), then fuzzing from a seed corpus made of
# tests/data. Exits non-zero on the first finding; libFuzzer writes the input to BUILD/fuzz-findings/.
#   tests/fuzz/run.sh BUILD [SECONDS] [extra libFuzzer flags, e.g. -runs=1000000]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "$1" && pwd)
seconds=${2:-60}
shift $(( $# >= 2 ? 2 : 1 ))
findings="$build/fuzz-findings"
mkdir -p "$findings"

seed() {  # seed TARGET PATTERN...: the target's corpus folder, filled from tests/data
  local dir="$build/fuzz-corpus/$1"
  mkdir -p "$dir"
  shift
  for pattern in "$@"; do
    find "$root/tests/data" -name "$pattern" -type f -size -2M -exec cp -n {} "$dir/" \;
  done
  echo "$dir"
}

run() {  # run TARGET CORPUS
  local target="$build/tests/fuzz/$1" regressions="$root/tests/fuzz/regressions/$1" corpus=$2
  if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
    "$target" -rss_limit_mb=4096 "$regressions"/*
  fi
  echo "fuzz: $1 for ${seconds}s"
  "$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$findings/$1-" ${extra[@]+"${extra[@]}"} "$corpus"
}

ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export ASAN_OPTIONS
extra=("$@")
run fuzz_onnx_model "$(seed fuzz_onnx_model '*.onnx')"
run fuzz_tensor_file "$(seed fuzz_tensor_file '*.npy' '*.pb')"
# Real cache entries and pipeline-cache files where a test run left some (VKFUSE_CACHE_DIR).
cache_corpus=$(seed fuzz_cache_file '*.vkfk')
if [ -d "${VKFUSE_CACHE_DIR:-}" ]; then
  find "$VKFUSE_CACHE_DIR" -type f -size -1M | head -200 | xargs -r cp -t "$cache_corpus/"
fi
run fuzz_cache_file "$cache_corpus"
