#!/usr/bin/env bash
# Build llama.cpp's own OpenAI server, `llama-server`, for the auto-mode benchmark.
#
# The llama.cpp built is exactly the one our llama.cpp backend runs: the `vendor/llama.cpp` of the
# llama-cpp-python 0.3.36 source distribution (pinned by sha256), fetched with pip from PyPI.
# Only the `llama-server` target is built (about 10 minutes on 2 cores), statically linked, CPU
# only, without its web UI (nothing is downloaded at build time). The binary goes to
# .cache/llama-server/llama-server (git-ignored). Not part of the default install:
# `make llama-server` (or this script). JOBS=N sets the parallel compile jobs (default 2).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
VERSION="0.3.36"
SHA256="832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
DEST_DIR="$ROOT/.cache/llama-server"
DEST="$DEST_DIR/llama-server"
JOBS="${JOBS:-2}"

if [ -x "$DEST" ] && [ -f "$DEST_DIR/SOURCE" ] && grep -q "$SHA256" "$DEST_DIR/SOURCE"; then
    echo "llama-server: $DEST is there (llama-cpp-python $VERSION)"
    exit 0
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$PYTHON" -m pip download --quiet --no-binary :all: --no-deps "llama-cpp-python==${VERSION}" -d "$WORK"
SDIST="$WORK/llama_cpp_python-${VERSION}.tar.gz"
if ! echo "$SHA256  $SDIST" | sha256sum --check --status; then
    echo "llama-server: $SDIST does not have the pinned sha256 $SHA256; refusing to build it" >&2
    exit 1
fi
tar -xzf "$SDIST" -C "$WORK"
SRC="$WORK/llama_cpp_python-${VERSION}/vendor/llama.cpp"
cmake -S "$SRC" -B "$WORK/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
cmake --build "$WORK/build" --target llama-server -j "$JOBS"
mkdir -p "$DEST_DIR"
cp "$WORK/build/bin/llama-server" "$DEST"
echo "llama-cpp-python $VERSION sdist sha256 $SHA256, vendor/llama.cpp, target llama-server" > "$DEST_DIR/SOURCE"
"$DEST" --version 2>&1 | tail -2
echo "llama-server: built $DEST"
