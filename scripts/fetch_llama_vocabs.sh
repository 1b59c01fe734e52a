#!/usr/bin/env bash
# Fetch llama.cpp's vocabulary-only GGUF files (tokenizers without weights: gpt-2, llama-spm,
# llama-bpe, qwen2, phi-3, gemma-4, command-r, ...) for the exact-bytes tests (tests/tokens).
#
# They ship in the llama-cpp-python source package under vendor/llama.cpp/models/. We download the
# pinned sdist with pip (no install, nothing built; ~75 MB), check its sha256, and extract only
# models/ggml-vocab-*.gguf into .cache/llama.cpp-vocab/ (git-ignored). A stamp holding the sdist's
# sha256 makes a second run free. `make setup` runs this script; so can you.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
VERSION="0.3.36"
SHA256="832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
DEST="${TOOLDEC_LLAMA_VOCAB_DIR:-$ROOT/.cache/llama.cpp-vocab}"
STAMP="$DEST/.sdist-sha256"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" == "$SHA256" ] && compgen -G "$DEST/ggml-vocab-*.gguf" >/dev/null; then
    echo "llama vocabs: $DEST is there"
    exit 0
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# --no-binary for this package only: the sdist itself, while pip may read its build backend from wheels
"$PYTHON" -m pip download --quiet --no-deps --no-binary llama-cpp-python "llama-cpp-python==${VERSION}" -d "$WORK"
SDIST="$WORK/llama_cpp_python-${VERSION}.tar.gz"
if ! echo "$SHA256  $SDIST" | sha256sum --check --status; then
    echo "llama vocabs: sha256 mismatch for $(basename "$SDIST"): got $(sha256sum "$SDIST" | cut -d' ' -f1), expected $SHA256" >&2
    exit 1
fi
tar -xzf "$SDIST" -C "$WORK" --wildcards "llama_cpp_python-${VERSION}/vendor/llama.cpp/models/ggml-vocab-*.gguf"
mkdir -p "$DEST"
rm -f "$DEST"/ggml-vocab-*.gguf
mv "$WORK/llama_cpp_python-${VERSION}/vendor/llama.cpp/models/"ggml-vocab-*.gguf "$DEST/"
echo "$SHA256" > "$STAMP"
echo "llama vocabs: $(ls "$DEST"/ggml-vocab-*.gguf | wc -l) files in $DEST (sdist sha256 verified)"
