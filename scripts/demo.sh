#!/usr/bin/env bash
# The README's first command: install what is missing, build, run the embedded demo.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
vkfuse_install_missing
vkfuse_build -DVKFUSE_BUILD_TESTS=OFF
"$VKFUSE_BUILD_DIR/tools/vkfuse" demo "$@"
