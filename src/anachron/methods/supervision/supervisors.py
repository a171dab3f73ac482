"""The supervisors of the supervised methods: claim extraction, dating and the verdicts.

:class:`Supervisor` extracts the claims of an output and flags those not public by the cutoff (A4 /
A5 always, B1 / B2 never); its subclasses date A1-A3 claims: :class:`LLMOnlySupervisor`
(Self-Correction, the supervisor model's date judgement) and :class:`SearchSupervisor` (TimeSPEC,
an unfiltered corpus search) (docs/methods.md#supervised-methods; TimeSPEC paper §3 and Table 6).
The supervisor's context is derived from the task input alone (:func:`supervisor_context`).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from anachron.errors import ConfigError
from anachron.llm.client import LLMClient
from anachron.llm.structured import EVIDENCE_USABLE, ParsedOutput
from anachron.tasks.base import Task
from anachron.verify.dates import normalize_declared
from anachron.verify.extract import extract_claims, extract_claims_llm
from anachron.verify.layers.corpus import MIN_SUPPORT, CorpusLayer
from anachron.verify.pipeline import verify_claim
from anachron.verify.taxonomy import ALWAYS_CLEAN, ALWAYS_LEAKED

if TYPE_CHECKING:  # pragma: no cover
    from anachron.retrieval.search import SearchBackend
    from anachron.verify.taxonomy import Claim


def supervisor_context(task: Task, row: pd.Series | dict[str, Any]) -> dict[str, Any]:
    """What the supervisor may know of an instance: the task, the cutoff and its named subjects.

    Derived from the task input only (never the label), as the TimeSPEC paper requires of its
    claim-extraction prompt.
    """
    return {"task": task, "cutoff_date": row["cutoff_date"], **task.entities(row)}


def claim_key(text: str) -> str:
    """Cache key of a claim: lower-cased, whitespace-normalised text without citations."""
    return " ".join(re.sub(r"\[[\d,\s-]+\]", " ", text).lower().split())


@dataclass
class Judged:
    """One supervised claim: the claim, whether it is flagged, the date used and how it was decided.

    ``how``: ``taxonomy``, ``llm``, ``search``, ``rules``, ``declared`` or ``undated``;
    ``cached`` is True when the verdict was reused from an earlier round.
    """

    claim: "Claim"
    flagged: bool
    effective_date: str | None
    how: str
    reason: str
    cached: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The trace form: claim text, category, source, flag, date, how, reason, cached."""
        return {
            "text": self.claim.text,
            "category": self.claim.category,
            "source": self.claim.source,
            "flagged": self.flagged,
            "effective_date": self.effective_date,
            "how": self.how,
            "reason": self.reason,
            "cached": self.cached,
        }


def _rules_date(claim: "Claim", cutoff: dt.date) -> tuple[dt.date | None, str, str]:
    v = verify_claim(claim.text, claim.declared_date_raw, cutoff, layers=("rules",))
    d = dt.date.fromisoformat(v["effective_date"]) if v["effective_date"] else None
    how = {"rules": "rules", "declared": "declared"}.get(v["layer"], "undated")
    return d, how, v["reason"]


def _taxonomy(claim: "Claim") -> Judged | None:
    if claim.category in ALWAYS_LEAKED:
        return Judged(claim, True, None, "taxonomy", f"category {claim.category}: the outcome or its consequence")
    if claim.category in ALWAYS_CLEAN:
        return Judged(claim, False, None, "taxonomy", f"category {claim.category}: not time-bound")
    return None


def _dated(claim: "Claim", cutoff: dt.date, day: dt.date | None, how: str, reason: str) -> Judged:
    if day is None:
        return Judged(claim, False, None, "undated", reason)
    return Judged(claim, day > cutoff, day.isoformat(), how, reason)


