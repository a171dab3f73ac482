# Two entry points for a fresh machine (see README):
#   make run  [SNAPSHOT_DIR=../shared/snapshots] [CORES=2]   set up, then run the default workflow
#   make test                                                set up (with the train extra), then run the test suite
# and TEMPO on CPU (README, docs/methods.md#tempo):
#   make tempo [SNAPSHOT_DIR=../shared/snapshots]            set up with the train extra, train, evaluate
PYTHON ?= python3
VENV   ?= .venv
CORES  ?= 2
SNAPSHOT_DIR ?=
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TRAIN_STAMP := $(VENV)/.installed-train

.PHONY: run test lint dry-run setup setup-train tempo clean-results

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	CMAKE_BUILD_PARALLEL_LEVEL=$(CORES) $(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# the optional train extra (torch CPU build, transformers, trl, peft, gguf) for TEMPO training and its tests
setup-train: $(TRAIN_STAMP)

$(TRAIN_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,train]'
	touch $(TRAIN_STAMP)

run: $(STAMP)
	$(if $(SNAPSHOT_DIR),ANACHRON_SNAPSHOT_DIR=$(abspath $(SNAPSHOT_DIR))) $(BIN)/snakemake --cores $(CORES)
	$(if $(SNAPSHOT_DIR),ANACHRON_SNAPSHOT_DIR=$(abspath $(SNAPSHOT_DIR))) $(BIN)/snakemake --report results/report.html
	$(BIN)/anachron summary
	$(BIN)/anachron show

test: $(TRAIN_STAMP)
	$(BIN)/python -m pytest -q

tempo: $(TRAIN_STAMP)
	$(if $(SNAPSHOT_DIR),ANACHRON_SNAPSHOT_DIR=$(abspath $(SNAPSHOT_DIR))) $(BIN)/snakemake tempo --configfile config/tempo-cpu.yaml --cores $(CORES)
	$(BIN)/anachron summary

lint: $(STAMP)
	$(BIN)/snakemake --lint

dry-run: $(STAMP)
	$(BIN)/snakemake -n

clean-results:
	rm -rf results logs benchmarks/out
