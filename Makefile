# Two entry points (see README): `make run` and `make test`. Each creates/refreshes the local venv first.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
EXTRAS ?= dev,train,dataflow

export HF_HUB_OFFLINE ?= 1
export HF_HUB_DISABLE_TELEMETRY = 1
export TOKENIZERS_PARALLELISM = false

.PHONY: setup run test bench mutation clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "torch==2.13.0"
	$(PY) -m pip install -q -e ".[$(EXTRAS)]"
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/swemine run --output swemine-output/default

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -q -p no:cacheprovider tests

bench: $(STAMP)  # every benchmark in turn (not part of CI)
	for b in benchmarks/*.py; do $(PY) $$b || exit 1; done

mutation: $(STAMP)  # cosmic-ray over the label-deciding modules (long; not part of CI)
	$(PY) tests/mutation/mutate.py $(MODULES)

clean:
	rm -rf $(VENV) swemine-output
