#!/usr/bin/env bash
# A short TEMPO run on one GPU (benchmarks/tempo_gpu.py). Usage, from the repository root:
#   BASE_DIR=/models/Qwen2.5-0.5B-Instruct SNAPSHOT_DIR=../shared/snapshots benchmarks/tempo_gpu.sh [--steps 60 ...]
# BASE_DIR: a local transformers model directory of 0.5B-1.5B parameters (nothing is downloaded
# from a hub). Builds the task's dataset from the snapshot (or live sources without SNAPSHOT_DIR),
# installs the train extra (a CUDA torch build unless one is installed; vllm is used when present),
# then trains and prints validation OLR before/after and the performance-mode fraction per step.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${BASE_DIR:?set BASE_DIR to a local model directory}"
TASK="${TASK:-salary}"
VENV="${VENV:-.venv}"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet -e '.[train]'
[ -n "${SNAPSHOT_DIR:-}" ] && export ANACHRON_SNAPSHOT_DIR="$(cd "$SNAPSHOT_DIR" && pwd)"
"$VENV/bin/snakemake" --cores "$(nproc)" "results/datasets/$TASK.parquet" results/datasets/report.md results/corpus/bm25 \
    --config "run={tasks: [$TASK], methods: [temporal_hint], models: [smollm2]}"
"$VENV/bin/python" benchmarks/tempo_gpu.py --base-dir "$BASE_DIR" --task "$TASK" "$@"
