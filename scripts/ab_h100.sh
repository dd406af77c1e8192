#!/usr/bin/env bash
# An A/B comparison on the lent H100, the half that runs here: builds vkfuse and vkfuse_bench_gemm twice,
# (a) at a commit (default HEAD) and (b) from the working tree with its uncommitted changes, bundles both
# into .device/ as vkfuse_a / vkfuse_b and vkfuse_bench_gemm_a / _b, and prints the call of the agent's
# `run` tool that starts bench/ab_session.sh there (both measured in one command, interleaved).
#
#   scripts/ab_h100.sh [REF]
#
# REF is built in a git worktree under build-ab/ (kept between calls: later builds are incremental), the
# working tree in build-bench/ as scripts/bench_h100.sh does. Settings for the device side go into the
# printed command as environment variables (see bench/ab_session.sh: AB_MODELS, AB_PRECISIONS,
# AB_BATCHES, AB_ROUNDS, AB_GEMM_SIZES, AB_GEMM_DTYPE, AB_TILES, BUDGET_S).
: "${VKFUSE_BUILD_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build-bench}"
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$VKFUSE_ROOT"
[ $# -le 1 ] || { echo "usage: scripts/ab_h100.sh [REF]" >&2; exit 2; }
ref=$(git rev-parse --verify "${1:-HEAD}^{commit}") || { echo "ab_h100.sh: no commit '${1:-HEAD}'" >&2; exit 2; }
base_src=$VKFUSE_ROOT/build-ab/src
base_build=$VKFUSE_ROOT/build-ab/build

vkfuse_install_missing
build_release() {  # SOURCE BUILD
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVKFUSE_BUILD_TESTS=OFF -DVKFUSE_BUILD_BENCH=ON >/dev/null
  cmake --build "$2" --parallel "$(nproc)" --target vkfuse_cli vkfuse_bench_gemm
}
if [ -d "$base_src" ]; then git -C "$base_src" checkout -q --detach "$ref"
else mkdir -p build-ab && git worktree add -q --detach "$base_src" "$ref"; fi
echo "a: $(git -C "$base_src" describe --always --dirty --abbrev=10)"
build_release "$base_src" "$base_build"
build_release "$VKFUSE_ROOT" "$VKFUSE_BUILD_DIR"

staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
cp "$base_build/tools/vkfuse" "$staging/vkfuse_a"
cp "$base_build/bench/vkfuse_bench_gemm" "$staging/vkfuse_bench_gemm_a"
cp "$VKFUSE_BUILD_DIR/tools/vkfuse" "$staging/vkfuse_b"
cp "$VKFUSE_BUILD_DIR/bench/vkfuse_bench_gemm" "$staging/vkfuse_bench_gemm_b"
shared=${VKFUSE_SHARED_DIR:-$VKFUSE_ROOT/../shared}
bash "$shared/device/prepare.sh"
bash "$shared/device/bundle.sh" "$staging"/* >/dev/null
rm -rf .device/layers
strip .device/bin/*
{
  git -C "$base_src" describe --always --abbrev=10
  echo "$(git describe --always --dirty --abbrev=10) (the working tree)"
} > .device/AB
echo "bundle: .device $(du -sh .device | cut -f1); a = $(sed -n 1p .device/AB), b = $(sed -n 2p .device/AB)"

cat <<EOF

Start the device side with ONE call of the agent's \`run\` tool:
  kind:      nvidia-h100-x1
  timeout_s: 600
  carry:     [".gl", ".device"]
  command:   AB_MODELS=resnet50,vit_b_16 AB_PRECISIONS=fp16 bash .device/run.sh bash bench/ab_session.sh
(set AB_* as bench/ab_session.sh describes). The reply's files_at folder then holds ab.md, the table.
EOF
