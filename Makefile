# `make run` and `make test` each set everything up on a fresh machine (python3 + pip only).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
Q ?= def search
ROOT ?= .

.PHONY: run test lint typecheck bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]' --config-settings editable_mode=compat
	bash scripts/install_tools.sh
	$(BIN)/python -m sleuth.semantic.static  # the semantic: token table, once per machine
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/sleuth search '$(Q)' --root '$(ROOT)' --limit 20

test: lint typecheck
	$(BIN)/python -m pytest -n 2 tests

lint: $(STAMP)
	$(BIN)/ruff check sleuth tests benchmarks
	$(BIN)/ruff format --check sleuth tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy sleuth

bench: $(STAMP)
	$(BIN)/python -m benchmarks.text

clean:
	rm -rf $(VENV) .sleuth
