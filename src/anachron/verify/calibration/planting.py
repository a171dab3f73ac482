"""Planting claims of known truth on real instances (the calibration's test set; docs/verification.md#calibration).

Facts come from the project's own point-in-time data, written in the wording styles models
use, and are planted on real instances with their real cutoff;
:mod:`anachron.verify.calibration.evaluate` runs the verifier over them. Three kinds of
planted claim (column ``kind``):

* ``post_cutoff`` -- a real fact first public after the instance's cutoff. ``truth_leaked`` is True.
* ``pre_cutoff`` -- a real fact public on or before the cutoff, including the tricky clean
  ones (a close on the cutoff day itself, a fiscal year already reported before the cutoff,
  the lower-court ruling in the case, the player's previous contract). ``truth_leaked`` is False.
* ``outcome`` -- a statement of the instance's own outcome (category A4 of the TimeSPEC
  taxonomy: leaked by definition). ``truth_leaked`` is True.

Each task's planter (:meth:`anachron.tasks.base.Task.planter`, a :class:`Planter` in the
task package's ``calibration`` module) owns its families of facts; the market families
shared by stock and forecast (EDGAR figures, S&P 500 index changes) live in
:mod:`anachron.verify.calibration.market`. This module holds the machinery the planters build
on: the wording helpers, the declared-date and date-style choices, :class:`Planter`;
:func:`anachron.verify.calibration.plant.plant_claims` runs a task's planter.

Each planted claim carries its truth in at least one place a verifier may look: a date in
the text, an honest declared ``source_date``, or the project's grounding data (EDGAR, index
changes, the instance's own label). A claim whose only date is a falsely early declared one
*and* whose family has no grounding table is never planted: no verifier could catch it, and
planting it would measure nothing but the planting. Declared dates vary between honest (the
true date, ISO or coarse), missing, and falsely early (a pre-cutoff date on a post-cutoff
fact, as models often write).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from anachron.words import MONTH_NAMES

KINDS = ("post_cutoff", "pre_cutoff", "outcome")
LEAK_KINDS = ("post_cutoff", "outcome")

# ---------------------------------------------------------------------------
# wording helpers

_SUFFIX = re.compile(
    r"[,\s]+(inc\.?|corp\.?|corporation|co\.?|company|ltd\.?|plc|group|holdings|incorporated|& co\.?)$", re.I
)


def long_date(d: dt.date) -> str:
    """"March 5, 2020"."""
    return f"{MONTH_NAMES[d.month - 1]} {d.day}, {d.year}"


def short_name(name: str) -> str:
    """'Exxon Mobil Corp.' -> 'Exxon Mobil'; 'Halliburton Co.' -> 'Halliburton'."""
    out = str(name).strip()
    for _ in range(3):
        new = _SUFFIX.sub("", out).strip().rstrip(",")
        if new == out or not new:
            break
        out = new
    return out


def display_name(entity_name: str) -> str:
    """A company as text would name it: the short name, title-cased when the record is in
    capitals ('NVIDIA CORP' -> 'Nvidia'; 'Apple Inc.' -> 'Apple')."""
    name = str(entity_name)
    return short_name(name).title() if name.isupper() else short_name(name)


def _quarter_start(d: dt.date) -> dt.date:
    return dt.date(d.year, 3 * ((d.month - 1) // 3) + 1, 1)


def money_text(v: float) -> str:
    """$260.2 billion / $8.5 million / $950,000."""
    a = abs(v)
    sign = "-" if v < 0 else ""
    if a >= 1e9:
        return f"{sign}${a / 1e9:.2f} billion".replace(".00 ", " ")
    if a >= 1e6:
        s = f"{a / 1e6:.2f}".rstrip("0").rstrip(".")
        return f"{sign}${s} million"
    return f"{sign}${a:,.0f}"


def money_short(v: float) -> str:
    """$8.5M / $950K style."""
    if v >= 1e6:
        return "$" + f"{v / 1e6:.2f}".rstrip("0").rstrip(".") + "M"
    return "$" + f"{v / 1e3:.0f}K"


#: Date styles in the text; "none" leaves the date to the declared source_date or to grounding.
DATE_STYLES = ("on_day", "iso", "as_of", "month", "quarter", "none")


def _date_phrase(d: dt.date, style: str, cutoff: dt.date, kind: str) -> tuple[str, str] | None:
    """(prefix, suffix) placing ``d`` in the text in ``style``; None when the style cannot
    carry the truth (a month or quarter that starts on or before the cutoff, for a leak)."""
    if style == "on_day":
        return f"On {long_date(d)}, ", ""
    if style == "iso":
        return "", f" on {d.isoformat()}"
    if style == "as_of":
        return f"As of {d.isoformat()}, ", ""
    if style == "month":
        if kind != "pre_cutoff" and dt.date(d.year, d.month, 1) <= cutoff:
            return None
        return "", f" in {MONTH_NAMES[d.month - 1]} {d.year}"
    if style == "quarter":
        if kind != "pre_cutoff" and _quarter_start(d) <= cutoff:
            return None
        return "", f" in Q{(d.month - 1) // 3 + 1} {d.year}"
    return "", ""


_COMMON_FIRST = {"shares", "the", "it", "a", "an", "in", "full-year", "over", "by", "before"}


def lower_first(text: str) -> str:
    """Lower-case the first word when it is a common word (not a name or ticker)."""
    first = text.split(" ", 1)[0]
    return text[0].lower() + text[1:] if first.lower() in _COMMON_FIRST else text


def join_fact(prefix: str, body: str, suffix: str) -> str:
    """One planted sentence: ``prefix`` + ``body`` (first word lower-cased after a prefix) + ``suffix`` + "."."""
    body = body.strip()
    if prefix:
        body = prefix + lower_first(body)
    text = body + suffix
    return text if text.endswith(".") else text + "."


# ---------------------------------------------------------------------------
# instances


@dataclass
class PlantInstance:
    """One eval or control instance to plant on (``inputs`` and ``label`` decoded)."""

    instance_id: str
    split: str
    cutoff: dt.date
    inputs: dict[str, Any]
    label: dict[str, Any]


def planting_instances(instances: pd.DataFrame) -> list[PlantInstance]:
    """The eval and control rows of a dataset, sorted by instance id."""
    df = instances[instances["split"].isin(["eval", "control"])].sort_values("instance_id")
    out = []
    for r in df.itertuples(index=False):
        inputs = json.loads(r.inputs) if isinstance(r.inputs, str) else dict(r.inputs)
        label = json.loads(r.label) if isinstance(r.label, str) else dict(r.label)
        out.append(PlantInstance(r.instance_id, r.split, dt.date.fromisoformat(str(r.cutoff_date)[:10]), inputs, label))
    return out


# ---------------------------------------------------------------------------
# planting machinery


@dataclass
class Plant:
    """One planted claim: its text, the declared date (or None), its style label, its true date."""

    fact: str
    declared: str | None
    style: str
    truth_date: dt.date | None


class Planter:
    """Base of a task's planter (:meth:`anachron.tasks.base.Task.planter`): ``families(kind)`` ->
    list of callables ``(inst, kind) -> Plant | None``, one per family of facts."""

    #: families whose facts a grounding table can date even with no date in the text
    grounded_families: set[str] = set()
    #: whether the verifier under calibration reads the dated corpus, so that a real news fact
    #: may be planted with no date a rule can read (set by :func:`~anachron.verify.calibration.plant.plant_claims`)
    corpus_dated: bool = False

    def __init__(self, insts: list[PlantInstance], data: Mapping[str, pd.DataFrame], rng: np.random.Generator, frames: list[str]):
        self.insts = insts
        self.data = data
        self.rng = rng
        self.frames = frames

    def families(self, kind: str) -> list[Callable[[PlantInstance, str], Plant | None]]:
        """The families planting ``kind`` (``post_cutoff``, ``pre_cutoff`` or ``outcome``) claims."""
        raise NotImplementedError

    def real_families(self, kind: str) -> list[Callable[[PlantInstance, str], Plant | None]]:
        """The families planting re-worded *real* facts of ``kind`` (news headlines, EDGAR figures as
        filed: :mod:`anachron.verify.calibration.real`), planted as a block of their own after the
        template families. Default: none."""
        return []

    # -- shared choices ---------------------------------------------------------

    def pick(self, seq: Sequence[Any]) -> Any:
        """One element of ``seq``, drawn with the planting's generator."""
        return seq[int(self.rng.integers(len(seq)))]

    def declared(self, truth: dt.date | None, cutoff: dt.date, kind: str, *, text_dated: bool, family: str) -> tuple[str | None, str]:
        """(declared_raw, label): honest, honest coarse, missing, or falsely early."""
        if kind == "pre_cutoff":
            mode = self.pick(["honest", "honest", "month", "missing"])
        else:
            mode = self.pick(["honest", "missing", "false_early"])
            if not text_dated and family not in self.grounded_families and kind != "outcome":
                mode = "honest"  # the truth must live somewhere a verifier can look
        if mode == "honest" and truth is not None:
            return truth.isoformat(), "declared=honest"
        if mode == "month" and truth is not None:
            return f"{truth.year}-{truth.month:02d}", "declared=month"
        if mode == "false_early":
            early = cutoff - dt.timedelta(days=int(self.rng.integers(1, 120)))
            return early.isoformat(), "declared=false_early"
        return None, "declared=missing"

    def date_style(self, truth: dt.date, cutoff: dt.date, kind: str, allowed: Sequence[str] = DATE_STYLES) -> tuple[str, str, str]:
        """(style, prefix, suffix) for the date in the text; falls back to on_day."""
        style = self.pick(list(allowed))
        ph = _date_phrase(truth, style, cutoff, kind)
        if ph is None:
            style, ph = "on_day", _date_phrase(truth, "on_day", cutoff, kind)
        return style, ph[0], ph[1]

    def finish(self, family: str, wording: str, body: str, truth: dt.date | None, inst: PlantInstance, kind: str,
               *, allowed: Sequence[str] = DATE_STYLES, date_in_body: bool = False) -> Plant:
        """Add a date phrase and a declared date to ``body`` and label the style."""
        if date_in_body or truth is None:
            dstyle, prefix, suffix = ("in_body" if date_in_body else "none"), "", ""
        else:
            dstyle, prefix, suffix = self.date_style(truth, inst.cutoff, kind, allowed)
        text_dated = dstyle != "none"
        declared, dlabel = self.declared(truth, inst.cutoff, kind, text_dated=text_dated, family=family)
        fact = join_fact(prefix, body, suffix)
        frame = ""
        if self.frames and not prefix and self.rng.random() < 0.2:
            opener = self.pick(self.frames)
            fact = f"{opener}, {lower_first(fact)}"
            frame = ":frame"
        return Plant(fact, declared, f"{family}:{wording}:{dstyle}:{dlabel}{frame}", truth)


# ---------------------------------------------------------------------------
# planting

_OPENER = re.compile(r"^((?:According to|Per|As reported by|Reports from|Data from)\s[^,.;:\d]{2,40}),\s")


def completion_frames(completions: pd.DataFrame | None) -> list[str]:
    """Sentence openers ("According to Reuters") that real evidence facts start with.

    Args:
        completions: a run table with an ``evidence`` JSON column (list of
            ``{"id","fact","source_date"}``), or None.

    Returns:
        Distinct openers, sorted (empty when there are none).
    """
    if completions is None or "evidence" not in completions:
        return []
    out: set[str] = set()
    for ev in completions["evidence"].dropna():
        try:
            items = json.loads(ev) if isinstance(ev, str) else list(ev)
        except (TypeError, ValueError):
            continue
        for item in items:
            m = _OPENER.match(str(item.get("fact", "")) if isinstance(item, dict) else "")
            if m:
                out.add(m[1])
    return sorted(out)
