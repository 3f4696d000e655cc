# Set-up is part of every target: a fresh clone needs only Python 3 and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SPARK_STAMP := $(VENV)/.installed-spark

# The checkout is installed as a path entry (setuptools' compat editable mode), not
# the import hook of the default mode, which costs every command (a one-file pre-commit
# run included) about 25 ms before it starts; an installed wheel has no hook either.
EDITABLE := --config-settings editable_mode=compat -e

FLOORS_VENV  := .venv-floors
FLOORS_STAMP := $(FLOORS_VENV)/.installed

.PHONY: demo test test-floors fuzz bench spark clean screenshot

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(EDITABLE) '.[test]'
	touch $(STAMP)

# The Spark engine's extra (pyspark is a large download): `make test` skips the Spark
# tests without it; CI (.ci/run) and `make bench` install it.  Spark also needs Java 17+.
$(SPARK_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet $(EDITABLE) '.[test,spark]'
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

# The README's picture: the product's own HTML timeline of a shipped incident, shot in headless
# Chromium (.ci/run installs it); pngquant, when present, makes the file a third of the size.
SHOT_PAGE := build/timeline.html

screenshot: $(STAMP)
	@mkdir -p build
	$(BIN)/nonatomic timeline --format html --output $(SHOT_PAGE) sample_logs/retry_rollback_race.jsonl
	chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir=build/chromium-profile --hide-scrollbars \
		--window-size=1130,640 --screenshot=build/timeline.png file://$(CURDIR)/$(SHOT_PAGE)
	if command -v pngquant >/dev/null; then pngquant --quality 60-85 --force --output docs/timeline.png \
		build/timeline.png; else cp build/timeline.png docs/timeline.png; fi

test: $(STAMP)
	$(BIN)/python -m pytest

# The suite on the oldest run-time dependencies pyproject.toml admits (its `>=` floors,
# pinned with pip's --constraint), in a venv of its own; the test tools stay current.
$(FLOORS_STAMP): pyproject.toml .ci/floors.py | $(STAMP)
	$(PYTHON) -m venv $(FLOORS_VENV)
	$(FLOORS_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(BIN)/python .ci/floors.py > $(FLOORS_VENV)/floors.txt
	$(FLOORS_VENV)/bin/python -m pip install --quiet --constraint $(FLOORS_VENV)/floors.txt $(EDITABLE) '.[test]'
	touch $(FLOORS_STAMP)

test-floors: $(FLOORS_STAMP)
	$(FLOORS_VENV)/bin/python -m pip list 2>/dev/null | grep -iE '^(libcst|click|pyyaml|duckdb|pandas|numpy|tomli) '
	$(FLOORS_VENV)/bin/python -m pytest

# The fuzzing kinds of the suite at a large size: random line faults and line ends,
# compressed files cut at every offset, random edit sequences between --db runs,
# hostile values through every output format, hostile files for the linter.
FUZZ_EXAMPLES ?= 300

fuzz: $(STAMP)
	NONATOMIC_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest -q \
		tests/replay/test_hostile_logs.py tests/replay/test_hostile_values.py \
		tests/replay/test_ingest_property.py tests/lint/test_hostile_files.py

# The checkout's bytecode is written first, as installing a wheel writes it: a run under
# PYTHONDONTWRITEBYTECODE would otherwise compile every module it imports, every time.
bench: $(SPARK_STAMP)
	@$(BIN)/python -m compileall -q nonatomic
	@for script in benchmarks/bench_*.py; do \
		echo "== $$script =="; \
		$(BIN)/python $$script || exit 1; \
	done

clean:
	rm -rf $(VENV) $(FLOORS_VENV) .nonatomic_cache .pytest_cache $(REPORT)
