#!/usr/bin/env bash
# vkfuse as a package, the ways a user consumes it:
#   check_package.sh BUILD_DIR SOURCE_DIR WORK_DIR [install|subdirectory]
# cmake --install into WORK_DIR/prefix; the shared library's SONAME and exported symbols (the public
# API only: no glslang, SPIRV-Tools, protobuf or internal symbol); the installed CLI; a program that
# loads tests/data/models/tiny_cnn and checks its output, built through find_package (shared and
# static) and pkg-config and run; the C test built through pkg-config; the Python package imported
# from the prefix ("install", the default); or vkfuse under add_subdirectory of another project, which
# builds the same program ("subdirectory": a separate test, since it compiles vkfuse once more).
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd) work=$3 mode=${4:-install}
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
fail() { echo "check_package: $*" >&2; exit 1; }
check_consumer() {
  local what=$1 exe=$2 out
  out=$("$exe" "$src/tests/data/models/tiny_cnn" 2>&1) || fail "$what: the consumer failed: $out"
  grep -q "tiny_cnn matches its reference" <<< "$out" || fail "$what: the consumer printed '$out'"
  echo "$what: ok ($(head -1 <<< "$out"))"
}

if [ "$mode" = subdirectory ]; then
  # Configured with no build type and with Debug; the first also built (the library and the consumer
  # only, unoptimized to keep CI's time) and run.
  for type in "" Debug; do
    dir=$work/subdirectory_${type:-none}
    cmake -S "$src/tests/package/subdirectory" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" \
          -DEXPECTED_BUILD_TYPE="$type" -DVKFUSE_SOURCE="$src" > "$dir.log" 2>&1 ||
      fail "add_subdirectory (build type '$type'): $(grep -A3 'Error' "$dir.log" | head -20)"
    if [ -n "$type" ]; then
      echo "add_subdirectory, build type '$type': configures"
      continue
    fi
    cmake --build "$dir" --target consumer >> "$dir.log" 2>&1 || fail "add_subdirectory build: $(tail -30 "$dir.log")"
    check_consumer "add_subdirectory, build type ''" "$dir/consumer"
    ldd "$dir/consumer" | grep -q 'libvkfuse.so.0 => ' || fail "the add_subdirectory consumer does not load libvkfuse.so.0"
  done
  echo "package: all checks pass"
  exit 0
fi

cmake --install "$build" --prefix "$prefix" > "$work/install.log"
libdir=$(dirname "$(find "$prefix" -name 'libvkfuse.so' | head -1)")
[ -d "$libdir" ] || fail "no libvkfuse.so installed"
for f in "$libdir/libvkfuse.a" "$libdir/pkgconfig/vkfuse.pc" "$libdir/cmake/vkfuse/vkfuseConfig.cmake" \
         "$libdir/cmake/vkfuse/vkfuseConfigVersion.cmake" "$prefix/include/vkfuse/vkfuse.hpp" \
         "$prefix/include/vkfuse/export.h" "$prefix/bin/vkfuse"; do
  [ -e "$f" ] || fail "not installed: $f"
done
soname=$(objdump -p "$libdir/libvkfuse.so" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = "libvkfuse.so.0" ] || fail "SONAME is '$soname', expected libvkfuse.so.0"
echo "installed: $(cd "$libdir" && ls libvkfuse.*), SONAME $soname"

# Exported: what the public headers declare, the C++ API (vkfuse::) and the C API (vkf_*); nothing
# from a dependency, no std:: template instantiated inside.
nm -D --defined-only "$libdir/libvkfuse.so" | awk '{print $3}' | sed 's/@@*VKFUSE_0$//' | c++filt > "$work/exports.txt"
grep -Ev '^(_init|_fini|_edata|_end|__bss_start|VKFUSE_0)$' "$work/exports.txt" > "$work/exports_api.txt" || true
grep -q '^vkf_session_run$' "$work/exports_api.txt" || fail "the C API is not exported"
grep -q '^vkfuse::load_onnx' "$work/exports_api.txt" || fail "the C++ API is not exported"
if grep -Ev '^(vkfuse::|vkf_)' "$work/exports_api.txt" > "$work/exports_foreign.txt"; then
  head -5 "$work/exports_foreign.txt" | cut -c1-200 >&2
  fail "$(wc -l < "$work/exports_foreign.txt") exported symbols outside the vkfuse API (listed above)"
fi
if grep -Ei 'glslang|spvtools|google::protobuf|onnx::|vkfuse::(detail|internal)' "$work/exports_api.txt" | head -5 >&2; then
  fail "dependency or internal symbols are exported"
fi
echo "exports: $(wc -l < "$work/exports_api.txt") symbols, all vkfuse API"

"$prefix/bin/vkfuse" plan "$src/tests/data/tensors/add_relu_matmul.onnx" > "$work/cli.log" ||
  fail "the installed CLI failed: $(cat "$work/cli.log")"
grep -q "1 dispatch" "$work/cli.log" || fail "the installed CLI's plan: $(cat "$work/cli.log")"

for target in vkfuse::vkfuse vkfuse::vkfuse_static; do
  dir=$work/consumer_${target#vkfuse::}
  cmake -S "$src/tests/package/consumer" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_PREFIX_PATH="$prefix" -DVKFUSE_TARGET="$target" \
        > "$dir.log" 2>&1 || fail "configure: $(cat "$dir.log")"
  cmake --build "$dir" >> "$dir.log" 2>&1 || fail "build: $(tail -30 "$dir.log")"
  check_consumer "find_package, $target" "$dir/consumer"
done
if [ "$(ldd "$work/consumer_vkfuse/consumer" | grep -c 'libvkfuse.so.0 => ')" != 1 ]; then
  fail "the find_package consumer does not load libvkfuse.so.0"
fi

flags=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs vkfuse) || fail "pkg-config vkfuse failed"
c++ -std=c++17 -o "$work/consumer_pc" "$src/tests/package/consumer/main.cpp" $flags -Wl,-rpath,"$libdir" ||
  fail "building with pkg-config's flags ($flags) failed"
check_consumer "pkg-config, C++17 ($flags)" "$work/consumer_pc"
# The C API from C, with the installed <vkfuse/vkfuse.h> (built only: c_api/from-c runs it).
cc -std=c11 -Wall -Wextra -Werror -o "$work/c_api_pc" "$src/tests/c_api/test_c_api.c" \
   -DVKFUSE_TEST_DATA_DIR="\"$src/tests/data\"" $flags -lm -Wl,-rpath,"$libdir" ||
  fail "building the C test with pkg-config's flags failed"
echo "pkg-config, C11: builds"

# $PYTHON: the interpreter the module was built for (unset: vkfuse was built without it).
if [ -n "${PYTHON:-}" ]; then
  site=$(find "$prefix" -path '*-packages/vkfuse/__init__.py' | head -1)
  [ -n "$site" ] || fail "the Python package is not installed"
  PYTHONPATH=$(dirname "$(dirname "$site")") "$PYTHON" -c \
    "import vkfuse, sys; s = vkfuse.InferenceSession(sys.argv[1], cache_dir=''); print('python: ok, vkfuse', vkfuse.__version__, 'from', vkfuse.__file__, [i.shape for i in s.get_inputs()])" \
    "$src/tests/data/models/tiny_cnn/model.onnx" || fail "importing the installed Python package failed"
fi

echo "package: all checks pass"
