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

.PHONY: run test install install-dev ingest eval sample-pdf clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install $(PIP_FLAGS) --upgrade pip

$(VENV)/.installed-app: pyproject.toml | $(BIN)/python
	$(BIN)/pip install $(PIP_FLAGS) "$(TORCH_SPEC)"
	$(BIN)/pip install $(PIP_FLAGS) -e ".[app]"
	touch $@

$(VENV)/.installed-dev: pyproject.toml $(VENV)/.installed-app
	$(BIN)/pip install $(PIP_FLAGS) -e ".[app,dev]"
	touch $@

install: $(VENV)/.installed-app
install-dev: $(VENV)/.installed-dev

ingest: install
	$(BIN)/policybot ingest data/

run: ingest
	@if [ -f app.py ]; then \
		$(BIN)/streamlit run app.py --server.address $(HOST) --server.port $(PORT) \
			--server.headless true --browser.gatherUsageStats false; \
	else \
		$(BIN)/policybot docs; \
		echo 'Try: $(BIN)/policybot search "What is the definition of an Insured Person?"'; \
	fi

test: install-dev
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q

eval: install-dev
	HF_HUB_OFFLINE=1 $(BIN)/python eval/compare_chunkers.py ../shared/eval-data/nfip-flood
	HF_HUB_OFFLINE=1 $(BIN)/python eval/compare_chunkers.py ../shared/eval-data/privacy-policies

sample-pdf: install
	$(BIN)/python data/build_sample_policy.py

clean:
	rm -rf .policybot .pytest_cache
