#!/usr/bin/env bash
# Issue 5's side-by-side benchmark (vkfuse against PyTorch on the lent H100), the half that runs here.
#
#   scripts/bench_h100.sh                       build (Release), bundle, print the device call
#   scripts/bench_h100.sh --summarize FILES_AT  the run's files -> bench/results/h100_<date>[_<commit>].md/.csv
#
# The first form builds vkfuse, vkfuse_bench_gemm and vkfuse_bench_chain in build-bench/ (or
# $VKFUSE_BUILD_DIR), packs them into .device/ with ../shared/device/bundle.sh, writes .device/COMMIT
# (the tree that travels has no .git) and prints the exact call of the agent's `run` tool that starts
# bench/h100_session.sh on the GPU machine: that call cannot be made from a shell. The second form
# reads the raw.tar.gz the call brought back (FILES_AT is the reply's files_at folder) and prints the
# headline table for the README. See bench/README.md.
: "${VKFUSE_BUILD_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build-bench}"
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$VKFUSE_ROOT"

if [ "${1:-}" = --summarize ]; then
  files=${2:?usage: scripts/bench_h100.sh --summarize FILES_AT}
  raw=$files/raw.tar.gz
  [ -f "$raw" ] || raw=$(find "$files" -name raw.tar.gz | head -1)
  [ -n "$raw" ] && [ -f "$raw" ] || { echo "no raw.tar.gz under $files" >&2; exit 1; }
  mkdir -p bench/results
  exec /usr/bin/python3 bench/summarize.py "$raw" --results-dir bench/results
fi
[ $# -eq 0 ] || { echo "usage: scripts/bench_h100.sh [--summarize FILES_AT]" >&2; exit 2; }

vkfuse_install_missing
cmake -S "$VKFUSE_ROOT" -B "$VKFUSE_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVKFUSE_BUILD_TESTS=OFF \
  -DVKFUSE_BUILD_BENCH=ON >/dev/null
cmake --build "$VKFUSE_BUILD_DIR" --parallel "$(nproc)" --target vkfuse_cli vkfuse_bench_gemm vkfuse_bench_chain

shared=${VKFUSE_SHARED_DIR:-$VKFUSE_ROOT/../shared}
bash "$shared/device/prepare.sh"
bash "$shared/device/bundle.sh" "$VKFUSE_BUILD_DIR/tools/vkfuse" "$VKFUSE_BUILD_DIR/bench/vkfuse_bench_gemm" \
  "$VKFUSE_BUILD_DIR/bench/vkfuse_bench_chain" >/dev/null
# The benchmark runs without the validation layer (22 MB): drop a copy an earlier bundle left.
rm -rf .device/layers
strip .device/bin/*
commit=$(git describe --always --dirty --abbrev=10)
echo "$commit" > .device/COMMIT
[[ $commit == *-dirty ]] && echo "note: the working tree has uncommitted changes; the build includes them (COMMIT says $commit)"

# The tree that travels: tracked and untracked-not-ignored files plus the carried .gl and .device.
tree_bytes=$(git ls-files -z --cached --others --exclude-standard | xargs -0 stat -c %s 2>/dev/null | awk '{s += $1} END {print s + 0}')
carried_bytes=$(du -sb .gl .device | awk '{s += $1} END {print s}')
total_mib=$(( (tree_bytes + carried_bytes) / 1048576 ))
echo "bundle: .device $(du -sh .device | cut -f1), .gl $(du -sh .gl | cut -f1); the tree that travels: ~${total_mib} MiB of 64"
(( total_mib < 64 )) || { echo "over the 64 MiB transfer limit" >&2; exit 1; }

cat <<EOF

Start the device side with ONE call of the agent's \`run\` tool (it takes about 10 minutes):
  kind:      nvidia-h100-x1
  timeout_s: 600
  carry:     [".gl", ".device"]
  command:   bash .device/run.sh bash bench/h100_session.sh
Then, with the reply's files_at folder:
  scripts/bench_h100.sh --summarize FILES_AT
EOF
