# kanawa — everything a fresh machine needs is installed by these targets.
#   make demo   run the built-in agent demo (no API key, no services)
#   make test   lint, type-check and run the full test suite
#   make fuzz   run the property tests with random seeds and 5,000 examples each
#   make bench  run the benchmarks in bench/ and refresh bench/results/
#   make plugins  build the Dify plugins under app/ into dist/*.difypkg
#   make docs   build the documentation site into site/ (make docs-check: the strict build, in make test)

SHELL := /bin/bash
export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(CURDIR)/.venv

# Development and CI use Python 3.12 (pyenv's build when present); kanawa itself supports 3.11+.
PYTHON ?= $(shell ls -d $$(pyenv root 2>/dev/null)/versions/3.12.*/bin/python3.12 2>/dev/null | tail -n 1 \
            || true)
ifeq ($(strip $(PYTHON)),)
PYTHON := $(shell command -v python3.12 || command -v python3)
endif

UV_BOOT := $(CURDIR)/.cache/uv-bootstrap
UV ?= $(shell command -v uv 2>/dev/null || echo $(UV_BOOT)/bin/uv)
VENV := $(CURDIR)/.venv
BIN := $(VENV)/bin

.PHONY: demo test lint typecheck pytest fuzz bench clean plugins browser docs docs-check

$(UV_BOOT)/bin/uv:
	$(PYTHON) -m venv $(UV_BOOT)
	$(UV_BOOT)/bin/pip install --quiet 'uv>=0.5'

$(VENV)/.synced: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --python $(PYTHON)
	touch $@

demo: $(VENV)/.synced
	$(BIN)/kanawa demo

lint: $(VENV)/.synced
	$(BIN)/ruff check src tests bench examples app tools
	$(BIN)/ruff format --check src tests bench examples app tools

typecheck: $(VENV)/.synced
	$(BIN)/mypy --strict src/kanawa examples

# The timeline page test drives Debian's chromium through Playwright (no browser download, ever).
browser:
	@if [ -x /usr/bin/chromium ]; then :; else \
	  $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get update -q && \
	  $$( [ "$$(id -u)" = 0 ] || echo sudo ) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; fi
	@# Japanese glyphs for the SmartAO page's screenshots (without them every kana is a box); the
	@# tests do not depend on them, so a machine that cannot install them still runs the suite
	@if fc-list :lang=ja 2>/dev/null | grep -q .; then :; else \
	  { $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get update -q && \
	  $$( [ "$$(id -u)" = 0 ] || echo sudo ) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q fonts-noto-cjk; } \
	  || echo "fonts-noto-cjk could not be installed: screenshots of Japanese pages will show boxes"; fi

pytest: $(VENV)/.synced browser smartao-textlint
	$(BIN)/python -m pytest -q

test: lint typecheck pytest docs-check

fuzz: $(VENV)/.synced
	$(BIN)/python -m pytest -q -p no:cacheprovider -m hypothesis --hypothesis-profile=fuzz tests

bench: $(VENV)/.synced smartao-textlint
	$(BIN)/python bench/loop_overhead.py
	$(BIN)/python bench/stream_passthrough.py
	$(BIN)/python bench/memory_retrieval.py
	$(BIN)/python bench/token_guard.py
	$(BIN)/python bench/ace_search_quality.py
	$(BIN)/python bench/ace_search.py
	$(BIN)/python bench/multi_agent_overhead.py
	$(BIN)/python bench/dify_plugin_overhead.py
	$(BIN)/python bench/serve_load.py

	$(BIN)/python bench/smartao_run.py

# The documentation site (mkdocs.yml, pages in docs/, the API reference from the docstrings in src/):
# `make docs` builds it into site/ (open site/index.html, or `.venv/bin/mkdocs serve` for live reload);
# `make docs-check` builds it with --strict into a temporary folder, offline — a broken link or anchor,
# a page missing from nav or a docstring mkdocstrings cannot read fails it.
docs: $(VENV)/.synced
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir $(CURDIR)/site

docs-check: $(VENV)/.synced
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	  NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir "$$tmp/site"

plugins: $(VENV)/.synced
	$(BIN)/python tools/difypkg.py app/openai_gpt5_responses app/gpt5_agent_strategies --out dist

clean:
	rm -rf $(VENV) .cache .mypy_cache .ruff_cache .pytest_cache

# SmartAO's textlint sidecar: npm ci from the committed lock into a gitignored node_modules. Without
# node/npm on the machine the target says so and StyleAgent falls back to the Sudachi rules.
SMARTAO_TEXTLINT := src/kanawa/apps/smartao/textlint
$(SMARTAO_TEXTLINT)/node_modules/.installed: $(SMARTAO_TEXTLINT)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd $(SMARTAO_TEXTLINT) && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	else echo "npm not found: SmartAO's textlint sidecar is not installed (Sudachi rules are used)"; fi

.PHONY: smartao-textlint
smartao-textlint: $(SMARTAO_TEXTLINT)/node_modules/.installed