class Supervisor:
    """Extracts claims and flags those not public by the cutoff. Subclasses date A1-A3 claims.

    Args:
        client: the supervisor model's client (claim extraction; Self-Correction's date judge).
        params: decoding parameters of the supervisor's calls.
        extractor: ``"llm"`` (the LLM claim extractor, deterministic fallback when its answer is
            unusable) or ``"deterministic"``.
    """

    name = "supervisor"

    def __init__(self, client: LLMClient, params: dict[str, Any], *, extractor: str = "llm"):
        if extractor not in ("llm", "deterministic"):
            raise ConfigError(f"supervisor extractor must be 'llm' or 'deterministic', got {extractor!r}")
        self.client, self.params, self.extractor = client, params, extractor

    def extract(
        self, task: Task, rows: list[pd.Series], outputs: list[ParsedOutput]
    ) -> list[tuple[list["Claim"], dict[str, Any]]]:
        """Claims of each usable output (none for an unusable one), with an extraction trace."""
        contexts = [supervisor_context(task, r) for r in rows]
        pairs = [([e.model_dump() for e in o.evidence], o.reasoning or "") for o in outputs]
        usable = [i for i, o in enumerate(outputs) if o.status in EVIDENCE_USABLE]
        out: list[tuple[list[Claim], dict[str, Any]]] = [([], {"extractor": None, "reason": "output unusable"})] * len(rows)
        if not usable:
            return out
        if self.extractor == "llm":
            got = extract_claims_llm(
                self.client, task, [rows[i] for i in usable], [pairs[i] for i in usable], self.params,
                [contexts[i] for i in usable],
            )
        else:
            got = [(extract_claims(*pairs[i], contexts[i]), {"extractor": "deterministic", "reason": None}) for i in usable]
        out = list(out)
        for i, g in zip(usable, got):
            out[i] = g
        return out

    def date_claims(self, rows: list[pd.Series], claims: list[list["Claim"]]) -> list[list[Judged]]:
        """Verdicts for A1-A3 claims (per instance, in order); implemented by subclasses."""
        raise NotImplementedError

    def supervise(
        self,
        task: Task,
        rows: list[pd.Series],
        outputs: list[ParsedOutput],
        cache: list[dict[str, Judged]] | None = None,
    ) -> tuple[list[list[Judged]], list[dict[str, Any]]]:
        """Judge every claim of every output; reuse ``cache`` (claim_key -> Judged) per instance.

        Returns the verdicts per instance and a trace step per instance.
        """
        extracted = self.extract(task, rows, outputs)
        cache = cache or [{} for _ in rows]
        verdicts: list[list[Judged | None]] = []
        pending: list[list[Claim]] = []
        for (claims, _), known in zip(extracted, cache):
            vs: list[Judged | None] = []
            todo: list[Claim] = []
            for c in claims:
                hit = known.get(claim_key(c.text))
                if hit is not None:
                    vs.append(Judged(c, hit.flagged, hit.effective_date, hit.how, hit.reason, cached=True))
                    continue
                t = _taxonomy(c)
                vs.append(t)
                if t is None:
                    todo.append(c)
            verdicts.append(vs)
            pending.append(todo)
        dated = self.date_claims(rows, pending)
        final: list[list[Judged]] = []
        traces: list[dict[str, Any]] = []
        for vs, claims_dated, (claims, ext) in zip(verdicts, dated, extracted):
            it = iter(claims_dated)
            done = [v if v is not None else next(it) for v in vs]
            final.append(done)
            traces.append(
                {
                    "extractor": ext.get("extractor"),
                    "extractor_note": ext.get("reason"),
                    "n_claims": len(done),
                    "n_flagged": sum(v.flagged for v in done),
                    "n_cached": sum(v.cached for v in done),
                    "claims": [v.to_dict() for v in done],
                }
            )
        return final, traces


