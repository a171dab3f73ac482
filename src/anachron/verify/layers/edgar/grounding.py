"""The EDGAR grounded check: :class:`EdgarGrounding` dates a company-figure claim by the filing that
first reported it, and :func:`load_edgar_grounding` builds it from the facts parquet
(docs/verification.md#grounded; how a claim is read: :mod:`anachron.verify.layers.edgar`).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Mapping

import numpy as np
import pandas as pd

from anachron.verify.layers.edgar.facts import EdgarFacts, PeriodCandidate
from anachron.verify.layers.edgar.families import A_SHARE, EXPECTATION, FAMILIES, FORWARD, REPORT_WORDS, Family
from anachron.verify.layers.edgar.periods import find_fiscal_periods
from anachron.verify.layers.figures import StatedValue, parse_values
from anachron.verify.layers.grounded import GroundedVerdict, instance_cutoff, names_date_after

#: A value reported only before the cutoff supports a pre-cutoff date only when the table has
#: the company's filings for at least this many days after the cutoff.
SUPPORT_DAYS_AFTER = 120
#: A value matched in any period (no period named, or not the one named) must be stated this
#: exactly (half a unit of its last digit relative to it): "$91.8 billion" (0.05 %) or "$69
#: million" (0.7 %) is, "$16 million" (3 %) or "$5 billion" (10 %) is not; a per-share amount to
#: the cent always is.
VALUE_REL_PRECISION = 0.01


def _fmt_money(v: float, per_share: bool) -> str:
    if per_share:
        return f"${v:,.2f}"
    a = abs(v)
    sign = "-" if v < 0 else ""
    for div, suf in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if a >= div:
            return f"{sign}${a / div:,.3f}{suf}"
    return f"{sign}${a:,.0f}"


class EdgarGrounding(EdgarFacts):
    """Date company financial figures by the EDGAR filing that first reported them.

    Args:
        facts: the EDGAR point-in-time facts table (``anachron.sources.edgar`` output; at least
            ``cik, entity_name, concept, unit, val, start, end, fy, form, filed, accn``;
            ``value_changed`` and ``restates`` are used for reasons when present).
        aliases: extra names or tickers of companies: alias -> the company's key word (the first
            distinctive word of its ``entity_name``, lower case), its full entity name, or its CIK.
            Upper-case aliases match as case-sensitive whole words, others case-insensitively.

    ``check(fact, instance)`` also uses ``instance["tickers"]`` / ``instance["names"]`` when
    given: a ticker whose name starts with a company's key word refers to that company.

    Raises:
        ValueError: ``facts`` lacks one of the columns above.

    The index it reads (companies, fiscal calendars, the rows of a family and period) is
    :class:`~anachron.verify.layers.edgar.facts.EdgarFacts`.
    """

    # -- the check ------------------------------------------------------------

    def check(self, fact: str, instance: dict[str, Any] | None = None) -> GroundedVerdict | None:
        """Date a claim about a company's reported figure, or None when it states none.

        Args:
            fact: claim text.
            instance: optional task context (``tickers``, ``names``) for company aliases.

        Returns:
            A :class:`GroundedVerdict` (``outcome=False``; category A3 for a claim about a
            report or filing, else A2) dated at the matching filing's ``filed`` date.
        """
        text = EXPECTATION.sub(lambda m: " " * len(m[0]), fact)
        if FORWARD.search(text):
            return None
        ciks = self.companies(fact, instance)
        if not ciks:
            return None
        families: list[Family] = []
        masked = text
        for fam in FAMILIES:
            hits = list(fam.pattern.finditer(masked))
            if hits:
                families.append(fam)
                for m in hits:
                    masked = masked[: m.start()] + " " * (m.end() - m.start()) + masked[m.end() :]
        values = parse_values(text)
        per_share = any(A_SHARE.match(text, v.start + len(v.text)) for v in values if v.per_share)
        if per_share and FAMILIES[0] not in families and any(f.name == "net income" for f in families):
            families.insert(0, FAMILIES[0])  # "earned $2.10 a share", "a profit of $2.10 per share": EPS
        if not families:
            return None
        refs = find_fiscal_periods(text)
        cutoff = instance_cutoff(instance)
        if not refs and (cutoff is None or not values):
            return None
        dated: list[tuple[dt.date, str]] = []  # a date for every value matched
        unmatched: list[tuple[dt.date, str]] = []  # a named period's first report, when no value matched
        for cik in ciks:
            for fam in families:
                vals = [v for v in values if v.per_share == fam.per_share]
                # each value dates to the named period it matches; matching several, to the
                # earliest of their filings (a value that fits an earlier period is no evidence
                # of a later one)
                best: list[tuple[dt.date, str] | None] = [None] * len(vals)
                for ref in refs:
                    first_with_rows: tuple[dt.date, str] | None = None
                    for cand in self._candidates(cik, ref):
                        rows = self._rows_for(cik, fam, cand)
                        if rows.empty:
                            continue
                        hits = [(i, self._matches(rows, [v])) for i, v in enumerate(vals)]
                        hits = [(i, h) for i, h in hits if not h.empty]
                        if hits:
                            for i, h in hits:
                                d = self._describe(cik, fam, cand, h, [vals[i]], rows, True)
                                if best[i] is None or d[0] < best[i][0]:
                                    best[i] = d
                            first_with_rows = None
                            break
                        if first_with_rows is None:
                            first_with_rows = self._describe(cik, fam, cand, rows, vals, rows, False)
                    if first_with_rows is not None:
                        unmatched.append(first_with_rows)
                dated += [d for d in best if d is not None]
                if cutoff is None:
                    continue
                for v, done in zip(vals, (d is not None for d in best)):
                    exact = v.rel_precision <= VALUE_REL_PRECISION or (v.per_share and v.half_unit <= 0.005)
                    if done or v.hedged or not exact:
                        continue
                    ev = self._value_evidence(cik, fam, v, cutoff)
                    if ev is None:
                        continue
                    after, day, reason = ev
                    # a figure known before the cutoff supports a pre-cutoff date only when the claim
                    # names no period of its own (a named period's own filing dates it) nor a later
                    # date, and the table has the company's filings of the months after the cutoff
                    covered = (self._last_filed.get(cik, cutoff) - cutoff).days >= SUPPORT_DAYS_AFTER
                    if after or (covered and not refs and not names_date_after(text, cutoff)):
                        dated.append((day, reason))
        dated = dated or unmatched
        if not dated:
            return None
        day, reason = max(dated, key=lambda t: t[0])
        category = "A3" if REPORT_WORDS.search(fact) else "A2"
        return GroundedVerdict(day, reason, outcome=False, category=category)

    def _value_evidence(self, cik: int, fam: Family, v: StatedValue, cutoff: dt.date) -> tuple[bool, dt.date, str] | None:
        """Date a stated value by the company's figures of ``fam`` that match it in any period.

        Each matching figure (concept, period) first appeared in its earliest filing with that
        value. Returns ``(True, first filing, reason)`` when every matching figure first appeared
        after ``cutoff`` (the value did not exist before it), ``(False, first filing, reason)``
        when every one appeared on or before it, and None when none matches or they fall on both
        sides (the value is then no evidence either way).
        """
        index = self._values.get((cik, fam.name))
        if index is None:
            return None
        vals, rows = index
        tol = v.half_unit + 1e-9 * max(1.0, v.value)
        lo = int(np.searchsorted(vals, v.value - tol, side="left"))
        hi = int(np.searchsorted(vals, v.value + tol, side="right"))
        if lo >= hi:
            return None
        hit = rows.iloc[lo:hi].sort_values(["filed_d", "accn"], kind="stable")
        first = hit.drop_duplicates(["concept", "start_d", "end_date"])
        before = first[first["filed_date"] <= cutoff]
        after = first[first["filed_date"] > cutoff]
        if not before.empty and not after.empty:
            return None
        r = first.iloc[0]
        who = self.names.get(cik, str(cik))
        period = f"the period ended {r['end_date']}" if pd.isna(r["start_d"]) else f"{r['start_d'].date()} to {r['end_date']}"
        where = f"{r['concept']} {_fmt_money(float(r['val']), fam.per_share)} for {period}, first reported in {r['form']} {r['accn']} filed {r['filed_date']}"
        if before.empty:
            return True, r["filed_date"], (
                f"EDGAR: {who} {fam.name}: stated {v.text} matches only figures first reported after the cutoff "
                f"({len(after)}): {where}"
            )
        return False, r["filed_date"], (
            f"EDGAR: {who} {fam.name}: stated {v.text} matches only figures reported before the cutoff "
            f"({len(before)}): {where}"
        )

    def _describe(
        self,
        cik: int,
        fam: Family,
        cand: PeriodCandidate,
        hit: pd.DataFrame,
        vals: list[StatedValue],
        rows: pd.DataFrame,
        matched: bool,
    ) -> tuple[dt.date, str]:
        first = hit.iloc[0]
        who = self.names.get(cik, str(cik))
        filing = f"{first['form']} {first['accn']} filed {first['filed_date']}"
        reported = _fmt_money(float(first["val"]), fam.per_share)
        if matched:
            stated = ", ".join(v.text for v in vals)
            reason = (
                f"EDGAR: {who} {fam.name} for {cand.label}: stated {stated} matches {first['concept']} "
                f"{reported}, first reported in {filing}"
            )
            if bool(first.get("derived", False)):
                reason += " (derived: the 10-K's fiscal year minus the nine months to date)"
            if bool(first.get("value_changed", False)) and isinstance(first.get("restates"), str):
                orig = rows[
                    (rows["accn"] == first["restates"])
                    & (rows["concept"] == first["concept"])
                    & (rows["end_date"] == first["end_date"])
                ]
                was = f" (was {_fmt_money(float(orig.iloc[0]['val']), fam.per_share)} in {orig.iloc[0]['form']} filed {orig.iloc[0]['filed_date']})" if not orig.empty else ""
                reason += f"; a restated value replacing {first['restates']}{was}"
        else:
            why = (
                f"stated {', '.join(v.text for v in vals)} does not match the reported {reported}"
                if vals
                else "no figure stated to compare"
            )
            reason = (
                f"EDGAR: {who} {fam.name} for {cand.label} first reported in {filing}; {why}"
            )
        return first["filed_date"], reason


def load_edgar_grounding(path: str, aliases: Mapping[str, str | int] | None = None) -> EdgarGrounding:
    """Build :class:`EdgarGrounding` from the facts parquet (only the columns it needs)."""
    import pyarrow.parquet as pq

    cols = ["cik", "entity_name", "concept", "unit", "val", "start", "end", "fy", "form", "filed", "accn",
            "value_changed", "restates"]
    if "derived" in pq.read_schema(path).names:  # tables built before derived fourth quarters lack it
        cols.append("derived")
    return EdgarGrounding(pd.read_parquet(path, columns=cols), aliases)
