# Two entry points for a fresh machine (see README):
#   make run  [SNAPSHOT_DIR=../shared/snapshots] [CORES=2]   set up, then run the default workflow
#   make test                                                set up, then run the test suite
PYTHON ?= python3
VENV   ?= .venv
CORES  ?= 2
SNAPSHOT_DIR ?=
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint dry-run setup clean-results

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	CMAKE_BUILD_PARALLEL_LEVEL=$(CORES) $(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(if $(SNAPSHOT_DIR),ANACHRON_SNAPSHOT_DIR=$(abspath $(SNAPSHOT_DIR))) $(BIN)/snakemake --cores $(CORES)
	$(BIN)/anachron show

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/snakemake --lint

dry-run: $(STAMP)
	$(BIN)/snakemake -n

clean-results:
	rm -rf results logs benchmarks/out
