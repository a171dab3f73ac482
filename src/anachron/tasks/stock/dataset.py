"""The stock task's dataset: 5 companies of one GICS sector to rank by total return over a window.

Definition (docs/tasks.md#stock; TEMPO paper, App. B.3): for a window ``[start, end]``
the cutoff is ``start - 1 day``. The universe is the S&P 500 as of the cutoff (membership
spells, survivorship-free) with each member's GICS sector as of the cutoff. The label is
the ranking of the five companies by total return on adjusted close, from the first
trading day on/after ``start`` to the last trading day on/before ``end``.

Instances share the columns of every task: ``instance_id, task, split, cutoff_date,
inputs, label, provenance`` (``inputs``, ``label`` and ``provenance`` are JSON strings).
"""

from __future__ import annotations

import hashlib
import json
import logging
from math import comb
from typing import Any, Sequence

import numpy as np
import pandas as pd

from anachron.frames import is_null
from anachron.sources.base import check_columns, normalize_ticker
from anachron.sources.index_membership import members_as_of
from anachron.sources.sp500 import SECTOR_RULE_MISSING, sector_as_of
from anachron.sources.yahoo import flag_price_jumps
from anachron.tasks.base import INSTANCE_COLUMNS

log = logging.getLogger(__name__)

TASK = "stock"
GROUP_SIZE = 5
MIN_SECTOR_SIZE = 5
SPLITS = ("train", "eval", "control")
EXCLUSION_COLUMNS = ["window", "ticker", "reason", "detail"]

#: Exclusion reasons (the ``reason`` column of the exclusions frame).
REASON_NO_SECTOR = "no_sector"
REASON_NO_PRICES = "no_prices_in_window"
REASON_NO_FIRST = "no_price_first_day"
REASON_NO_LAST = "no_price_last_day"
REASON_PRICE_JUMP = "price_jump_in_window"


