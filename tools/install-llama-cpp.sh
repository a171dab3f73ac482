#!/usr/bin/env bash
# Install the local model's runtime, llama-cpp-python, compiled from source, into a virtual environment.
#
#   tools/install-llama-cpp.sh PYTHON          (the Makefile calls it; README "Quick start")
#   tools/install-llama-cpp.sh PYTHON --build-only   build the wheel into the cache, install nothing
#                                              (the Makefile runs this while pip installs the rest)
#
# LLAMA_NATIVE=0 (default): a portable build for any x86-64 CPU with AVX2 (Haswell / Zen and later):
#   no -march=native, no AVX-512 or AMX kernels, so a wheel built here runs on every such machine.
# LLAMA_NATIVE=1: compiled for this machine's CPU (GGML_NATIVE: AVX-512, AMX, ... where present).
#   Faster prompt processing on such a CPU; the wheel may crash on any other CPU, and on some hosts
#   that advertise AMX it crashes on this one (SIGSEGV in ggml's AMX matrix multiply).
# LLAMA_CMAKE_ARGS="...": any other set of llama.cpp CMake flags (overrides LLAMA_NATIVE).
#
# The wheel is built once per (version, flags) into $LLAMA_WHEEL_DIR (default
# ~/.cache/anachron/llama-cpp-python/<version>-<tag>), never through pip's own wheel cache, whose
# key ignores CMAKE_ARGS: a wheel built with other flags can never be handed back. A wheel built
# natively is keyed by this CPU's flags too. The flavour installed is written to
# <venv>/llama-cpp-build.txt; running the script again with the same flags installs nothing.
set -euo pipefail
PY=${1:?usage: install-llama-cpp.sh PYTHON [--build-only]}
BUILD_ONLY=${2:-}
HERE=$(cd "$(dirname "$0")/.." && pwd)
VERSION=$(sed -n 's/^ *"llama-cpp-python==\([^"]*\)".*/\1/p' "$HERE/pyproject.toml")
[ -n "$VERSION" ] || { echo "install-llama-cpp.sh: no llama-cpp-python==X pin in pyproject.toml" >&2; exit 1; }
# Keep in step with anachron.llm.runtime.PORTABLE_CMAKE_ARGS (tests/llm/test_runtime.py checks).
PORTABLE="-DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_BMI2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
if [ -n "${LLAMA_CMAKE_ARGS:-}" ]; then
    ARGS="$LLAMA_CMAKE_ARGS"; TAG="custom-$(printf %s "$ARGS" | sha256sum | cut -c1-10)"
elif [ "${LLAMA_NATIVE:-0}" = 1 ]; then
    ARGS="-DGGML_NATIVE=ON"; TAG="native-$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | sha256sum | cut -c1-10)"
else
    ARGS="$PORTABLE"; TAG="portable-avx2"
fi
ARGS="$ARGS -DLLAVA_BUILD=OFF"  # the multimodal library: anachron sends text only; saves a third of the build
VENV=$("$PY" -c 'import sys; print(sys.prefix)')
RECORD="$VENV/llama-cpp-build.txt"
WANT="llama-cpp-python $VERSION $TAG: CMAKE_ARGS=$ARGS"
if [ -f "$RECORD" ] && [ "$(cat "$RECORD")" = "$WANT" ] && "$PY" -c 'import llama_cpp' 2>/dev/null; then
    exit 0  # installed with these flags already
fi
DIR=${LLAMA_WHEEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/anachron/llama-cpp-python/$VERSION-$TAG}
if ! ls "$DIR"/llama_cpp_python-"$VERSION"-*.whl >/dev/null 2>&1; then
    echo "building llama-cpp-python $VERSION ($TAG; about 3 minutes on 2 cores) into $DIR"
    mkdir -p "$(dirname "$DIR")"
    TMP=$(mktemp -d "$DIR.tmp.XXXXXX")
    CMAKE_ARGS="$ARGS" CMAKE_BUILD_PARALLEL_LEVEL="${CORES:-$(nproc)}" \
        "$PY" -m pip wheel --quiet --no-deps --no-cache-dir --no-binary llama-cpp-python -w "$TMP" "llama-cpp-python==$VERSION"
    rm -rf "$DIR" && mv "$TMP" "$DIR"   # complete or absent: an interrupted build leaves only a .tmp folder
fi
[ "$BUILD_ONLY" = --build-only ] && exit 0
"$PY" -m pip install --quiet --force-reinstall --no-deps --no-cache-dir "$DIR"/llama_cpp_python-"$VERSION"-*.whl
echo "$WANT" >"$RECORD"
echo "installed $WANT"
