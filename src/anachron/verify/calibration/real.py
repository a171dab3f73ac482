"""Real dated facts planted in the calibration, re-worded by rule (docs/verification.md#calibration).

The template families of each task's planter write facts in a handful of sentence shapes the
verifier was written against. :class:`RealFamilies` plants facts whose wording is not the
project's:

* ``news``: a real headline of the news snapshot (``data/raw/news/data.parquet``: published_at,
  title, source, ticker), true as of the day it was published: published after the
  instance's cutoff it is a leak (``post_cutoff``), on or before it clean (``pre_cutoff``).
  On stock instances half of the draws take a headline naming one of the instance's companies
  when one exists in the window.
* ``edgar_filed``: a company figure as the filing reports it (``data/raw/edgar/data.parquet``):
  the filing's own label of the concept, the value, the period ("three months ended ...",
  "as of ..."), the form, and the day it was first filed (:func:`edgar_as_filed`).

Each fact's public date is then written by the rules of :mod:`anachron.verify.calibration.reword`
(ISO, "Jan. 28, 2020", "1/28/20", "28/01/2020", "1Q20", "Jan-2020", "January 2020", or not at
all) at the start, the end or in parentheses, and the declared ``source_date`` is honest, missing
or falsely early. Style: ``family:wording:format:declared=mode``.

As for the template families, the truth of a leak must live where a verifier can look: the
text, an honest declared date, or grounding data. EDGAR figures are in the grounded layer's
table; news headlines are in the dated corpus only, so a news leak is planted with no date in
the text and a missing or false declared date only when the calibrated verifier reads the
corpus (:attr:`~anachron.verify.calibration.planting.Planter.corpus_dated`).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import numpy as np
import pandas as pd

from anachron.verify.calibration.planting import Plant, Planter, PlantInstance, display_name, lower_first, money_text, short_name
from anachron.verify.calibration.reword import (
    DAY_FORMATS,
    DECLARED_MODES,
    carries_truth,
    declared_for,
    pick_format,
    place_date,
    write_date,
)
from anachron.verify.layers.edgar import ANNUAL_DAYS, FAMILIES, QUARTER_DAYS

#: The families of re-worded real facts (the first part of their style).
REAL_FAMILIES = ("news", "edgar_filed")

#: Days after (leaks) and before (clean facts) an instance's cutoff that facts are drawn from;
#: a clean fact falls back to any earlier day when this window has none.
POST_WINDOW = dt.timedelta(days=540)
PRE_WINDOW = dt.timedelta(days=730)

#: How a claim attributes a headline of each snapshot source.
_SOURCE_NAMES = {"reuters": "Reuters", "wsj": "The Wall Street Journal", "cnbc": "CNBC", "guardian": "The Guardian",
                 "analyst_ratings": "Benzinga", "reddit": "Reddit"}
#: A headline that names a time of its own (a year, a month, a quarter, a numeric date, '19)
#: is not planted: its date would compete with the one the planting writes.
_OWN_TIME = re.compile(
    r"\b(?:19|20)\d{2}s?\b|'\d{2}\b|\b\d{1,2}/\d{1,2}\b|\bQ[1-4]\b|\b[1-4]Q\d{2}\b|\bH[12]\b"
    r"|\b(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\b",
    re.I,
)
#: Words in a planted headline (fewer are labels, not statements).
HEADLINE_WORDS = (6, 30)


def news_headlines(news: pd.DataFrame) -> pd.DataFrame:
    """The headlines of a news snapshot usable as planted facts, sorted by day.

    Kept: statements (no question mark) of :data:`HEADLINE_WORDS` words that name no time of
    their own, published on a valid day, and unique in the snapshot (a headline repeated on
    other days, "Stocks fall at the open", has no single date).

    Returns:
        DataFrame: day (date), title, source, ticker (or None).
    """
    df = news.copy()
    df["title"] = df["title"].fillna("").astype(str).str.strip().str.rstrip(".").str.strip()
    df["day"] = pd.to_datetime(df["published_at"], errors="coerce").dt.date
    key = df["title"].str.lower()
    words = df["title"].str.split().str.len()
    keep = (
        df["day"].notna() & ~df["title"].str.contains("?", regex=False) & words.between(*HEADLINE_WORDS)
        & ~df["title"].str.contains(_OWN_TIME) & ~key.duplicated(keep=False)
    )
    ticker = df["ticker"] if "ticker" in df else pd.Series(None, index=df.index)
    out = pd.DataFrame({"day": df["day"], "title": df["title"], "source": df["source"].astype(str),
                        "ticker": ticker.where(ticker.notna(), None)})[keep]
    return out.sort_values(["day", "title"], kind="stable").reset_index(drop=True)


def _label_measure(label: str) -> str:
    """An XBRL label as a sentence names it: parentheticals dropped, lower case
    ('Net Income (Loss) Attributable to Parent' -> 'net income attributable to parent')."""
    return re.sub(r"\s+", " ", re.sub(r"\([^)]*\)", "", str(label))).strip().lower()


def edgar_as_filed(edgar: pd.DataFrame) -> pd.DataFrame:
    """Company figures as first filed, for the concepts the grounded EDGAR check reads.

    One row per (company, concept family, unit, period, value) of the EDGAR companyfacts rows
    whose concept is in :data:`anachron.verify.layers.edgar.FAMILIES`: the first filing that
    reported that value for that period under any concept of the family (one measure is tagged
    under several concepts over the years: revenue as ``Revenues`` in a 10-Q, as
    ``RevenueFromContractWithCustomer...`` in the next 10-K), with its ``form``, ``filed`` day and
    the concept's ``label``. Periods:
    quarters and fiscal years (the durations of :data:`~anachron.verify.layers.edgar.QUARTER_DAYS`,
    :data:`~anachron.verify.layers.edgar.ANNUAL_DAYS`) and balance-sheet instants; a figure filed
    on or before its own period end (cover data) is left out.

    Returns:
        DataFrame: entity_name, company (display name), family, concept, label, measure, unit, start
        (None for an instant), end, val, form, filed, period (``Q``, ``FY`` or ``instant``),
        period_first_public (the first filing of any value for that company, family and period).
    """
    cols = ["entity_name", "company", "family", "concept", "label", "measure", "unit", "start", "end", "val", "form", "filed",
            "period", "period_first_public"]
    family_of: dict[str, str] = {}
    for f in FAMILIES:
        for c in f.concepts:
            family_of.setdefault(c, f.name)
    df = edgar[edgar["concept"].isin(family_of) & edgar["end"].notna() & edgar["val"].notna()].copy()
    if df.empty:
        return pd.DataFrame(columns=cols)
    df["end"] = pd.to_datetime(df["end"]).dt.date
    df["filed"] = pd.to_datetime(df["filed"]).dt.date
    start = pd.to_datetime(df["start"], errors="coerce")
    days = (pd.to_datetime(df["end"]) - start).dt.days
    df["period"] = np.select([start.isna(), days.between(*QUARTER_DAYS), days.between(*ANNUAL_DAYS)],
                             ["instant", "Q", "FY"], default="")
    df["start"] = start.dt.date.where(start.notna(), None)
    df = df[(df["period"] != "") & (df["filed"] > df["end"])]
    df["family"] = df["concept"].map(family_of)
    df["val_key"] = df["val"].round(4)
    df["start_key"] = df["start"].astype(str)
    first = df.sort_values(["filed", "form"], kind="stable").drop_duplicates(
        ["entity_name", "family", "unit", "start_key", "end", "val_key"])
    first = first.assign(
        company=first["entity_name"].map(display_name),
        label=first["label"] if "label" in first else first["concept"],
    )
    first["measure"] = first["label"].map(_label_measure)
    first["period_first_public"] = first.groupby(["entity_name", "family", "start_key", "end"])["filed"].transform("min")
    return first[cols].sort_values(["entity_name", "family", "end", "filed"], kind="stable").reset_index(drop=True)


def _window(days: np.ndarray, cutoff: dt.date, leak: bool) -> tuple[int, int]:
    """Index range of sorted ``days`` (datetime64[D]) drawn from: (cutoff, cutoff + POST_WINDOW]
    for a leak, [cutoff - PRE_WINDOW, cutoff] (else every day on or before the cutoff) for a clean fact."""
    c = np.datetime64(cutoff, "D")
    if leak:
        return int(np.searchsorted(days, c, "right")), int(np.searchsorted(days, c + POST_WINDOW.days, "right"))
    hi = int(np.searchsorted(days, c, "right"))
    lo = int(np.searchsorted(days, c - PRE_WINDOW.days, "left"))
    return (lo, hi) if lo < hi else (0, hi)


class RealFamilies(Planter):
    """Planter families of real facts re-worded by rule: news headlines (``data["news"]``) and
    EDGAR figures as filed (``data["edgar"]``); each family exists when its table does. Only
    ``post_cutoff`` and ``pre_cutoff`` claims (a real fact is not an instance's outcome)."""

    def __init__(self, *a: Any, **k: Any):
        super().__init__(*a, **k)
        news = self.data.get("news")
        self._news = news_headlines(news) if news is not None else None
        self._news_days = np.array(self._news["day"].to_numpy(), dtype="datetime64[D]") if self._news is not None else None
        edgar = self.data.get("edgar")
        self._filed = edgar_as_filed(edgar) if edgar is not None else None
        self._related: dict[str, np.ndarray] = {}

    def real_families(self, kind):
        """``news`` and ``edgar_filed`` where their tables exist; none for ``outcome``."""
        if kind == "outcome":
            return []
        fams = []
        if self._news is not None and len(self._news):
            fams.append(self.news)
        if self._filed is not None and len(self._filed):
            fams.append(self.edgar_filed)
        return fams

    def _finish_real(self, family: str, wording: str, fmt: str, fact: str, truth: dt.date, inst: PlantInstance,
                     kind: str, *, datable: bool) -> Plant:
        """The planted claim with its declared date: honest, missing or falsely early, except that a
        leak with no date in the text gets an honest one unless its family is ``datable`` from data."""
        mode = self.pick(DECLARED_MODES)
        if kind != "pre_cutoff" and fmt == "none" and not datable:
            mode = "honest"
        return Plant(fact, declared_for(self.rng, truth, inst.cutoff, mode), f"{family}:{wording}:{fmt}:declared={mode}", truth)

    def _related_rows(self, inst: PlantInstance) -> np.ndarray:
        """Positions of the headlines naming one of the instance's companies (name or ticker)."""
        if inst.instance_id not in self._related:
            comps = inst.inputs.get("companies") or []
            names = sorted({short_name(c["name"]) for c in comps if c.get("name")} - {""})
            tickers = {str(c["ticker"]) for c in comps if c.get("ticker")}
            mask = self._news["ticker"].isin(tickers).to_numpy().copy()
            if names:
                rx = r"\b(?:" + "|".join(re.escape(n) for n in names) + r")\b"
                mask |= self._news["title"].str.contains(rx, regex=True).to_numpy()
            self._related[inst.instance_id] = np.flatnonzero(mask)
        return self._related[inst.instance_id]

    def news(self, inst: PlantInstance, kind: str) -> Plant | None:
        """A real headline published after (post_cutoff) or on or before (pre_cutoff) the cutoff."""
        leak = kind != "pre_cutoff"
        lo, hi = _window(self._news_days, inst.cutoff, leak)
        if lo >= hi:
            return None
        related = self._related_rows(inst)
        related = related[(related >= lo) & (related < hi)]
        i = self.pick(related) if len(related) and self.rng.random() < 0.5 else int(self.rng.integers(lo, hi))
        r = self._news.iloc[int(i)]
        truth = r["day"]
        source = str(r["source"])
        name = _SOURCE_NAMES.get(source, source.title())
        fmt = pick_format(self.rng, truth, inst.cutoff, leak)
        written = write_date(truth, fmt)
        if fmt == "none":
            position = self.pick(["plain", "attributed"])
            body = r["title"] if position == "plain" else f"According to {name}, {lower_first(r['title'])}"
            fact = place_date(body, "", fmt, position)
        else:
            position = self.pick(["prefix", "suffix", "paren", "attributed"])
            if position == "attributed":
                prep = "on" if fmt in DAY_FORMATS else "in"
                fact = f"{name} reported {prep} {written} that {lower_first(r['title'])}."
            else:
                fact = place_date(r["title"], written, fmt, position)
        return self._finish_real("news", f"{position}_{source}", fmt, fact, truth, inst, kind, datable=self.corpus_dated)

    def edgar_filed(self, inst: PlantInstance, kind: str) -> Plant | None:
        """A company figure as filed: first filed after (post_cutoff; a period first reported after
        the cutoff) or on or before (pre_cutoff) the cutoff."""
        ef, c = self._filed, inst.cutoff
        leak = kind != "pre_cutoff"
        if leak:
            pool = ef[(ef["period_first_public"] > c) & (ef["filed"] <= c + POST_WINDOW)]
        else:
            pool = ef[(ef["filed"] <= c) & (ef["filed"] >= c - PRE_WINDOW)]
            if pool.empty:
                pool = ef[ef["filed"] <= c]
        if pool.empty:
            return None
        r = pool.iloc[int(self.rng.integers(len(pool)))]
        fmt = pick_format(self.rng, r["filed"], c, leak)
        written = write_date(r["filed"], fmt)
        # the period end in the same style when it keeps a clean fact clean, else "Jan. 28, 2020"
        end_fmt = fmt if fmt in DAY_FORMATS and (leak or carries_truth(r["end"], fmt, c, False)) else "abbrev"
        end = write_date(r["end"], end_fmt)
        value = f"${r['val']:.2f} per share" if r["unit"] == "USD/shares" else money_text(float(r["val"]))
        who = self.pick([r["company"], str(r["entity_name"])])
        if r["period"] == "instant":
            what = f"{r['measure']} of {value} as of {end}"
        else:
            span = self.pick(["the three months", "the quarter"] if r["period"] == "Q" else ["the fiscal year", "the year"])
            what = f"{r['measure']} of {value} for {span} ended {end}"
        wording = self.pick(["filed", "prefix", "form_paren"])
        if wording == "filed":
            when = "" if fmt == "none" else (f" filed {written}" if fmt in DAY_FORMATS else f" filed in {written}")
            fact = f"{who} reported {what} in its {r['form']}{when}."
        elif wording == "prefix":
            fact = place_date(f"{who} reported {what}", written, fmt, "prefix")
        else:
            fact = place_date(f"{who}'s {r['form']} reported {what}", written, fmt, "paren")
        return self._finish_real("edgar_filed", f"{wording}_{r['period'].lower()}", fmt, fact, r["filed"], inst, kind, datable=True)
