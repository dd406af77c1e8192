#!/usr/bin/env bash
# Runs every libFuzzer target of a VKFUSE_FUZZ build: first over its regression inputs
# (tests/fuzz/regressions/<target>/), then fuzzing from a seed corpus made of tests/data. Exits non-zero
# on the first finding; libFuzzer writes the input to BUILD/fuzz-findings/.
#   tests/fuzz/run.sh BUILD              the test suite's run: a fixed number of runs per target
#                                        (about a minute each here), the same amount of fuzzing on a
#                                        slow machine as on a fast one, from a fresh corpus
#   tests/fuzz/run.sh BUILD SECONDS [extra libFuzzer flags]
#                                        exploring: SECONDS per target, a random seed
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "$1" && pwd)
seconds=${2:-}
shift $(( $# >= 2 ? 2 : 1 ))
findings="$build/fuzz-findings"
mkdir -p "$findings"

# Exploring keeps its corpus between runs; the suite's run starts from tests/data alone every time.
corpora="$build/fuzz-corpus"
if [ -z "$seconds" ]; then corpora="$build/fuzz-corpus-fixed"; rm -rf "$corpora"; fi

seed() {  # seed TARGET PATTERN...: the target's corpus folder, filled from tests/data
  local dir="$corpora/$1"
  mkdir -p "$dir"
  shift
  for pattern in "$@"; do
    find "$root/tests/data" -name "$pattern" -type f -size -2M -exec cp -n {} "$dir/" \;
  done
  echo "$dir"
}

run() {  # run TARGET CORPUS RUNS: RUNS is the fixed run count of the suite's mode
  local target="$build/tests/fuzz/$1" regressions="$root/tests/fuzz/regressions/$1" corpus=$2 budget
  if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
    "$target" -rss_limit_mb=4096 "$regressions"/*
  fi
  if [ -n "$seconds" ]; then
    budget=(-max_total_time="$seconds")
    echo "fuzz: $1 for ${seconds}s"
  else
    budget=(-runs="$3" -max_total_time=600)
    echo "fuzz: $1 for $3 runs"
  fi
  "$target" "${budget[@]}" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$findings/$1-" ${extra[@]+"${extra[@]}"} "$corpus"
}

ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export ASAN_OPTIONS
extra=("$@")
run fuzz_onnx_model "$(seed fuzz_onnx_model '*.onnx')" 500000
run fuzz_tensor_file "$(seed fuzz_tensor_file '*.npy' '*.pb')" 2000000
# Real cache entries and pipeline-cache files where a test run left some (VKFUSE_CACHE_DIR; exploring
# only: their names and contents change with every build).
cache_corpus=$(seed fuzz_cache_file '*.vkfk')
if [ -n "$seconds" ] && [ -d "${VKFUSE_CACHE_DIR:-}" ]; then
  find "$VKFUSE_CACHE_DIR" -type f -size -1M | head -200 | xargs -r cp -t "$cache_corpus/"
fi
run fuzz_cache_file "$cache_corpus" 5000000
