"""Leakage-adjusted Perf and the counterfactual probes: per-instance pairs and their aggregates.

docs/metrics.md#leakage-adjusted-perf and docs/metrics.md#probes. Pure functions of stored rows:

* :func:`pair_probe`: one :data:`~anachron.tables.PROBE_SCORE_COLUMNS` row per sampled instance of a
  probe run, paired with the method's own answer (Perf and OLR of both, whether the prediction
  changed, whether a neutered answer names a real entity);
* :func:`aggregate_clean`: ``perf_clean`` (mean of the closed-world re-asks' Perf, answers without a
  leaked claim keeping their own), ``perf_leak_share`` = (Perf - perf_clean) / Perf over the same
  answers, and their strict counterparts, each with a percentile bootstrap CI over instances;
* :func:`aggregate_probes`: per probed method, ``neutered_perf``, ``neutered_gap`` = Perf - neutered
  Perf (paired bootstrap CI; ``neutered_gap_p`` its exact sign test; an upper bound on the look-ahead
  benefit, Glasserman & Lin, arXiv 2309.17322, §4), ``reid_rate`` (share of neutered answers naming a
  real entity), ``shift_change_rate`` (share of date-shifted predictions that differ),
  ``shift_perf`` (mean Perf of the shifted answers), ``shift_perf_change`` = shifted Perf - Perf
  (``shift_perf_change_p``), ``shift_olr`` (OLR of the
  shifted answers, verified against the shifted cutoff) and the skipped counts
  (``neutered_skipped``, ``shift_skipped``: value = skipped instances, n = sampled instances).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from anachron.metrics.core import bootstrap_ci, resample_indices
from anachron.metrics.paired import paired_comparison
from anachron.tables import METRIC_COLUMNS, PREDICTION_USABLE, PROBE_SCORE_COLUMNS
from anachron.tasks.neutering import reidentifies

_KEYS = ["task", "method", "model", "split"]


def pair_probe(
    sampled: pd.DataFrame, records: pd.DataFrame, base_run: pd.DataFrame, base_scores: pd.DataFrame,
    probe_run: pd.DataFrame, probe_scores: pd.DataFrame, *, task: str, method: str, model: str, probe: str,
) -> pd.DataFrame:
    """Pair a probe run with its method's run, instance by instance.

    Args:
        sampled: the instances the probe run sampled (``instance_id``, ``split``).
        records: the probe dataset's records (:data:`anachron.tasks.probes.PROBE_RECORD_COLUMNS`).
        base_run, base_scores: the method's own completions and instance scores.
        probe_run, probe_scores: the probe run's completions and instance scores.
        task, model: the run's task and model; method: the probed method (the ``method`` of every
            output row, not the probe run's ``<method>@<probe>``); probe: its probe.

    Returns:
        :data:`~anachron.tables.PROBE_SCORE_COLUMNS`, one row per sampled instance: ``status``
        ``paired``, ``skipped`` (with the record's reason) or ``not_sampled`` (the method's run has no
        answer for it).
    """
    rec = records.set_index("instance_id")
    runs = {k: df.set_index("instance_id") for k, df in (("base", base_run), ("probe", probe_run))}
    scores = {k: df.set_index("instance_id") for k, df in (("base", base_scores), ("probe", probe_scores))}
    rows: list[dict[str, Any]] = []
    for s in sampled.itertuples(index=False):
        iid = s.instance_id
        r = rec.loc[iid] if iid in rec.index else None
        out = {"task": task, "method": method, "model": model, "probe": probe, "split": s.split, "instance_id": iid,
               "status": "paired", "reason": None, "cutoff_date": None if r is None else r["cutoff_date"],
               "probe_cutoff_date": None if r is None else r["probe_cutoff_date"], "parsed": None, "parsed_probe": None,
               "perf": np.nan, "perf_probe": np.nan, "olr": np.nan, "olr_probe": np.nan, "prediction_changed": None,
               "reidentified": None, "reid_forms": None}
        if r is None or r["status"] != "ok":
            out.update(status="skipped", reason="not_in_probe_dataset" if r is None else r["reason"])
        elif iid not in runs["base"].index:
            out.update(status="not_sampled", reason="the method's run has no answer for this instance")
        elif iid not in runs["probe"].index:
            out.update(status="not_sampled", reason="the probe run has no answer for this instance")
        else:
            b, p = runs["base"].loc[iid], runs["probe"].loc[iid]
            out["parsed"] = b["parse_status"] in PREDICTION_USABLE
            out["parsed_probe"] = p["parse_status"] in PREDICTION_USABLE
            for key, src in (("", "base"), ("_probe", "probe")):
                if iid in scores[src].index:
                    out[f"perf{key}"] = float(scores[src].loc[iid, "perf"])
                    out[f"olr{key}"] = float(scores[src].loc[iid, "olr"])
            if probe == "date_shift" and out["parsed"] and out["parsed_probe"]:
                out["prediction_changed"] = json.loads(b["prediction"]) != json.loads(p["prediction"])
            if probe == "neutered" and str(p["completion"] or "").strip():
                forms = json.loads(r["forms"] or "[]")
                found = reidentifies(str(p["completion"]), forms, json.loads(r["placeholders"] or "[]"))
                out.update(reidentified=bool(found), reid_forms=json.dumps(found))
        rows.append(out)
    return pd.DataFrame(rows, columns=PROBE_SCORE_COLUMNS)


def _row(base: dict[str, Any], metric: str, value: float, lo: float, hi: float, n: int) -> dict[str, Any]:
    return {**base, "metric": metric, "value": value, "ci_low": lo, "ci_high": hi, "n": int(n)}


def _mean_row(base: dict[str, Any], metric: str, values: np.ndarray, boot: dict[str, Any]) -> dict[str, Any]:
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    lo, hi = bootstrap_ci(v, **boot)
    return _row(base, metric, float(v.mean()) if v.size else np.nan, lo, hi, v.size)


def leak_share(perf: np.ndarray, clean: np.ndarray, *, n_resamples: int = 2000, confidence: float = 0.95,
               seed: int = 0) -> tuple[float, float, float, int]:
    """``(mean(perf) - mean(clean)) / mean(perf)`` over the pairs where both are defined, with a
    percentile bootstrap CI over instances (pairs resampled together) and n; NaN where mean(perf) is 0
    or there is no pair (docs/metrics.md#leakage-adjusted-perf)."""
    perf, clean = np.asarray(perf, dtype=float), np.asarray(clean, dtype=float)
    ok = ~np.isnan(perf) & ~np.isnan(clean)
    a, b = perf[ok], clean[ok]
    if not a.size or a.mean() == 0:
        return np.nan, np.nan, np.nan, int(a.size)
    value = float((a.mean() - b.mean()) / a.mean())
    if a.size == 1:
        return value, value, value, 1
    idx = resample_indices(a.size, n_resamples, seed)
    ma, mb = a[idx].mean(axis=1), b[idx].mean(axis=1)
    shares = np.where(ma > 0, (ma - mb) / np.where(ma > 0, ma, 1.0), np.nan)
    shares = shares[~np.isnan(shares)]
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(shares, [alpha, 1.0 - alpha]) if shares.size else (np.nan, np.nan)
    return value, float(lo), float(hi), int(a.size)


def aggregate_clean(clean: pd.DataFrame, *, n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """``perf_clean``, ``perf_leak_share``, their ``_strict`` counterparts and ``perf_clean_asked`` (answers
    asked again; value = their share of the parsed answers) per run and split (:data:`METRIC_COLUMNS`)."""
    boot = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    out: list[dict[str, Any]] = []
    for key, g in clean.groupby(_KEYS, sort=True):
        base = dict(zip(_KEYS, key))
        perf = g["perf"].to_numpy(dtype=float)
        for suffix in ("", "_strict"):
            pc = g[f"perf_clean{suffix}"].to_numpy(dtype=float)
            both = ~np.isnan(perf) & ~np.isnan(pc)
            out.append(_mean_row(base, f"perf_clean{suffix}", np.where(both, pc, np.nan), boot))
            out.append(_row(base, f"perf_leak_share{suffix}", *leak_share(perf, pc, **boot)))
        parsed = ~np.isnan(perf)
        asked = g["status"].isin(["asked", "empty_evidence", "invalid_answer"]).to_numpy()
        out.append(_row(base, "perf_clean_asked", float(asked[parsed].mean()) if parsed.any() else np.nan,
                        np.nan, np.nan, int(parsed.sum())))
    return pd.DataFrame(out, columns=METRIC_COLUMNS)


def aggregate_probes(pairs: pd.DataFrame, *, n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """The probe metrics of the module docstring per probed run and split (:data:`METRIC_COLUMNS`)."""
    boot = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    out: list[dict[str, Any]] = []
    for key, g in pairs.groupby([*_KEYS, "probe"], sort=True):
        base, probe = dict(zip(_KEYS, key[:4])), key[4]
        paired = g[g["status"] == "paired"]
        n_skip = int((g["status"] == "skipped").sum())
        both = paired.dropna(subset=["perf", "perf_probe"]).set_index("instance_id")
        if probe == "neutered":
            out.append(_mean_row(base, "neutered_perf", both["perf_probe"].to_numpy(dtype=float), boot))
            cmp = paired_comparison(both["perf_probe"], both["perf"], lower_is_better=False, **boot)
            out.append(_row(base, "neutered_gap", cmp.mean_diff, cmp.ci_low, cmp.ci_high, cmp.n))
            out.append(_row(base, "neutered_gap_p", cmp.p_value, np.nan, np.nan, cmp.n))
            reid = paired["reidentified"].dropna().astype(float).to_numpy()
            out.append(_mean_row(base, "reid_rate", reid, boot))
            out.append(_row(base, "neutered_skipped", float(n_skip), np.nan, np.nan, len(g)))
        else:
            changed = paired["prediction_changed"].dropna().astype(float).to_numpy()
            out.append(_mean_row(base, "shift_change_rate", changed, boot))
            out.append(_mean_row(base, "shift_perf", both["perf_probe"].to_numpy(dtype=float), boot))
            cmp = paired_comparison(both["perf"], both["perf_probe"], lower_is_better=False, **boot)
            out.append(_row(base, "shift_perf_change", cmp.mean_diff, cmp.ci_low, cmp.ci_high, cmp.n))
            out.append(_row(base, "shift_perf_change_p", cmp.p_value, np.nan, np.nan, cmp.n))
            out.append(_mean_row(base, "shift_olr", paired["olr_probe"].to_numpy(dtype=float), boot))
            out.append(_row(base, "shift_skipped", float(n_skip), np.nan, np.nan, len(g)))
    return pd.DataFrame(out, columns=METRIC_COLUMNS)
