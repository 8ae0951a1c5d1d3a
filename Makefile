# privacy-checklist: one command sets everything up and runs the main job (`make demo`),
# one runs the tests (`make test`). Both are idempotent: a second run skips what is done.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# CPU build of torch; it must be installed before sentence-transformers pulls in a CUDA build.
TORCH_SPEC ?= torch==2.13.0

.PHONY: setup demo test lint format kb bench clean help

help:
	@echo "make demo   set up .venv (torch CPU, the project, WordNet data) and run the main job"
	@echo "make test   the same setup, then ruff and the whole test suite"
	@echo "make kb     rebuild the shipped knowledge base from ../shared/data/hipaa"
	@echo "make bench  run the benchmarks in bench/"

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null || { echo "setup failed: $(PYTHON) not found; install Python 3.11+ or pass PYTHON=/path/to/python3"; exit 1; }
	@echo "== creating $(VENV)"
	@$(PYTHON) -m venv $(VENV) || { echo "setup failed: could not create $(VENV) (on Debian: apt-get install python3-venv)"; exit 1; }
	@$(BIN)/python -m pip install --quiet --upgrade pip || { echo "setup failed: could not upgrade pip in $(VENV)"; exit 1; }

$(VENV)/.stamp-torch: | $(BIN)/python
	@echo "== installing $(TORCH_SPEC) (CPU) first"
	@$(BIN)/pip install --quiet "$(TORCH_SPEC)" || { echo "setup failed: could not install $(TORCH_SPEC); set TORCH_SPEC to a CPU build your index serves"; exit 1; }
	@touch $@

$(VENV)/.stamp-deps: pyproject.toml $(VENV)/.stamp-torch
	@echo "== installing privacy-checklist and its dependencies (editable)"
	@$(BIN)/pip install --quiet -e ".[dev]" "$(TORCH_SPEC)" || { echo "setup failed: pip could not install the project; see the messages above"; exit 1; }
	@touch $@

$(VENV)/.stamp-wordnet: $(VENV)/.stamp-deps
	@echo "== WordNet data for NLTK"
	@$(BIN)/python -m privacy_checklist.ingest.wordnet --install || { echo "setup failed: WordNet data could not be installed; see the message above"; exit 1; }
	@touch $@

setup: $(VENV)/.stamp-wordnet

demo: setup
	@$(BIN)/pcheck demo

lint: setup
	@$(BIN)/ruff check . || { echo "lint failed: run '$(BIN)/ruff check . --fix' or fix the lines above"; exit 1; }
	@$(BIN)/ruff format --check . || { echo "format check failed: run '$(BIN)/ruff format .'"; exit 1; }

format: setup
	@$(BIN)/ruff format . && $(BIN)/ruff check --fix .

test: setup lint
	@$(BIN)/python -m pytest -q

kb: setup
	@$(BIN)/pcheck ingest --source ../shared/data/hipaa/ecfr-title45-part160.html \
	  ../shared/data/hipaa/ecfr-title45-part162.html ../shared/data/hipaa/ecfr-title45-part164.html \
	  --ontologies ../shared/data/ontologies --out kg/builtin

bench: setup
	@$(BIN)/python bench/ingest.py
	@$(BIN)/python bench/graphs.py
	@$(BIN)/python bench/retrieval.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