def _window_seed(seed: int, name: str) -> np.random.SeedSequence:
    """Per-window seed: depends on the global seed and the window name only (not on order)."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return np.random.SeedSequence([int(seed), int.from_bytes(digest[:8], "little")])


def _check_window(w: dict[str, Any], i: int) -> dict[str, Any]:
    where = f"windows[{i}]" + (f" ({w.get('name')!r})" if isinstance(w, dict) and w.get("name") else "")
    if not isinstance(w, dict):
        raise ValueError(f"{where}: must be a mapping with name, split, start, end, n")
    for key in ("name", "split", "start", "end", "n"):
        if key not in w:
            raise ValueError(f"{where}: missing key {key!r}")
    if w["split"] not in SPLITS:
        raise ValueError(f"{where}: split must be one of {SPLITS}, got {w['split']!r}")
    try:
        start, end = pd.Timestamp(w["start"]).normalize(), pd.Timestamp(w["end"]).normalize()
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{where}: start/end must be ISO dates YYYY-MM-DD ({exc})") from exc
    if end <= start:
        raise ValueError(f"{where}: end {end.date()} must be after start {start.date()}")
    n = w["n"]
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"{where}: n must be a non-negative integer, got {n!r}")
    share = float(w.get("affected_share", 0.8))
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"{where}: affected_share must be in [0, 1], got {share}")
    affected = list(w.get("affected_sectors") or [])
    return {
        "name": str(w["name"]),
        "split": w["split"],
        "start": start,
        "end": end,
        "n": int(n),
        "affected_sectors": affected,
        "affected_share": share,
    }


def prices_window_summary(prices: pd.DataFrame, tickers: Sequence[str], start: Any, end: Any) -> tuple[pd.DataFrame, pd.Timestamp | None, pd.Timestamp | None]:
    """Adjusted-close total return of each ticker over the trading days in ``[start, end]``.

    ``prices``: long frame ``ticker, date, adj_close`` (as from
    :class:`anachron.sources.yahoo.YahooPriceReader`). The window's first trading day is the
    earliest ``date >= start`` and its last the latest ``date <= end`` among the rows of
    ``tickers`` (a market-wide calendar, so every company is measured over the same days).

    Returns ``(summary, first_day, last_day)``; ``summary`` has one row per ticker:
    ``ticker, first_close, last_close`` (adjusted, NaN when missing on that day),
    ``n_days`` (rows in the window), ``total_return`` = last / first - 1 (unitless).
    ``first_day``/``last_day`` are None when no ticker has rows in the window.
    """
    check_columns(prices, ["ticker", "date", "adj_close"], "prices")
    start, end = pd.Timestamp(start).normalize(), pd.Timestamp(end).normalize()
    tick = [normalize_ticker(t) for t in tickers]
    dates = pd.to_datetime(prices["date"])
    sel = prices.loc[prices["ticker"].isin(tick) & (dates >= start) & (dates <= end), ["ticker", "date", "adj_close"]].copy()
    sel["date"] = pd.to_datetime(sel["date"])
    summary = pd.DataFrame({"ticker": tick})
    if sel.empty:
        summary["first_close"] = np.nan
        summary["last_close"] = np.nan
        summary["n_days"] = 0
        summary["total_return"] = np.nan
        return summary, None, None
    first_day, last_day = sel["date"].min(), sel["date"].max()
    valid = sel[sel["adj_close"].notna() & (sel["adj_close"] > 0)]
    first = valid[valid["date"] == first_day].drop_duplicates("ticker").set_index("ticker")["adj_close"]
    last = valid[valid["date"] == last_day].drop_duplicates("ticker").set_index("ticker")["adj_close"]
    counts = sel.groupby("ticker").size()
    summary["first_close"] = summary["ticker"].map(first).astype("float64")
    summary["last_close"] = summary["ticker"].map(last).astype("float64")
    summary["n_days"] = summary["ticker"].map(counts).fillna(0).astype("int64")
    summary["total_return"] = summary["last_close"] / summary["first_close"] - 1.0
    return summary, first_day, last_day


def _sample_groups(
    rng: np.random.Generator,
    pools: dict[str, dict[str, list[str]]],
    counts: dict[str, int],
    window: str,
) -> list[tuple[str, str, tuple[str, ...]]]:
    """Draw unique 5-ticker groups: sector uniform within a pool, tickers without replacement.

    Returns ``(pool, sector, sorted_tickers)`` in a seeded interleaved order.
    """
    order = [p for p, k in counts.items() for _ in range(k)]
    order = [order[i] for i in rng.permutation(len(order))] if order else []
    seen: set[tuple[str, ...]] = set()
    out = []
    for pool in order:
        sectors = sorted(pools[pool])
        for _ in range(10_000):
            sector = sectors[int(rng.integers(len(sectors)))]
            members = pools[pool][sector]
            pick = rng.choice(len(members), size=GROUP_SIZE, replace=False)
            group = tuple(sorted(members[int(j)] for j in pick))
            if group not in seen:
                break
        else:  # pragma: no cover - capacity is checked before sampling
            raise ValueError(f"window {window!r}: could not draw a new unique group from pool {pool!r}")
        seen.add(group)
        out.append((pool, sector, group))
    return out


def build_stock_instances(
    prices: pd.DataFrame,
    spells: pd.DataFrame,
    sectors: pd.DataFrame,
    windows: Sequence[dict[str, Any]],
    *,
    seed: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Build stock-ranking instances for each window; return ``(instances, exclusions)``.

    Inputs:

    * ``prices``: long daily prices ``ticker, date, adj_close, ...`` (S&P ticker spelling),
      covering every window's start..end (from ``YahooPriceReader(..., end=end + 1 day)``);
    * ``spells``: membership spells ``ticker, start_date, end_date`` (SP500MembershipReader);
    * ``sectors``: GICS tables ``as_of, ticker, name, sector`` (GICSSectorReader);
    * ``windows``: dicts ``{name, split ("train"|"eval"|"control"), start, end (ISO dates,
      both inclusive), n (instances), affected_sectors (GICS names, may be empty),
      affected_share (default 0.8)}``;
    * ``seed``: integer; each window gets its own generator from (seed, window name), so
      the same inputs and seed give identical output regardless of window order.

    Per window: cutoff = start - 1 day; universe = :func:`members_as_of` (cutoff); sector
    via :func:`sector_as_of` (cutoff). Members are excluded, with a reason, when they have
    no sector (``no_sector``), no price rows in the window (``no_prices_in_window``), or
    no positive adjusted close on the window's first trading day (``no_price_first_day``)
    or last (``no_price_last_day``), or when their adjusted close jumps by more than
    :data:`anachron.sources.yahoo.JUMP_FACTOR` on a day after the first trading day up to
    the last (``price_jump_in_window``, :func:`anachron.sources.yahoo.flag_price_jumps`: a
    probable change of company behind the symbol, so the return would mix two companies).
    Total return = adj_close(last) / adj_close(first) - 1.

    Sampling: ``round(n * affected_share)`` groups from the affected sectors and the rest
    from the other sectors (all from one side if the other has no eligible sector); a
    sector is eligible with >= 5 remaining tickers; each group picks its sector uniformly
    among the pool's eligible sectors, then 5 tickers without replacement; groups (sorted
    ticker tuples) are unique within a window. Company order in ``inputs`` is shuffled.

    Returns:

    * ``instances``: columns ``instance_id`` (``stock-<split>-<start>-<NNNN>``), ``task``
      ("stock"), ``split``, ``cutoff_date`` (ISO str), ``inputs`` (JSON: sector,
      start_date, end_date, companies [{ticker, name}]), ``label`` (JSON: ranking best to
      worst, returns {ticker: float, unitless fraction}, first_day, last_day), ``provenance``
      (JSON: window, pool, seed, sector_rule and sector_as_of per ticker, universe_size);
    * ``exclusions``: columns ``window, ticker, reason, detail``.

    Raises ``ValueError`` for a malformed window, a window without any price rows, fewer
    eligible unique groups than requested, or duplicate instance ids across windows;
    :class:`anachron.sources.base.SourceError` when an input frame lacks columns.
    """
    check_columns(prices, ["ticker", "date", "adj_close"], "prices")
    check_columns(spells, ["ticker", "start_date", "end_date"], "membership spells")
    check_columns(sectors, ["as_of", "ticker", "name", "sector"], "GICS sector table")
    checked = [_check_window(w, i) for i, w in enumerate(windows)]
    names = [w["name"] for w in checked]
    if len(set(names)) != len(names):
        raise ValueError(f"window names must be unique, got {names}")

    px = prices[["ticker", "date", "adj_close"]].copy()
    px["date"] = pd.to_datetime(px["date"])
    jumps = flag_price_jumps(prices)

    instance_rows: list[dict[str, Any]] = []
    exclusion_rows: list[tuple[str, str, str, str]] = []
    for w in checked:
        name, start, end = w["name"], w["start"], w["end"]
        cutoff = start - pd.Timedelta(days=1)
        universe = members_as_of(spells, cutoff)
        sec = sector_as_of(sectors, universe, cutoff).set_index("ticker")

        no_sector = sec.index[sec["sector_rule"] == SECTOR_RULE_MISSING].tolist()
        for t in no_sector:
            exclusion_rows.append((name, t, REASON_NO_SECTOR, "no GICS sector in any constituents table"))
        with_sector = [t for t in universe if t not in set(no_sector)]

        summary, first_day, last_day = prices_window_summary(px, with_sector, start, end)
        if first_day is None:
            raise ValueError(
                f"window {name!r}: no price rows between {start.date()} and {end.date()} for any of "
                f"{len(with_sector)} members; do the prices cover this window?"
            )
        summary = summary.set_index("ticker")
        eligible: list[str] = []
        for t in with_sector:
            r = summary.loc[t]
            if r["n_days"] == 0:
                exclusion_rows.append((name, t, REASON_NO_PRICES, f"no price rows in {start.date()}..{end.date()}"))
            elif pd.isna(r["first_close"]):
                exclusion_rows.append((name, t, REASON_NO_FIRST, f"no adjusted close on {first_day.date()}"))
            elif pd.isna(r["last_close"]):
                exclusion_rows.append((name, t, REASON_NO_LAST, f"no adjusted close on {last_day.date()}"))
            elif len(inside := jumps[(jumps["ticker"] == t) & (jumps["date"] > first_day) & (jumps["date"] <= last_day)]):
                exclusion_rows.append((name, t, REASON_PRICE_JUMP, "; ".join(inside["detail"])))
            else:
                eligible.append(t)

        by_sector: dict[str, list[str]] = {}
        for t in eligible:
            by_sector.setdefault(str(sec.at[t, "sector"]), []).append(t)
        by_sector = {s: sorted(ts) for s, ts in by_sector.items() if len(ts) >= MIN_SECTOR_SIZE}
        affected_names = set(w["affected_sectors"])
        unknown = affected_names - set(sec["sector"].dropna())
        if unknown:
            log.warning("window %s: affected sector(s) %s not found among GICS sectors", name, sorted(unknown))
        pools = {
            "affected": {s: ts for s, ts in by_sector.items() if s in affected_names},
            "other": {s: ts for s, ts in by_sector.items() if s not in affected_names},
        }
        n = w["n"]
        if not pools["affected"]:
            counts = {"affected": 0, "other": n}
        elif not pools["other"]:
            counts = {"affected": n, "other": 0}
        else:
            n_aff = int(round(n * w["affected_share"]))
            counts = {"affected": n_aff, "other": n - n_aff}
        for pool, k in counts.items():
            capacity = sum(comb(len(ts), GROUP_SIZE) for ts in pools[pool].values())
            if k > capacity:
                raise ValueError(
                    f"window {name!r}: {k} groups requested from the {pool} sectors but only {capacity} "
                    f"unique groups of {GROUP_SIZE} exist ({sorted(pools[pool]) or 'no eligible sector'}); "
                    "lower n or change affected_sectors/affected_share"
                )

        rng = np.random.default_rng(_window_seed(seed, name))
        groups = _sample_groups(rng, pools, counts, name)
        log.info(
            "window %s: universe %d, excluded %d, eligible %d in %d sectors; %d instances (%d affected)",
            name, len(universe), len(universe) - len(eligible), len(eligible), len(by_sector), len(groups), counts["affected"],
        )
        first_iso, last_iso = first_day.date().isoformat(), last_day.date().isoformat()
        for i, (pool, sector, group) in enumerate(groups):
            shown = [group[int(j)] for j in rng.permutation(len(group))]
            returns = {t: float(summary.at[t, "total_return"]) for t in group}
            ranking = sorted(group, key=lambda t: (-returns[t], t))
            inputs = {
                "sector": sector,
                "start_date": start.date().isoformat(),
                "end_date": end.date().isoformat(),
                "companies": [{"ticker": t, "name": _str_or_none(sec.at[t, "name"])} for t in shown],
            }
            label = {"ranking": ranking, "returns": returns, "first_day": first_iso, "last_day": last_iso}
            provenance = {
                "window": name,
                "pool": pool,
                "seed": int(seed),
                "sector_rule": {t: str(sec.at[t, "sector_rule"]) for t in group},
                "sector_as_of": {t: pd.Timestamp(sec.at[t, "sector_as_of"]).date().isoformat() for t in group},
                "universe_size": len(universe),
            }
            instance_rows.append(
                {
                    "instance_id": f"{TASK}-{w['split']}-{start.date().isoformat()}-{i:04d}",
                    "task": TASK,
                    "split": w["split"],
                    "cutoff_date": cutoff.date().isoformat(),
                    "inputs": json.dumps(inputs, ensure_ascii=False),
                    "label": json.dumps(label, ensure_ascii=False),
                    "provenance": json.dumps(provenance, ensure_ascii=False, sort_keys=True),
                }
            )

    instances = pd.DataFrame(instance_rows, columns=INSTANCE_COLUMNS)
    for c in INSTANCE_COLUMNS:
        instances[c] = instances[c].astype("str")
    dup = instances["instance_id"][instances["instance_id"].duplicated()].tolist()
    if dup:
        raise ValueError(f"duplicate instance ids {dup[:3]}: two windows with the same split and start date")
    exclusions = pd.DataFrame(exclusion_rows, columns=EXCLUSION_COLUMNS).astype("str")
    return instances, exclusions


def _str_or_none(value: Any) -> str | None:
    return None if is_null(value) else str(value)
