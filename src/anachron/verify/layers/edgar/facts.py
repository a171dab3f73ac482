"""The EDGAR point-in-time facts table indexed for reading claims (:class:`EdgarFacts`).

Per company: its key word and aliases, its fiscal calendar (fiscal year and quarter ends from its
10-Ks and 10-Qs), its rows of each concept family and those figures by absolute value; for a claim,
the companies it names, the periods it may mean, the rows of a family in a period and the rows whose
value matches a stated one (docs/verification.md#grounded; :mod:`anachron.verify.layers.edgar`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from anachron.names import has_symbol, has_word
from anachron.verify.layers.edgar.families import FAMILIES, Family
from anachron.verify.layers.edgar.periods import PeriodRef
from anachron.verify.layers.figures import StatedValue
from anachron.frames import require_columns

#: Duration classes of EDGAR rows, in days (inclusive).
ANNUAL_DAYS = (350, 380)
QUARTER_DAYS = (80, 100)
#: Allowed difference between a period end found and a row's ``end``.
END_SLACK = dt.timedelta(days=3)
#: Relative tolerance floor for value matches.
REL_TOL = 0.005

#: Default aliases (alias -> the company's key word or CIK); applied only to companies in the table.
DEFAULT_ALIASES: dict[str, str | int] = {
    "AAPL": "apple",
    "NVDA": "nvidia",
    "TSLA": "tesla",
    "GOOGL": "alphabet",
    "GOOG": "alphabet",
    "Google": "alphabet",
}


def _ended(kind: str, end: dt.date) -> str:
    """ "quarter ended 2019-12-28", or "as of 2019-12-28" for a balance-sheet date."""
    return f"as of {end}" if kind == "instant" else f"{kind} ended {end}"


def _first_word(name: str) -> str:
    words = re.findall(r"[A-Za-z][A-Za-z&'.-]*", name or "")
    skip = {"the", "inc", "inc.", "corp", "corp."}
    words = [w.rstrip(".,") for w in words if w.lower() not in skip]
    return words[0].lower() if words else ""


@dataclass(frozen=True)
class PeriodCandidate:
    """A period a claim may mean: its kind, its end and the label used in reasons."""

    kind: str  # annual | quarter
    end: dt.date
    label: str


class EdgarFacts:
    """The EDGAR facts of a table indexed by company, fiscal period and concept family.

    Args:
        facts: the EDGAR point-in-time facts table (``anachron.sources.edgar`` output; at least
            ``cik, entity_name, concept, unit, val, start, end, fy, form, filed, accn``).
        aliases: extra names or tickers of companies: alias -> the company's key word (the first
            distinctive word of its ``entity_name``, lower case), its full entity name, or its CIK.

    Raises:
        ValueError: ``facts`` lacks one of the columns above.

    :class:`~anachron.verify.layers.edgar.grounding.EdgarGrounding` dates claims with it.
    """

    def __init__(self, facts: pd.DataFrame, aliases: Mapping[str, str | int] | None = None):
        concepts = {c for f in FAMILIES for c in f.concepts}
        need = ["cik", "entity_name", "concept", "unit", "val", "start", "end", "fy", "form", "filed", "accn"]
        require_columns(facts, need, "EDGAR facts")
        df = facts.copy()
        df["end_d"] = pd.to_datetime(df["end"], errors="coerce")
        df["start_d"] = pd.to_datetime(df["start"], errors="coerce")
        df["filed_d"] = pd.to_datetime(df["filed"], errors="coerce")
        df = df.dropna(subset=["end_d", "filed_d", "val"])
        df["days"] = (df["end_d"] - df["start_d"]).dt.days
        self.names: dict[int, str] = {}
        self._keys: dict[str, int] = {}
        self._fye: dict[int, dict[int, dt.date]] = {}
        self._quarter_ends: dict[int, list[dt.date]] = {}
        self._rows: dict[int, pd.DataFrame] = {}
        self._last_filed: dict[int, dt.date] = {}
        #: (cik, family) -> (absolute values ascending, the rows in that order)
        self._values: dict[tuple[int, str], tuple[np.ndarray, pd.DataFrame]] = {}
        #: (cik, family) -> the company's rows of the family's concepts in its unit, in ``_rows`` order
        self._family_rows: dict[tuple[int, str], pd.DataFrame] = {}
        for cik, g in df.groupby("cik", sort=True):
            cik = int(cik)
            name = str(g["entity_name"].iloc[-1])
            self.names[cik] = name
            key = _first_word(name)
            if key:
                self._keys[key] = cik
            self._fye[cik] = self._fiscal_year_ends(g)
            q = g[g["days"].between(*QUARTER_DAYS)]
            self._quarter_ends[cik] = sorted({d.date() for d in q["end_d"]})
            rows = g[g["concept"].isin(concepts)].copy()
            rows["end_date"] = rows["end_d"].dt.date
            rows["filed_date"] = rows["filed_d"].dt.date
            self._rows[cik] = rows.sort_values(["filed_d", "accn"], kind="stable")
            self._last_filed[cik] = g["filed_d"].max().date()
        self._index_families()
        self._aliases: dict[str, int] = {}
        for alias, target in {**DEFAULT_ALIASES, **dict(aliases or {})}.items():
            cik = self._resolve(target)
            if cik is not None:
                self._aliases[alias] = cik

    # -- building -------------------------------------------------------------

    def _index_families(self) -> None:
        """Per company and family: its rows of the family's concepts in the family's unit
        (``_family_rows``, which :meth:`_rows_for` narrows to a period), and those figures indexed
        by absolute value (``_values``: every period and duration; a row filed on or before its own
        period end, cover data, is left out). One pass per family over every company's rows, so
        the cost does not grow with a fixed price per company."""
        if not self._rows:
            return
        rows = pd.concat(list(self._rows.values()))
        unit = rows["unit"].astype(str).str.upper()
        after = rows["filed_d"] > rows["end_d"]
        no_start = rows["start_d"].isna()
        for fam in FAMILIES:
            in_family = rows["concept"].isin(fam.concepts) & (unit == ("USD/SHARES" if fam.per_share else "USD"))
            for cik, sel in rows[in_family].groupby("cik", sort=False):
                self._family_rows[(int(cik), fam.name)] = sel
            indexed = rows[in_family & after & (no_start if fam.instant else True)]
            # by |val|, stably (ties keep filing order); grouping keeps that order within each company
            indexed = indexed.iloc[np.argsort(indexed["val"].abs().to_numpy(dtype=float), kind="stable")]
            for cik, sel in indexed.groupby("cik", sort=False):
                self._values[(int(cik), fam.name)] = (sel["val"].abs().to_numpy(dtype=float), sel)

    @staticmethod
    def _fiscal_year_ends(g: pd.DataFrame) -> dict[int, dt.date]:
        """Fiscal year label -> fiscal year end, from the 10-K / 10-K/A accessions."""
        annual = g[g["form"].astype(str).str.startswith("10-K") & g["days"].between(*ANNUAL_DAYS)]
        if annual.empty:
            return {}
        per_accn = annual.groupby("accn").agg(end=("end_d", "max"), fy=("fy", "first"))
        ends = [e.date() for e in per_accn["end"]]
        # a year ending in the first week of January is the previous year's (52/53-week calendars)
        norm = [e.year - 1 if (e.month == 1 and e.day <= 7) else e.year for e in ends]
        offsets = [int(fy) - n for fy, n in zip(per_accn["fy"], norm) if pd.notna(fy)]
        offset = Counter(offsets).most_common(1)[0][0] if offsets else 0
        votes: dict[int, Counter[dt.date]] = {}
        for e, n in zip(ends, norm):
            votes.setdefault(n + offset, Counter())[e] += 1
        return {label: max(c.items(), key=lambda kv: (kv[1], kv[0]))[0] for label, c in votes.items()}

    def _resolve(self, target: str | int) -> int | None:
        if isinstance(target, (int, np.integer)):
            return int(target) if int(target) in self.names else None
        t = str(target).strip().lower()
        if t in self._keys:
            return self._keys[t]
        for cik, name in self.names.items():
            if name.lower() == t or _first_word(name) == _first_word(t):
                return cik
        return None

    def fiscal_year_end(self, cik: int, year: int) -> dt.date | None:
        """End of fiscal ``year`` of company ``cik`` (from its 10-Ks; extrapolated by 52 weeks
        from a neighbouring year when that year's 10-K is not in the table)."""
        fye = self._fye.get(cik, {})
        if year in fye:
            return fye[year]
        if year - 1 in fye:
            return fye[year - 1] + dt.timedelta(days=364)
        if year + 1 in fye:
            return fye[year + 1] - dt.timedelta(days=364)
        return None

    def fiscal_quarter_end(self, cik: int, year: int, quarter: int) -> dt.date | None:
        """End of fiscal quarter ``quarter`` of fiscal ``year`` (a reported quarterly period end)."""
        this, prev = self.fiscal_year_end(cik, year), self.fiscal_year_end(cik, year - 1)
        if this is None:
            return None
        prev = prev or this - dt.timedelta(days=364)
        best: tuple[int, dt.date] | None = None
        for e in self._quarter_ends.get(cik, []):
            if prev < e <= this + END_SLACK and max(1, min(4, round((e - prev).days / 91.3))) == quarter:
                days_off = abs((e - prev).days - 91.3 * quarter)
                if best is None or days_off < best[0]:
                    best = (int(days_off), e)
        return best[1] if best else None

    # -- reading a claim ------------------------------------------------------

    def companies(self, fact: str, instance: Mapping[str, Any] | None = None) -> list[int]:
        """CIKs of the companies ``fact`` names (key word, alias, or instance ticker)."""
        found: list[int] = []

        def hit(alias: str) -> bool:
            if alias.isupper() and len(alias) >= 2:
                return has_symbol(fact, alias)
            return has_word(fact, alias, ignore_case=True)

        aliases = dict(self._aliases)
        inst = instance or {}
        for t, n in zip(inst.get("tickers") or [], inst.get("names") or []):
            cik = self._keys.get(_first_word(str(n)))
            if cik is not None and t:
                aliases.setdefault(str(t), cik)
        # the keys are lower-case words: an ASCII key absent from an ASCII fact's lower case cannot hit
        low = fact.lower() if fact.isascii() else None
        for key, cik in self._keys.items():
            if low is not None and key.isascii() and key.lower() not in low:
                continue
            if hit(key) and cik not in found:
                found.append(cik)
        for alias, cik in aliases.items():
            if cik not in found and hit(alias):
                found.append(cik)
        return found

    def _candidates(self, cik: int, ref: PeriodRef) -> list[PeriodCandidate]:
        out: list[PeriodCandidate] = []
        if ref.end is not None and ref.month:
            # a period ending in a month: the company's reported period ends in that month (or,
            # on a 52/53-week calendar, in the first week of the next)
            known = sorted(set(self._fye.get(cik, {}).values())) if ref.kind == "annual" else self._quarter_ends.get(cik, [])
            lo, hi = ref.end.replace(day=1), ref.end + dt.timedelta(days=7)
            ends = [e for e in known if lo <= e <= hi] or [ref.end]
            return [PeriodCandidate(ref.kind, e, f"{_ended(ref.kind, e)} ({ref.text})") for e in ends]
        if ref.end is not None:
            return [PeriodCandidate(ref.kind, ref.end, _ended(ref.kind, ref.end))]
        if ref.kind == "annual":
            e = self.fiscal_year_end(cik, ref.year)
            if e:
                out.append(PeriodCandidate("annual", e, f"fiscal {ref.year} (ends {e})"))
            if ref.fiscal is None:
                cal = self._overlap_end(cik, dt.date(ref.year, 1, 1), dt.date(ref.year, 12, 31), "annual")
                if cal and all(abs(c.end - cal) > END_SLACK for c in out):
                    out.append(PeriodCandidate("annual", cal, f"the fiscal year ending {cal} (most of calendar {ref.year})"))
        else:
            q = ref.quarter or 1
            e = self.fiscal_quarter_end(cik, ref.year, q)
            if e:
                out.append(PeriodCandidate("quarter", e, f"fiscal Q{q} {ref.year} (ends {e})"))
            if ref.fiscal is None:
                start = dt.date(ref.year, 3 * q - 2, 1)
                end = (pd.Timestamp(dt.date(ref.year, 3 * q, 1)) + pd.offsets.MonthEnd(0)).date()
                cal = self._overlap_end(cik, start, end, "quarter")
                if cal and all(abs(c.end - cal) > END_SLACK for c in out):
                    out.append(PeriodCandidate("quarter", cal, f"the quarter ending {cal} (most of calendar Q{q} {ref.year})"))
        return out

    def _overlap_end(self, cik: int, start: dt.date, end: dt.date, kind: str) -> dt.date | None:
        """End of the company's reported period of ``kind`` that overlaps [start, end] most (>= half)."""
        if kind == "annual":
            ends = sorted(set(self._fye.get(cik, {}).values()))
            length = 364
        else:
            ends, length = self._quarter_ends.get(cik, []), 91
        best: tuple[int, dt.date] | None = None
        for e in ends:
            s = e - dt.timedelta(days=length)
            overlap = (min(e, end) - max(s, start)).days
            if overlap >= length // 2 and (best is None or overlap > best[0]):
                best = (overlap, e)
        return best[1] if best else None

    def _rows_for(self, cik: int, fam: Family, cand: PeriodCandidate) -> pd.DataFrame:
        rows = self._rows.get(cik)
        if rows is None or rows.empty:
            return pd.DataFrame()
        sel = self._family_rows.get((cik, fam.name), rows.iloc[0:0])
        lo, hi = cand.end - END_SLACK, cand.end + END_SLACK
        sel = sel[(sel["end_date"] >= lo) & (sel["end_date"] <= hi)]
        if fam.instant:
            return sel[sel["start_d"].isna()]
        if cand.kind == "instant":
            return sel.iloc[0:0]  # a balance-sheet date names no period of a flow
        bounds = ANNUAL_DAYS if cand.kind == "annual" else QUARTER_DAYS
        return sel[sel["days"].between(*bounds)]

    @staticmethod
    def _matches(rows: pd.DataFrame, values: list[StatedValue]) -> pd.DataFrame:
        """Rows whose |val| matches a stated value: within half a unit of its last digit if any
        row does (a precise statement tells restated from original values), else within
        ``max(REL_TOL * |value|, half unit)``."""
        if rows.empty or not values:
            return rows.iloc[0:0]
        v = rows["val"].abs().to_numpy(dtype=float)
        tight = np.zeros(len(rows), dtype=bool)
        loose = np.zeros(len(rows), dtype=bool)
        for s in values:
            eps = 1e-9 * max(1.0, abs(s.value))
            tight |= np.abs(v - s.value) <= s.half_unit + eps
            loose |= np.abs(v - s.value) <= max(REL_TOL * abs(s.value), s.half_unit) + eps
        return rows[tight] if tight.any() else rows[loose]
