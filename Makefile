PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test test-load lint demo bench bench-quick clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,bench]'
	touch $(STAMP)

install: $(STAMP)

# Each run gets a fresh temporary base directory of its own, removed afterwards: pytest's
# default one (/tmp/pytest-of-USER) is shared by every checkout on the machine, and its
# clean-up of old sessions' directories ends the run if one of them cannot be removed.
PYTEST_TMP = d=$$(mktemp -d "$${TMPDIR:-/tmp}/aborist-test.XXXXXX") && trap 'rm -rf "$$d"' EXIT &&

test: $(STAMP)
	$(PYTEST_TMP) $(BIN)/python -m pytest -q --basetemp="$$d/t"

test-load: $(STAMP)
	$(PYTEST_TMP) $(BIN)/python -m pytest -q -m load --run-load --basetemp="$$d/t"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

demo: $(STAMP)
	bash scripts/demo.sh

bench: $(STAMP)
	$(BIN)/python bench/ledger_append.py

# Every benchmark in its smoke form (small counts, one repetition), so a bench that breaks
# fails here (CI runs this). Figures from --quick runs are not the ones in bench/README.md.
BENCHES := ledger_append tlog query replay batch retrieval verifier_eval repair_eval \
	extractive_eval ingest corpus_binding serve
bench-quick: $(STAMP)
	set -e; for b in $(BENCHES); do echo "== bench/$$b.py --quick"; \
	    $(BIN)/python bench/$$b.py --quick > /dev/null; done

clean:
	rm -rf $(VENV) .aborist .aborist-demo .pytest_cache .mypy_cache .ruff_cache
