# Everything a fresh machine needs: `make run` (the app) and `make test` (the whole suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup setup-test run test test-real lint bench snapshots-update clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# The app alone.
$(VENV)/.installed-app: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

# Tests, plus the optional real local model so its integration test runs too, and the test
# plugin (tests/plugins/): a provider and a test kind added through the kontest.models and
# kontest.kinds entry points.
TEST_PLUGIN := tests/plugins/kontest_test_plugin
$(VENV)/.installed-test: pyproject.toml $(TEST_PLUGIN)/pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test,local]'
	$(BIN)/pip install --quiet -e $(TEST_PLUGIN)
	touch $@ $(VENV)/.installed-app

setup: $(VENV)/.installed-app
setup-test: $(VENV)/.installed-test

run: setup
	$(BIN)/kontest --kg places --model sim

# Two workers (pytest-xdist): 172 s instead of 314 s for the whole suite on 2 cores. Offline
# and without the real model: the tests marked local_model run in their own lane below.
test: setup-test
	$(BIN)/python -m pytest -q -n 2 --durations=15 -m "not local_model"

# The real small model (the [local] extra, in process, a core each): one worker; a test that
# skips (the extra missing) fails here, and so does a lane that selects no test (exit 5).
test-real: setup-test
	$(BIN)/python -m pytest -q -m local_model --fail-on-skip -p no:xdist

lint: setup-test
	$(BIN)/ruff check kontest_tui tests scripts benchmarks
	$(BIN)/ruff format --check kontest_tui tests scripts benchmarks
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/vulture

bench: setup-test
	for b in benchmarks/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

snapshots-update: setup-test
	$(BIN)/python -m pytest -q tests/tui --snapshot-update

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
