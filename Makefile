# Set-up is part of every target: a fresh clone needs only Python 3 and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	@echo "== nonatomic lint examples/ =="
	$(BIN)/nonatomic lint --no-cache --exit-zero examples/
	@if [ -d sample_logs ] && ls sample_logs/*.jsonl >/dev/null 2>&1; then \
		echo "== nonatomic replay sample_logs/ =="; \
		$(BIN)/nonatomic replay --fail-on never sample_logs/; \
	fi

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	@for script in benchmarks/bench_*.py; do \
		echo "== $$script =="; \
		$(BIN)/python $$script || exit 1; \
	done

clean:
	rm -rf $(VENV) .nonatomic_cache .pytest_cache
