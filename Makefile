# copydesk: `make demo` and `make test` set everything up themselves.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The exact versions (with their hashes) of everything `setup` installs: the
# application and its `test` extra. pyproject.toml keeps the ranges; `make lock`
# resolves them again to the newest releases inside them and writes this file.
LOCK := requirements.lock

.PHONY: setup demo test bench lint docs lock clean cassettes

setup: $(STAMP)

$(STAMP): pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --require-hashes -r $(LOCK)
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# uv resolves for every platform (markers) on Python 3.11, the version CI runs.
lock:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet "uv>=0.9"
	$(BIN)/uv pip compile pyproject.toml --extra test --universal --python-version 3.11 \
		--generate-hashes --upgrade --custom-compile-command "make lock" --quiet -o $(LOCK)

demo: setup
	$(BIN)/copydesk demo

# Three pytest-xdist workers on CI's 2 cores: with two, each was busy about 840 s of an
# idle run while the cores were busy only 800 s of CPU in all (the browser tests wait on
# pages, 774 s of them, more than the 10 minutes the suite may take on one worker). Two
# workers share the browser modules, each with its own review server and Chromium, and
# one runs the rest, the longest modules first (tests/scheduling.py,
# tests/module_durations.json). `make test PYTEST_WORKERS=0` runs in one process.
PYTEST_WORKERS ?= 3

test: setup
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) $(PYTEST_ARGS)

bench: setup
	$(BIN)/python -m bench

# Record real Messages API replies into tests/cassettes/ (docs/models.md, "Cassettes").
# Needs ANTHROPIC_API_KEY: without it the recorder prints one line and exits 3,
# which make reports as "Error 3" (make itself then exits 2); nothing is changed.
cassettes: setup
	$(BIN)/python -m tests.record_cassettes

docs: setup
	$(BIN)/python -m docs.gen_cli

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache
