"""Where the ``forecastbench`` source's data lives: the datasets repository's raw files, the
snapshot folder, and the names of question and resolution sets."""

from __future__ import annotations

import re

#: Source name (provenance records).
SOURCE = "forecastbench"
#: Raw-file root of the ForecastBench public datasets repository.
BASE_URL = "https://raw.githubusercontent.com/forecastingresearch/forecastbench-datasets/main/datasets"
QUESTION_SET_PATH = "question_sets/{name}"
RESOLUTION_SET_PATH = "resolution_sets/{name}"
#: Snapshot folder, relative to the snapshot directory.
SNAPSHOT_SUBDIR = "forecastbench"
SNAPSHOT_LAYOUT = "forecastbench/YYYY-MM-DD-llm.json and forecastbench/YYYY-MM-DD_resolution_set.json"
#: Question sets read when none are named (the two rounds of the shared snapshot).
DEFAULT_QUESTION_SETS = ("2024-07-21-human.json", "2025-10-26-llm.json")

QUESTION_SET_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})-([A-Za-z0-9_]+)\.json$")
RESOLUTION_SET_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})_resolution_set\.json$")


def resolution_set_name(question_set: str) -> str:
    """Resolution-set file name of a question set's round: ``YYYY-MM-DD_resolution_set.json``.

    Raises ``ValueError`` when ``question_set`` is not named ``YYYY-MM-DD-<kind>.json``.
    """
    m = QUESTION_SET_NAME.match(question_set)
    if not m:
        raise ValueError(f"question set name {question_set!r} is not of the form YYYY-MM-DD-llm.json")
    return f"{m.group(1)}_resolution_set.json"
