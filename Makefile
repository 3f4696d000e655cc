# Set-up is part of every target: a fresh clone needs only Python 3 and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SPARK_STAMP := $(VENV)/.installed-spark

.PHONY: demo test bench spark clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The Spark engine's extra (pyspark is a large download): `make test` skips the Spark
# tests without it; CI (.ci/run) and `make bench` install it.  Spark also needs Java 17+.
$(SPARK_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,spark]'
	touch $(SPARK_STAMP)

spark: $(SPARK_STAMP)

# The whole product on the shipped examples: lint agent code, then replay the sample
# incidents (canonical guard logs, a foreign log shape with its mapping, OpenTelemetry
# traces) and write the HTML report.  Findings are expected: the demo never fails on them.
REPORT := build/nonatomic-demo.html

demo: $(STAMP)
	@echo "== nonatomic lint examples/ =="
	$(BIN)/nonatomic lint --no-cache --exit-zero examples/
	@echo "== nonatomic replay sample_logs/*.jsonl (guard logs written by nonatomic.guard) =="
	$(BIN)/nonatomic replay --fail-on never sample_logs/*.jsonl
	@echo "== nonatomic replay --mapping sample_logs/foreign/mapping.yaml sample_logs/foreign/ =="
	$(BIN)/nonatomic replay --fail-on never --mapping sample_logs/foreign/mapping.yaml sample_logs/foreign/
	@echo "== nonatomic replay sample_logs/otlp/ (OpenTelemetry GenAI spans, recognised without a flag) =="
	$(BIN)/nonatomic replay --fail-on never sample_logs/otlp/
	@mkdir -p $(dir $(REPORT))
	$(BIN)/nonatomic replay --fail-on never --format html --output $(REPORT) sample_logs/*.jsonl
	@echo "HTML report of the sample incidents: $(REPORT) (open it in a browser)"

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(SPARK_STAMP)
	@for script in benchmarks/bench_*.py; do \
		echo "== $$script =="; \
		$(BIN)/python $$script || exit 1; \
	done

clean:
	rm -rf $(VENV) .nonatomic_cache .pytest_cache $(REPORT)