class LLMOnlySupervisor(Supervisor):
    """Self-Correction's supervisor: the supervisor model judges each A1-A3 claim's date (no search).

    Claims with a usable declared date go to the date-plausibility judge
    (:func:`anachron.verify.layers.llm.check_plausibility`, batches of ``batch_size``); an
    implausible date is replaced by the judge's corrected date. When the judge's answer is
    unusable (after its one retry), or a claim has no declared date, the plausibility rules
    date the claim from its text.
    """

    name = "llm_only"

    def __init__(self, client: LLMClient, params: dict[str, Any], *, extractor: str = "llm", batch_size: int = 80):
        super().__init__(client, params, extractor=extractor)
        self.batch_size = int(batch_size)

    def date_claims(self, rows: list[pd.Series], claims: list[list["Claim"]]) -> list[list[Judged]]:
        """Date A1-A3 claims by the judge model (one batched call set for all instances)."""
        from anachron.verify.layers.llm import check_plausibility

        items: list[dict[str, Any]] = []
        where: list[tuple[int, int]] = []
        for i, (row, cs) in enumerate(zip(rows, claims)):
            for j, c in enumerate(cs):
                d = normalize_declared(c.declared_date_raw).date
                if d is not None:
                    items.append({"fact": c.text, "declared_date": d.isoformat(), "cutoff_date": row["cutoff_date"]})
                    where.append((i, j))
        judged = check_plausibility(self.client, items, self.params, batch_size=self.batch_size) if items else []
        by_pos = dict(zip(where, judged))
        out: list[list[Judged]] = []
        for i, (row, cs) in enumerate(zip(rows, claims)):
            cutoff = dt.date.fromisoformat(str(row["cutoff_date"]))
            res: list[Judged] = []
            for j, c in enumerate(cs):
                v = by_pos.get((i, j))
                if v is not None and v.status == "ok":
                    declared = normalize_declared(c.declared_date_raw).date
                    day = declared if v.plausible or v.corrected_date is None else v.corrected_date
                    res.append(_dated(c, cutoff, day, "llm", v.reason))
                    continue
                day, how, reason = _rules_date(c, cutoff)
                if v is not None:
                    reason = f"judge unusable ({v.reason}); {reason}"
                res.append(_dated(c, cutoff, day, how, reason))
            out.append(res)
        return out


class SearchSupervisor(Supervisor):
    """TimeSPEC's supervisor: A1-A3 claims are dated by a search **without** a date filter.

    Each claim's text is the query (``k`` hits, ``as_of=None``). A hit supports the claim by the
    corpus layer's test (:meth:`anachron.verify.layers.corpus.CorpusLayer.supporting`: its event
    verbs and every number in the hit, at least ``min_support`` of its IDF-weighted content words,
    a date not before the periods the claim names); the earliest supporting hit's date is the
    claim's earliest public date. Without support, the plausibility rules date the claim from its
    text and declared date. Search errors are recorded and fall back the same way.
    """

    name = "search"

    def __init__(
        self,
        client: LLMClient,
        params: dict[str, Any],
        *,
        search: "SearchBackend",
        extractor: str = "llm",
        k: int = 10,
        min_support: float = MIN_SUPPORT,
    ):
        super().__init__(client, params, extractor=extractor)
        self.corpus = CorpusLayer(search, k=k, min_support=min_support)

    @property
    def n_searches(self) -> int:
        """Verification searches made so far."""
        return self.corpus.n_searches

    def date_claims(self, rows: list[pd.Series], claims: list[list["Claim"]]) -> list[list[Judged]]:
        """Date A1-A3 claims by an unfiltered search (one query per claim)."""
        out: list[list[Judged]] = []
        for row, cs in zip(rows, claims):
            cutoff = dt.date.fromisoformat(str(row["cutoff_date"]))
            res: list[Judged] = []
            for c in cs:
                try:
                    found, err = self.corpus.supporting(c.text), None
                except Exception as exc:  # a backend failure falls back to the rules, recorded
                    found, err = [], f"{type(exc).__name__}: {exc}"
                if found:
                    first = found[0]
                    res.append(_dated(c, cutoff, first.day, "search", f"earliest supporting document {first.doc_id} dated {first.day}"))
                    continue
                day, how, reason = _rules_date(c, cutoff)
                note = f"search failed ({err})" if err else "no supporting document"
                res.append(_dated(c, cutoff, day, how, f"{note}; {reason}"))
            out.append(res)
        return out

