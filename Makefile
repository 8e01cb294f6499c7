# Atrium: `make run` starts the app, `make test` runs every check. Both create .venv if missing.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck contracts unit bench bundle bundle-test lock clean peers conformance

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python requirements.lock pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/python -m desktop.preflight
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

# A one-folder app in dist/atrium (PyInstaller, offline; see packaging/README.md).
bundle: $(STAMP)
	LITELLM_LOCAL_MODEL_COST_MAP=True $(BIN)/pyinstaller --noconfirm --clean --log-level WARN \
		--distpath dist --workpath .cache/pyinstaller packaging/atrium.spec

# The bundle as the sidecar and as the window, with only /usr/bin:/bin on PATH.
bundle-test: bundle
	QT_QPA_PLATFORM=offscreen ATRIUM_BUNDLE=dist/atrium $(BIN)/pytest -m bundle tests/packaging

# The official MCP conformance suite (pinned, from npm into .cache/conformance, on the venv's
# Node): the client suite against the host, the server suite against each built-in server over
# HTTP. Prints the passing counts; fails below the floors in tests/conformance/floors.py.
conformance: $(STAMP)
	$(BIN)/python -m tests.conformance

# Peer CLIs from npm into .cache/peers (OpenClaw, on the venv's pinned Node >= 24.16).
peers: $(STAMP)
	$(BIN)/python -m tests.setup.openclaw

# Re-resolve the pinned set after changing dependencies in pyproject.toml.
lock: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m pip freeze --exclude-editable | grep -v '^atrium' > requirements.lock

clean:
	rm -rf $(VENV) .cache
