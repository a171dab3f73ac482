"""The probe datasets: each instance entity-neutered or with its date moved, or a recorded reason why not.

docs/metrics.md#probes. A probe run (``<method>@<probe>``, :mod:`anachron.plan`) asks the same method
the same question with one thing changed; this module builds the changed instances, once per task and
probe (rule probe_dataset), and checks that nothing else changed:

* ``neutered``: the task's anonymiser (:meth:`anachron.tasks.base.Task.neuter`) replaces the
  entities. The neutered prompt (:meth:`~anachron.tasks.base.Task.messages`) must not name any of
  the real entities' forms (:func:`anachron.tasks.neutering.reidentifies`), else the instance is
  skipped (``name_left_in_prompt``): a raw prompt is never labelled neutered.
* ``date_shift``: the cutoff, and with it "today's date", moves ``shift_days`` earlier. The shifted
  prompt with the new date written back as the old must equal the original prompt byte for byte
  (else ``prompt_differs_beyond_date``), and the new cutoff must not fall before the task's
  :attr:`~anachron.tasks.base.Task.data_begins` nor before a value the prompt shows
  (:meth:`~anachron.tasks.base.Task.input_dates`; both ``shift_before_data``). Dated claims of the
  shifted answers are verified against the shifted cutoff.

Every instance gets one row of :data:`PROBE_RECORD_COLUMNS`: ``ok`` with the forms and neutral
names that score_probe reads re-identification from, or ``skipped`` with the reason.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pandas as pd

from anachron.variants import PROBES
from anachron.tasks.base import Task
from anachron.tasks.neutering import ProbeSkip, reidentifies

#: Columns of a probe dataset's record (``results/datasets/probes/{task}.{probe}.records.parquet``).
PROBE_RECORD_COLUMNS = [
    "instance_id", "split", "probe", "status", "reason", "detail", "forms", "placeholders", "cutoff_date",
    "probe_cutoff_date",
]


def _prompt(task: Task, row: pd.Series) -> str:
    return "\n\n".join(m["content"] for m in task.messages(row))


def neutered_row(task: Task, row: pd.Series) -> tuple[pd.Series, dict[str, Any]]:
    """The neutered instance row and its record fields (``forms``, ``placeholders`` as JSON).

    Raises:
        ProbeSkip: the task's anonymiser's reasons, or ``name_left_in_prompt``.
    """
    n = task.neuter(row)
    new = row.copy()
    new["inputs"] = json.dumps(dict(n.inputs))
    if n.label is not None:
        new["label"] = json.dumps(dict(n.label))
    left = reidentifies(_prompt(task, new), n.forms, n.placeholders)
    if left:
        raise ProbeSkip("name_left_in_prompt", f"the neutered prompt still names {', '.join(left[:3])}")
    return new, {"forms": json.dumps(list(n.forms)), "placeholders": json.dumps(list(n.placeholders))}


def shifted_row(task: Task, row: pd.Series, shift_days: int) -> tuple[pd.Series, dict[str, Any]]:
    """The instance row with its cutoff ``shift_days`` earlier.

    Raises:
        ProbeSkip: ``shift_before_data`` or ``prompt_differs_beyond_date``.
    """
    cutoff = str(row["cutoff_date"])
    moved = (dt.date.fromisoformat(cutoff) - dt.timedelta(days=int(shift_days))).isoformat()
    if task.data_begins and moved < task.data_begins:
        raise ProbeSkip("shift_before_data", f"{moved} is before the task's records begin ({task.data_begins})")
    later = [d for d in task.input_dates(row) if d > moved]
    if later:
        raise ProbeSkip("shift_before_data", f"the prompt shows data observed on {later[0]}, after the shifted cutoff {moved}")
    new = row.copy()
    new["cutoff_date"] = moved
    if _prompt(task, new).replace(moved, cutoff) != _prompt(task, row):
        raise ProbeSkip("prompt_differs_beyond_date", "the shifted prompt changes more than the date")
    return new, {}


def build_probe_dataset(task: Task, instances: pd.DataFrame, probe: str, *, shift_days: int = 365) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The probe's instances and one record per instance (never raises on an instance).

    Args:
        task: the task.
        instances: its instance table (``results/datasets/{task}.parquet``).
        probe: one of :data:`anachron.plan.PROBES`.
        shift_days: days the ``date_shift`` probe moves the cutoff earlier.

    Returns:
        ``(probe_instances, records)``: the changed rows of the instances the probe could be built
        for (same columns and ids), and :data:`PROBE_RECORD_COLUMNS`, one row per input instance.

    Raises:
        ValueError: an unknown probe.
    """
    if probe not in PROBES:
        raise ValueError(f"unknown probe {probe!r} (known: {', '.join(PROBES)})")
    rows, records = [], []
    for _, row in instances.iterrows():
        rec = {"instance_id": row["instance_id"], "split": row["split"], "probe": probe, "status": "ok", "reason": None,
               "detail": None, "forms": None, "placeholders": None, "cutoff_date": str(row["cutoff_date"]),
               "probe_cutoff_date": None}
        try:
            new, extra = neutered_row(task, row) if probe == "neutered" else shifted_row(task, row, shift_days)
        except ProbeSkip as skip:
            rec.update(status="skipped", reason=skip.reason, detail=skip.detail)
        else:
            rows.append(new)
            rec.update(extra, probe_cutoff_date=str(new["cutoff_date"]))
        records.append(rec)
    out = pd.DataFrame(rows, columns=instances.columns) if rows else instances.iloc[0:0].copy()
    return out.reset_index(drop=True), pd.DataFrame(records, columns=PROBE_RECORD_COLUMNS)
