# The two commands of the README:
#   make demo   set everything up on a fresh machine and serve the app with a demo study and a worker
#               (safe to run again: migrations apply, the demo study is kept; DEMO_RESET=1 rebuilds it)
#   make serve  serve again without touching the data; PORT=8001 (either command) picks another port
#   make test   set everything up (ML extra and Chromium included) and run the whole test suite
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: demo test setup setup-ml setup-test browser lint serve clean

$(VENV)/.base-installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e .
	touch $@

$(VENV)/.ml-installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[ml]'
	touch $(VENV)/.base-installed $@

$(VENV)/.test-installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[ml,test]'
	touch $(VENV)/.base-installed $(VENV)/.ml-installed $@

setup: $(VENV)/.base-installed

setup-ml: $(VENV)/.ml-installed

setup-test: $(VENV)/.test-installed browser

# Debian's Chromium for the browser tests and the report's PDF; never a browser downloaded by a
# test tool. poppler-utils (pdfinfo, pdftotext) lets the tests read the PDF back.
browser:
	@command -v chromium >/dev/null 2>&1 && command -v pdftotext >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver poppler-utils; \
	  else echo "Install Debian's chromium, chromium-driver and poppler-utils (sudo apt-get install chromium chromium-driver poppler-utils)"; exit 1; fi; }

# PIPELINE_DEMO=1 also builds a study end to end with a tiny random-weight generator
# (taxonomy -> prompts -> generation -> judges -> batch); it installs the ml extra for that.
demo: setup $(if $(PIPELINE_DEMO),setup-ml)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput -v 0
	$(PY) manage.py seed_demo $(if $(DEMO_RESET),--reset)
	$(if $(PIPELINE_DEMO),$(PY) manage.py seed_pipeline_demo)
	HOST=$(HOST) PORT=$(PORT) PY=$(PY) scripts/serve.sh

serve: setup
	$(PY) manage.py migrate --noinput -v 0
	HOST=$(HOST) PORT=$(PORT) PY=$(PY) scripts/serve.sh

lint: setup-test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-logo

test: setup-test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-logo
	$(VENV)/bin/pytest $(PYTEST_ARGS)

clean:
	rm -rf var .pytest_cache .hypothesis
