# The two commands of the README:
#   make demo   set everything up on a fresh machine and serve the app with a demo study, a REFLECT
#               demo audit and a worker (safe to run again: migrations apply, the demo study and
#               REFLECT set are kept; DEMO_RESET=1 rebuilds both)
#   make serve  serve again without touching the data; PORT=8001 (either command) picks another port
#   make test   set everything up (ML extra and Chromium included) and run the whole test suite
#   make bench  the CPU benchmarks in sequence (QUICK=1: smaller and fewer runs, about 15 minutes on 2 cores, 5 of them the validity suite)
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: demo test setup setup-ml setup-test browser pdf-browser port-free lint serve clean bench

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
# test tool. poppler-utils (pdfinfo, pdftotext) lets the tests read the PDF back. apt's output
# (about a hundred packages) goes to $(APT_LOG), one line to the terminal. Headless Chromium needs
# none of its recommended desktop packages; fonts-liberation (one of them) is kept for the PDF.
APT_LOG ?= var/log/apt-chromium.log
APT_INSTALL = DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends
browser:
	@command -v chromium >/dev/null 2>&1 && command -v pdftotext >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then mkdir -p $(dir $(APT_LOG)); echo "Installing Debian's chromium and poppler-utils (log: $(APT_LOG)) ..."; \
	    { apt-get update -q && $(APT_INSTALL) chromium chromium-driver poppler-utils fonts-liberation; } >$(APT_LOG) 2>&1 \
	    || { echo "apt-get failed; the end of $(APT_LOG):"; tail -n 5 $(APT_LOG); exit 1; }; \
	  else echo "Install Debian's chromium, chromium-driver and poppler-utils (sudo apt-get install chromium chromium-driver poppler-utils)"; exit 1; fi; }

# Debian's chromium alone, for the report's PDF (`make demo`): installed with apt-get when root,
# or with sudo when it needs no password; otherwise one line says how, and the demo goes on.
pdf-browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO=sudo; \
	  else echo "The report's PDF needs Debian's chromium: sudo apt-get install chromium (everything else works without it)"; exit 0; fi; \
	  mkdir -p $(dir $(APT_LOG)); echo "Installing Debian's chromium for the report's PDF (log: $(APT_LOG)) ..."; \
	  { $$SUDO apt-get update -q && $$SUDO $(APT_INSTALL) chromium fonts-liberation; } >$(APT_LOG) 2>&1 \
	    || { echo "apt-get failed, the report's PDF will be missing; the end of $(APT_LOG):"; tail -n 5 $(APT_LOG); }; }

# A busy port stops `make demo` / `make serve` before anything else runs (no migration, no
# demo data, no rotated passwords).
port-free:
	@$(PYTHON) scripts/check_port.py $(HOST) $(PORT)

# PIPELINE_DEMO=1 also builds a study end to end with a tiny random-weight generator
# (taxonomy -> prompts -> generation -> judges -> batch); it installs the ml extra for that.
demo: port-free setup pdf-browser $(if $(PIPELINE_DEMO),setup-ml)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput -v 0
	$(PY) manage.py seed_demo --base-url http://$(HOST):$(PORT) $(if $(DEMO_RESET),--reset)
	$(PY) manage.py seed_reflect_demo $(if $(DEMO_RESET),--reset)
	$(if $(PIPELINE_DEMO),$(PY) manage.py seed_pipeline_demo)
	exec env HOST=$(HOST) PORT=$(PORT) PY=$(PY) scripts/serve.sh

serve: port-free setup pdf-browser
	$(PY) manage.py migrate --noinput -v 0
	exec env HOST=$(HOST) PORT=$(PORT) PY=$(PY) scripts/serve.sh

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

# --- benchmarks (docs/performance.md) ---------------------------------------------------------
# Every CPU benchmark under bench/, one after another (never two at once: they would time each
# other). Each prints progress and one JSON line last (bench/harness.py: median [min-max] over
# repeated runs, load average before and after, CPU, cores, library versions, command line);
# that line is also written to $(BENCH_DIR)/NAME.json. A script that is not there is skipped
# with a message. Needs the ml extra (make setup-ml) and, for annotation_load, PostgreSQL on
# 127.0.0.1 (database acrb_bench, dropped and recreated). QUICK=1 runs smaller workloads with
# time budgets (each benchmark still makes at least 3 runs after its warm-up).
BENCH_DIR ?= var/bench
BENCH_CPU := stats_bench export_bench reflect_stats_timing judge_bench generation_bench \
	reflect_bench annotation_load score_bench vlm_client_bench ppi_simulation transport_bench \
	validity_suite page_loads label_import
# Arguments per benchmark; any of them can be overridden on the command line, e.g.
# make bench QUICK=1 BENCH_ARGS_judge_bench="--images 32".
ifdef QUICK
export BENCH_ARGS_stats_bench ?= --budget-s 10
export BENCH_ARGS_export_bench ?= --items 10000 --budget-s 15
export BENCH_ARGS_reflect_stats_timing ?= --budget-s 20
export BENCH_ARGS_judge_bench ?= --images 16 --batch-size 16 --image-size 256 --budget-s 30
export BENCH_ARGS_generation_bench ?= --size 32 --base-prompts 4 --budget-s 30
export BENCH_ARGS_reflect_bench ?= --templates-per-occupation 1 --budget-s 30
export BENCH_ARGS_annotation_load ?= --quick --cycles 10
export BENCH_ARGS_score_bench ?= --images 100
export BENCH_ARGS_vlm_client_bench ?=
export BENCH_ARGS_ppi_simulation ?= --replications 200 --resamples 500
export BENCH_ARGS_transport_bench ?= --arrays 800 --budget-s 15
export BENCH_ARGS_validity_suite ?= --quick
export BENCH_ARGS_page_loads ?= --repeats 1
endif

bench: SHELL := /bin/bash
bench:
	@mkdir -p $(BENCH_DIR)
	@set -o pipefail; for name in $(BENCH_CPU); do \
	  if [ ! -f bench/$$name.py ]; then echo "== bench/$$name.py not found: skipped"; continue; fi; \
	  variable=BENCH_ARGS_$$name; args="$${!variable}"; \
	  echo "== $(PY) bench/$$name.py $$args (load average $$(cut -d' ' -f1 /proc/loadavg))"; \
	  $(PY) bench/$$name.py $$args | tee $(BENCH_DIR)/$$name.log || exit 1; \
	  tail -n 1 $(BENCH_DIR)/$$name.log > $(BENCH_DIR)/$$name.json; \
	done; echo "== JSON lines in $(BENCH_DIR)/"
