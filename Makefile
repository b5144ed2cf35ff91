# The two commands a newcomer needs: `make run` and `make test`.
# Both create .venv on first use and reuse it; each installs only what it needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: run test lint typecheck unit bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.runtime: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@ $(VENV)/.runtime

run: $(VENV)/.runtime
	$(BIN)/python -m duckflow.demo

lint: $(VENV)/.dev
	$(BIN)/ruff check src tests

typecheck: $(VENV)/.dev
	$(BIN)/mypy src

unit: $(VENV)/.dev
	$(BIN)/pytest; rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest: no tests collected"; exit 0; fi; exit $$rc

test: lint typecheck unit

bench: $(VENV)/.runtime
	$(BIN)/duckflow bench protocols

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
