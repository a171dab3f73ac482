"""Planting a task's claims of known truth: :func:`plant_claims` (the calibration's test set,
docs/verification.md#calibration).

The task's :meth:`~anachron.tasks.base.Task.planter` (a
:class:`~anachron.verify.calibration.planting.Planter` in the task package's ``calibration``
module) is run over the task's eval and control instances, kind by kind. The machinery the
planters build on is in :mod:`anachron.verify.calibration.planting`; task packages import that
module, never this one (which runs a task's planter).
"""

from __future__ import annotations

import zlib
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from anachron.tables import PLANTED_COLUMNS
from anachron.verify.task_rules import TaskRules
from anachron.verify.calibration.planting import (
    KINDS,
    LEAK_KINDS,
    Planter,
    PlantInstance,
    completion_frames,
    planting_instances,
)


def plant_claims(
    task: TaskRules,
    instances: pd.DataFrame,
    data: Mapping[str, pd.DataFrame],
    *,
    n_per_kind: int,
    seed: int,
    completions: pd.DataFrame | None = None,
    n_real_per_kind: int | None = None,
    corpus_dated: bool = False,
) -> pd.DataFrame:
    """Plant claims of known truth on ``task``'s eval and control instances.

    Args:
        task: the task (:class:`~anachron.verify.task_rules.TaskRules`) whose
            :meth:`~anachron.tasks.base.Task.planter` plants claims (stock, salary, legal, forecast).
        instances: the task's dataset (columns instance_id, task, split, cutoff_date,
            inputs JSON, label JSON, provenance JSON). Only eval and control rows get
            claims; all rows serve as the pool of other contracts / decisions.
        data: point-in-time tables, whichever exist: ``prices`` (ticker, date, close;
            required for stock), ``edgar`` (EDGAR companyfacts rows with ``filed``),
            ``sp500_changes`` (date, add, remove), ``sp500_sectors`` (as_of, ticker, name),
            ``news`` (the news snapshot: published_at, title, source, ticker),
            ``contracts`` (salary: league, player, team, signing_date, aav, total_value,
            years; default: the dataset's own labels).
        n_per_kind: claims per kind (``post_cutoff``, ``pre_cutoff``, ``outcome``) for this
            task; instances are drawn at random and families in turn, so a family with no
            candidate for an instance is skipped for that draw.
        seed: seed; planting is a deterministic function of (task, instances, data, seed).
        completions: optional run table; openers of its real evidence facts
            ("According to ...") are reused on about a fifth of the claims.
        n_real_per_kind: re-worded real facts per kind (``post_cutoff``, ``pre_cutoff``) of the
            planter's :meth:`~anachron.verify.calibration.planting.Planter.real_families`
            (stock and forecast: news headlines, EDGAR figures as filed), planted after the
            template claims with a generator of their own, so the template claims do not
            depend on them; default ``n_per_kind``; 0 plants none.
        corpus_dated: the calibrated verifier reads the dated corpus, so real news leaks may
            carry no date a rule can read (see :mod:`anachron.verify.calibration.real`).

    Returns:
        DataFrame with :data:`PLANTED_COLUMNS`; ``style`` is
        ``family:wording:date_style:declared=...`` (``:frame`` appended when a real
        opener was used). ``truth_date`` is the ISO date the fact became public (None
        where only "on or before the cutoff" is known: lower-court rulings). Template
        claims first, then the real ones (families ``news``, ``edgar_filed``).

    Raises:
        ValueError: a task without a planter (:meth:`~anachron.tasks.base.Task.planter` returns
            None), or no eval/control instance.
        KeyError: ``data`` lacks ``prices`` for stock.
    """
    task_obj, task = task, task.name
    insts = planting_instances(instances)
    if not insts:
        raise ValueError(f"{task}: no eval or control instances to plant on")
    rng = np.random.default_rng([int(seed), zlib.crc32(task.encode())])
    frames = completion_frames(completions)
    planter = task_obj.planter(insts, data, rng, frames, all_instances=instances)
    if planter is None:
        raise ValueError(f"no planter for task {task!r} (its Task.planter returns None): it plants no claims")
    planter.corpus_dated = corpus_dated
    rows = _plant_block(task, planter, insts, planter.families, n_per_kind)
    n_real = n_per_kind if n_real_per_kind is None else n_real_per_kind
    if n_real > 0:
        planter.rng = np.random.default_rng([int(seed), zlib.crc32(task.encode()), 1])
        rows += _plant_block(task, planter, insts, planter.real_families, n_real)
    return pd.DataFrame(rows, columns=PLANTED_COLUMNS)


def _plant_block(task: str, planter: Planter, insts: list[PlantInstance], families: Callable[[str], list[Any]],
                 n_per_kind: int) -> list[dict[str, Any]]:
    """Up to ``n_per_kind`` claims per kind from ``families(kind)`` (none for a kind without
    families): instances drawn at random, families in turn for the first ``2 n`` tries, then at
    random; a family with no candidate for an instance is skipped for that draw."""
    rows: list[dict[str, Any]] = []
    for kind in KINDS:
        fams = families(kind)
        made, tries = 0, 0
        while fams and made < n_per_kind and tries < 50 * n_per_kind + 100:
            fam = fams[tries % len(fams)] if tries < n_per_kind * 2 else planter.pick(fams)
            tries += 1
            inst = planter.pick(insts)
            p = fam(inst, kind)
            if p is None:
                continue
            rows.append(
                dict(task=task, instance_id=inst.instance_id, cutoff_date=inst.cutoff.isoformat(), fact=p.fact,
                     declared_date_raw=p.declared, kind=kind, style=p.style, truth_leaked=kind in LEAK_KINDS,
                     truth_date=p.truth_date.isoformat() if p.truth_date else None)
            )
            made += 1
    return rows
