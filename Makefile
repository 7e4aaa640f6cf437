# The README's two commands:
#   make demo   set up a virtual environment and lint the bundled fixtures/
#   make test   set up the environment with every extra and run the whole suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test lint typecheck pytest clean sarif-multitool neovim chromium

# pip prints errors only (-qq): its warnings about this machine's index settings read as
# failures to a newcomer, and every real problem is an error.
PIP := $(BIN)/python -m pip install -qq --disable-pip-version-check

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip

$(VENV)/.demo-installed: pyproject.toml | $(BIN)/python
	$(PIP) -e .
	touch $@

$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	$(PIP) -e '.[dev,runtime,server,profile]'
	touch $@ $(VENV)/.demo-installed

demo: $(VENV)/.demo-installed
	@# exit 1 means findings, which is what the demo shows; 2 would be an error
	$(BIN)/tflint-leaks --no-cache fixtures/ || [ $$? -eq 1 ]

lint: $(VENV)/.test-installed
	$(BIN)/ruff check tflint_leaks tests benchmarks
	$(BIN)/ruff format --check tflint_leaks tests benchmarks
	$(BIN)/lint-imports

typecheck: $(VENV)/.test-installed
	$(BIN)/mypy

# Microsoft's SARIF validator for tests/test_reporters.py, into the gitignored node_modules/.
node_modules/.bin/sarif-multitool:
	npm install --no-save --no-package-lock --no-fund --no-audit --silent @microsoft/sarif-multitool@5.7.0

sarif-multitool:
	@if command -v npm >/dev/null; then $(MAKE) --no-print-directory node_modules/.bin/sarif-multitool; \
	else echo "npm not found: the SARIF Multitool test will be skipped"; fi

# Neovim (Debian's package) for the editor-server test in tests/test_server.py; the test is
# skipped, with this notice, where it cannot be installed.
neovim:
	@if command -v nvim >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim >/dev/null) \
		|| echo "notice: apt-get could not install neovim: the Neovim test will be skipped"; \
	else echo "notice: nvim not found and apt-get unavailable (or not root): the Neovim test will be skipped"; fi

# Chromium (Debian's package) for the HTML report test in tests/runtime/test_runtime_report.py;
# the test is skipped, with this notice, where it cannot be installed.
chromium:
	@if command -v chromium >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
		|| echo "notice: apt-get could not install chromium: the HTML report test will be skipped"; \
	else echo "notice: chromium not found and apt-get unavailable (or not root): the HTML report test will be skipped"; fi

pytest: $(VENV)/.test-installed sarif-multitool neovim chromium
	$(BIN)/python -m pytest

test: lint typecheck pytest

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .tflint-leaks-cache
