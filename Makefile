# ChunkLab: `make book` builds the book, `make test` runs every test. Both create .venv first.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
REQ_HASH := $(shell cat requirements.txt pyproject.toml | sha256sum | cut -c1-16)
STAMP := $(VENV)/.installed-$(REQ_HASH)
# pip prints a warning per package for the machine's absent local mirrors: hide that noise only.
QUIET_PIP := { grep -v "^WARNING: Location '" || true; }

.PHONY: all venv book test lint lab grade exercises benchmarks screenshots clean distclean help

all: test

help:
	@echo "make book         build the book into _build/html (open _build/html/index.html)"
	@echo "make test         lint, unit and property tests, notebook tests (nbval)"
	@echo "make lab          open JupyterLab on exercises/"
	@echo "make grade NB=... grade one exercise notebook"
	@echo "make exercises    regenerate exercises/ from solutions/"
	@echo "make benchmarks   run the speed and quality benchmarks"
	@echo "make screenshots  screenshot every page of the built book into /tmp/chunklab-shots"
	@echo "make clean        remove build outputs and caches (keeps .venv)"

venv: $(STAMP)

# Create the virtualenv when it is missing; (re)install when requirements.txt or pyproject.toml
# changed (the stamp's name carries their hash).
$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	rm -f $(VENV)/.installed-*
	$(BIN)/python -m pip install -q --upgrade pip 2>&1 | $(QUIET_PIP)
	# CPU torch first, pinned: an unpinned torch would pull a multi-gigabyte CUDA build.
	$(BIN)/pip install -q torch==2.13.0 2>&1 | $(QUIET_PIP)
	$(BIN)/pip install -q -r requirements.txt 2>&1 | $(QUIET_PIP)
	$(BIN)/python -c "import torch, chunklab; assert torch.__version__.startswith('2.13.0'), torch.__version__"
	touch $(STAMP)

book: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/jupyter-book build . -W --keep-going
	@echo
	@echo "Book built: open _build/html/index.html in a browser"

test: $(STAMP)
	$(BIN)/ruff check .
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .

lab: $(STAMP)
	$(BIN)/jupyter lab exercises/

grade: $(STAMP)
	@test -n "$(NB)" || { echo "usage: make grade NB=exercises/03-structural.ipynb"; exit 2; }
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/chunklab grade $(NB)

exercises: $(STAMP)
	$(BIN)/chunklab course make-exercises

benchmarks: $(STAMP)
	$(BIN)/python benchmarks/throughput.py

# Render the built book's pages in headless Chromium; PNGs go outside the repo (SHOTS=...).
SHOTS ?= /tmp/chunklab-shots
screenshots: $(STAMP)
	@test -f _build/html/intro.html || { echo "build the book first: make book"; exit 2; }
	$(BIN)/python scripts/screenshots.py --tiles --out $(SHOTS)

clean:
	rm -rf _build .pytest_cache .hypothesis .ruff_cache benchmarks/results
	find . -name __pycache__ -not -path "./$(VENV)/*" -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) .chunklab
