# Atrium: `make run` starts the app, `make test` runs every check. Both create .venv if missing.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck contracts unit bench lock clean peers

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python requirements.lock pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/atrium

test: $(STAMP) lint typecheck contracts unit

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/pyright

contracts: $(STAMP)
	$(BIN)/lint-imports

unit: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python -m bench

# Peer CLIs from npm into .cache/peers (OpenClaw, on the venv's pinned Node >= 24.16).
peers: $(STAMP)
	$(BIN)/python -m tests.setup.openclaw

# Re-resolve the pinned set after changing dependencies in pyproject.toml.
lock: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m pip freeze --exclude-editable | grep -v '^atrium' > requirements.lock

clean:
	rm -rf $(VENV) .cache
