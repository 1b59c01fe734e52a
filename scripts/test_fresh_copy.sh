#!/usr/bin/env bash
# The test suite as a fresh clone runs it: from a copy of this checkout in a temporary folder with
# nothing beside it (no ../shared/data, no TOOLDEC_DATA), so the data tests read the fixtures in
# tests/fixtures/data. At most 5% of the tests may skip there (each says why: pytest -rs).
#
# The copy holds the files git tracks (and new, not ignored ones); it reuses this checkout's .venv,
# node_modules and .cache/llama.cpp-vocab through symlinks (nothing is installed again) and imports tooldec from its own
# src/ (PYTHONPATH), which a check below makes sure of, along with finding no benchmark data.
# The copy has no compiled modules (git ignores them), so the suite runs here on the pure-Python trie
# walk, DFA expansion and keys that installs without a C compiler fall back to; `make test` runs the
# compiled ones.
# With arguments, only `pytest ARGS` runs there (e.g. tests/decoding/test_walks.py).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
[[ -x .venv/bin/python && -d node_modules && -d .cache/llama.cpp-vocab ]] || { echo "test_fresh_copy: run make setup first" >&2; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/tooldec-fresh.XXXXXX")"
trap 'rm -rf "$work"' EXIT
copy="$work/tooldec"
mkdir "$copy"
git ls-files -z --cached --others --exclude-standard \
  | tar --null --files-from=- --ignore-failed-read -cf - | tar -xf - -C "$copy"
ln -s "$root/.venv" "$copy/.venv"
ln -s "$root/node_modules" "$copy/node_modules"
mkdir "$copy/.cache"
ln -s "$root/.cache/llama.cpp-vocab" "$copy/.cache/llama.cpp-vocab"
cd "$copy"

unset TOOLDEC_DATA
export PYTHONPATH="$copy/src:$copy" HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
# The random walks of tests/decoding ran at full count in `make test`; here they only need to run.
export TOOLDEC_WALKS="${TOOLDEC_WALKS:-15}"
.venv/bin/python - "$copy" <<'PY'
import sys
import tooldec
from benchmarks.paper.datasets import find_data_dir
assert tooldec.__file__.startswith(sys.argv[1]), f"tooldec is imported from {tooldec.__file__}, not the copy"
assert find_data_dir() is None, f"the copy finds benchmark data at {find_data_dir()}"
from tooldec.automata import dfa
from tooldec.decoding import trie_walk
from tooldec.tools import keys
assert not trie_walk.NATIVE, "the copy has a compiled walk: the suite here is meant to run the pure-Python one"
assert not dfa.NATIVE, "the copy has a compiled DFA expansion: the suite here is meant to run the pure-Python one"
assert not keys.NATIVE, "the copy has compiled keys: the suite here is meant to run the pure-Python ones"
print(f"test_fresh_copy: {sys.argv[1]}, no benchmark data beside it, the pure-Python walk, expansion and keys")
PY

if [[ $# -gt 0 ]]; then
  .venv/bin/python -m pytest -q -rs -p no:cacheprovider "$@"
  exit
fi
.venv/bin/python -m pytest -q -rs -n auto -p no:cacheprovider --junitxml="$work/report.xml" tests
.venv/bin/python -m pytest -q -p no:cacheprovider --doctest-modules -o consider_namespace_packages=true src/tooldec benchmarks/paper
.venv/bin/python - "$work/report.xml" <<'PY'
import sys
import xml.etree.ElementTree as ET
suite = ET.parse(sys.argv[1]).getroot()
suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
tests, skipped = int(suite.get("tests")), int(suite.get("skipped"))
print(f"test_fresh_copy: {skipped} of {tests} tests skipped ({100 * skipped / tests:.1f}%; at most 5% may)")
sys.exit(1 if skipped > 0.05 * tests else 0)
PY
