"""Claim-level verification of a run: every claim gets a verdict (docs/verification.md).

Claims come from each usable completion's evidence and reasoning
(:mod:`anachron.verify.extract`: the deterministic extractor, or the LLM extractor with the
deterministic one as fallback), each with a category A1-A5 / B1-B2. For every claim the
verifier decides an *effective date* from the most trustworthy layer that applies:

1. ``grounded``: a check against point-in-time data (:mod:`anachron.verify.layers.grounded`);
2. ``corpus``: when configured, the earliest document of the dated corpus that supports the
   claim (:mod:`anachron.verify.layers.corpus`): content evidence outranks plausibility;
3. ``rules``: the interval of days on which the information the text states could first have
   been public, from every date in it (:mod:`anachron.verify.layers.rules`); a declared date
   before that interval is too early and is corrected;
4. ``llm``: when configured, the date-plausibility verifier model judges the declared dates the
   layers above left standing (:mod:`anachron.verify.layers.llm`, batches of 80); when its
   answer is unusable after one retry the rules verdict stands and the reason says so;
5. ``declared``: otherwise the model's own (normalised) ``source_date`` stands, within the
   bounds the text allows.

OLR and Cov count the evidence claims (``source == "evidence"``, TEMPO §5); claims from the
reasoning are verified and stored too (Shapley-DCLR uses every claim).

A claim's date is an interval. The claim leaks iff its earliest possible day is after the
cutoff (same day does not leak unless ``leak_on_same_day``), or a grounded check found it
states the instance's own outcome; it is clean iff its latest possible day is on or before
the cutoff; an interval that straddles the cutoff is ``ambiguous`` (not leaked, not clean). A
claim with no usable date at all is ``undated``: kept, counted apart, not leaked.
``declared_only`` marks the verdicts that rest on the declared ``source_date`` alone.
"""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
import re
from typing import Any, Mapping

import pandas as pd

from anachron.progress import Progress, track
from anachron.tables import CLAIM_COLUMNS, EVIDENCE_USABLE
from anachron.verify.citations import cited_ids
from anachron.verify.dates import DeclaredDate, normalize_declared
from anachron.verify.extract import extract_claims, extract_claims_llm
from anachron.verify.layers.corpus import CorpusLayer
from anachron.verify.layers.grounded import GroundedVerdict, Grounding
from anachron.verify.layers.llm import check_plausibility
from anachron.verify.task_rules import TaskRules
from anachron.verify.layers.rules import ContentDate, FiscalCalendar, date_content, part_after

LAYERS = ("grounded", "rules")
#: Every layer a config may name, in the order they apply (``corpus`` needs the corpus index,
#: ``llm`` a verifier model).
ALL_LAYERS = ("grounded", "corpus", "rules", "llm")


def evidence_layers(
    fact: str,
    cutoff: dt.date,
    instance: dict[str, Any] | None,
    grounding: Grounding | None,
    corpus: CorpusLayer | None,
    layers: tuple[str, ...],
) -> tuple[str, GroundedVerdict] | None:
    """The first evidence layer that dates the claim, as ``(layer name, verdict)``, or None.

    ``grounded`` (the task's point-in-time checks), then ``corpus`` (the dated corpus), each
    when it is in ``layers`` and given.
    """
    if grounding is not None and "grounded" in layers:
        g = grounding.check(fact, instance or {})
        if g is not None:
            return "grounded", g
    if corpus is not None and "corpus" in layers:
        c = corpus.check(fact, cutoff)
        if c is not None:
            return "corpus", c
    return None


def _needs(layers: tuple[str, ...], llm: dict[str, Any] | None, corpus: CorpusLayer | None) -> None:
    """Raise ValueError when ``layers`` names a layer whose resource is missing."""
    if "llm" in layers and not llm:
        raise ValueError("verify layer 'llm' needs a verifier model (config key verify.model)")
    if "corpus" in layers and corpus is None:
        raise ValueError("verify layer 'corpus' needs the corpus index (rule build_corpus: results/corpus/bm25)")


def verify_claim(
    fact: str,
    declared_raw: str | None,
    cutoff: dt.date,
    *,
    instance: dict[str, Any] | None = None,
    grounding: Grounding | None = None,
    layers: tuple[str, ...] = LAYERS,
    leak_on_same_day: bool = False,
    corpus: CorpusLayer | None = None,
    as_of_cutoff: bool = True,
) -> dict[str, Any]:
    """Verify one claim; returns the verdict fields of :data:`CLAIM_COLUMNS` and ``declared_only``.

    The claim's date is an interval (:func:`decide`): a grounded check dates it exactly; otherwise
    the dates its text states (:func:`anachron.verify.layers.rules.date_content`) and the declared
    date, which stands when the text does not refute it (a declared date before the earliest
    day the text allows is too early; a content date after the cutoff beats a pre-cutoff declared
    date). ``verdict`` is ``leaked`` when the earliest possible day is after the cutoff (or states
    the instance's own outcome), ``clean`` when the latest possible day is on or before it,
    ``ambiguous`` when the interval straddles it, ``undated`` when nothing dates the claim.
    ``declared_only`` is True when the declared date alone decided: the text names no date, or
    none that decides, or only dates read in the declared date's year.

    Args:
        fact: claim text (any length, any language; a non-string reads as empty).
        declared_raw: the model's ``source_date`` as written (may be None or junk).
        cutoff: the instance's cutoff date.
        instance: task context for grounded checks (see the grounding class).
        grounding: the task's grounded checks, or None.
        layers: which of ``grounded``, ``corpus``, ``rules`` to apply.
        leak_on_same_day: if True, a claim dated on the cutoff day leaks too.
        corpus: the corpus layer (:class:`~anachron.verify.layers.corpus.CorpusLayer`), or None.
        as_of_cutoff: the text was written as of the cutoff (a model's answer), so relative time
            ("later", "that summer") and dates without a year are read from the cutoff; False for
            text of unknown date (an instance's own input), where they name no date.
    """
    fact = fact if isinstance(fact, str) else ""
    declared = normalize_declared(declared_raw)
    out: dict[str, Any] = {
        "declared_date_raw": declared_raw,
        "declared_date": declared.date.isoformat() if declared.date else None,
        "date_status": declared.status,
        "date_rule": declared.rule,
        "category": None,
    }
    context = {**(instance or {}), "declared_date": declared.date} if grounding is not None else instance
    found = evidence_layers(fact, cutoff, context, grounding, corpus, layers)
    if found is not None:
        layer, g = found
        out["category"] = g.category
        out.update(_evidence_decision(layer, g, fact, cutoff, leak_on_same_day, "rules" in layers))
        return out
    content = None
    if "rules" in layers:
        content = date_content(
            fact, declared=declared.date, cutoff=cutoff if as_of_cutoff else None, calendar=lambda: fiscal_calendar(grounding, fact, instance or {})
        )
    out.update(decide(content, declared, cutoff, leak_on_same_day))
    return out


def _verdict(lo: dt.date, hi: dt.date, cutoff: dt.date, leak_on_same_day: bool) -> str:
    """``leaked`` / ``clean`` / ``ambiguous`` for the interval ``[lo, hi]`` against the cutoff."""
    if lo > cutoff or (leak_on_same_day and lo >= cutoff):
        return "leaked"
    if hi < cutoff or (hi == cutoff and not leak_on_same_day):
        return "clean"
    return "ambiguous"


def _fields(lo: dt.date | None, hi: dt.date | None, verdict: str, layer: str, reason: str, declared_only: bool) -> dict[str, Any]:
    """The verdict fields; ``effective_date`` is the earliest possible day (the latest for a
    clean claim bounded only from above; none for an ambiguous one without a lower bound)."""
    eff = lo if lo is not None and lo != dt.date.min else (hi if verdict == "clean" else None)
    return {
        "effective_date": eff.isoformat() if eff else None,
        "leaked": verdict == "leaked",
        "verdict": verdict,
        "layer": layer,
        "reason": reason,
        "declared_only": declared_only,
    }


def _interval(lo: dt.date, hi: dt.date) -> str:
    if lo == hi:
        return str(lo)
    if hi == dt.date.max:
        return f"from {lo} on"
    return f"no later than {hi}" if lo == dt.date.min else f"between {lo} and {hi}"


def _evidence_decision(layer: str, g: Any, fact: str, cutoff: dt.date, leak_on_same_day: bool, rules: bool) -> dict[str, Any]:
    """The date an evidence ``layer`` found (a :class:`~anachron.verify.layers.grounded.GroundedVerdict`
    ``g``) decides, unless it states the outcome (leaked) or, with the ``rules`` layer, another
    part of a compound claim names a period that starts after the cutoff (leaked by that part)."""
    if g.outcome:
        return _fields(g.effective_date, g.effective_date, "leaked", layer, g.reason, False)
    v = _verdict(g.effective_date, g.effective_date, cutoff, leak_on_same_day)
    late = part_after(fact, cutoff - dt.timedelta(days=1) if leak_on_same_day else cutoff) if rules and v != "leaked" else None
    if late is not None:
        reason = f"{g.reason}; but the claim also names {late[1]!r}, not public before {late[0]}"
        return _fields(late[0], late[0], "leaked", "rules", reason, False)
    return _fields(g.effective_date, g.effective_date, v, layer, g.reason, False)


def decide(content: ContentDate | None, declared: DeclaredDate, cutoff: dt.date, leak_on_same_day: bool = False) -> dict[str, Any]:
    """The verdict from the text's dates and the declared date (no grounded check applied).

    The declared date is the interval ``[date, latest]`` (:class:`~anachron.verify.dates.DeclaredDate`),
    the text's the interval of :class:`~anachron.verify.layers.rules.ContentDate`. A declared
    date that ends before the text's earliest day is too early and the text's interval stands
    (layer ``rules``); otherwise the declared date stands within the text's bounds (layer
    ``declared``): the claim is dated when its source is, no earlier than the text allows. With
    only one of them, that one stands; with neither, ``undated``.

    Returns:
        ``effective_date``, ``leaked``, ``verdict``, ``layer``, ``reason``, ``declared_only``.
    """
    d_lo = declared.date
    d_hi = declared.latest or d_lo
    ignored = f"; not the fact's date (prospective): {', '.join(repr(t) for t in content.ignored)}" if content and content.ignored else ""
    if content is None or content.earliest is None or content.latest is None:
        if d_lo is None:
            return _fields(None, None, "undated", "none", f"undated: {declared.rule}{ignored}", False)
        v = _verdict(d_lo, d_hi, cutoff, leak_on_same_day)
        reason = "declared date is plausible" if v != "ambiguous" else f"declared date {_interval(d_lo, d_hi)} straddles the cutoff"
        return _fields(d_lo, d_hi, v, "declared", reason + (ignored or "; no date in the text"), True)
    c_lo, c_hi = content.earliest, content.latest
    if d_lo is None:
        v = _verdict(c_lo, c_hi, cutoff, leak_on_same_day)
        why = f"; the text allows {_interval(c_lo, c_hi)}, which straddles the cutoff" if v == "ambiguous" else ""
        return _fields(c_lo, c_hi, v, "rules", f"no usable declared date; dated from the text ({content.rule}){why}{ignored}", False)
    if d_hi < c_lo:
        v = _verdict(c_lo, c_hi, cutoff, leak_on_same_day)
        why = f" (the text allows {_interval(c_lo, c_hi)}, which straddles the cutoff)" if v == "ambiguous" else ""
        return _fields(c_lo, c_hi, v, "rules", f"declared {d_lo} is too early ({content.rule}); corrected to {c_lo}{why}{ignored}", False)
    lo, hi = max(d_lo, c_lo), d_hi
    v = _verdict(lo, hi, cutoff, leak_on_same_day)
    decisive_text = _verdict(c_lo, c_hi, cutoff, leak_on_same_day) != "ambiguous" and not content.on_declared
    if v == "ambiguous":
        reason = f"declared date and text allow {_interval(lo, hi)}, which straddles the cutoff ({content.rule})"
    elif decisive_text:
        reason = "declared date is plausible"
    else:
        reason = f"declared date is plausible; the text alone allows {_interval(c_lo, c_hi)} ({content.rule})"
    return _fields(lo, hi, v, "declared", reason + ignored, not decisive_text)


def fiscal_calendar(grounding: Grounding | None, fact: str, instance: Mapping[str, Any]) -> FiscalCalendar | None:
    """The fiscal calendar of the one company ``fact`` names, from the grounding's EDGAR check
    (an object with ``companies(fact, instance)``, ``fiscal_year_end`` and
    ``fiscal_quarter_end``, itself or among a composite's ``checks``); else the US federal
    government's (October to September, :class:`FederalCalendar`) when the fact speaks of a
    federal agency or budget and names no company the check knows; else None."""
    for c in getattr(grounding, "checks", [grounding]):
        if all(hasattr(c, a) for a in ("companies", "fiscal_year_end", "fiscal_quarter_end")):
            ciks = c.companies(fact, instance)
            if len(ciks) == 1:
                return _CompanyCalendar(c, ciks[0])
            if ciks:
                return None
    return FederalCalendar() if _FEDERAL.search(fact or "") else None


#: A US federal agency, department or budget: its fiscal year is the government's.
_FEDERAL = re.compile(
    r"\b(?:federal\s+(?:government|budget|deficit|spending|agenc\w+|fiscal)|U\.?S\.?\s+(?:government|Treasury|budget|"
    r"deficit|Customs|Border|Department|Census\s+Bureau|Postal\s+Service)|Treasury\s+Department|Congressional\s+Budget\s+"
    r"Office|CBO|Customs\s+and\s+Border\s+Protection|CBP|Border\s+Patrol|Department\s+of\s+(?:Defense|Homeland\s+Security|"
    r"Education|State|Justice|Agriculture|Labor|Energy|Veterans\s+Affairs|Health\s+and\s+Human\s+Services)|Pentagon|"
    r"Immigration\s+and\s+Customs\s+Enforcement|DHS|USCIS|IRS|budget\s+deficit)\b"
)


class FederalCalendar:
    """The US federal government's fiscal calendar: fiscal year Y runs from October 1 of Y − 1 to
    September 30 of Y (31 U.S.C. § 1102); its first quarter ends December 31 of Y − 1."""

    def year_end(self, year: int) -> dt.date | None:
        return dt.date(year, 9, 30)

    def quarter_end(self, year: int, quarter: int) -> dt.date | None:
        month = (12, 3, 6, 9)[quarter - 1] if 1 <= quarter <= 4 else None
        if month is None:
            return None
        return dt.date(year - 1 if quarter == 1 else year, month, 31 if month in (12, 3) else 30)


class _CompanyCalendar:
    """:class:`~anachron.verify.layers.rules.FiscalCalendar` of company ``cik`` from an EDGAR check."""

    def __init__(self, edgar: Any, cik: int):
        self._edgar, self._cik = edgar, cik

    def year_end(self, year: int) -> dt.date | None:
        return self._edgar.fiscal_year_end(self._cik, year)

    def quarter_end(self, year: int, quarter: int) -> dt.date | None:
        return self._edgar.fiscal_quarter_end(self._cik, year, quarter)


def extract_run_claims(
    run: pd.DataFrame,
    instances: pd.DataFrame,
    task: TaskRules,
    client: Any,
    params: dict[str, Any],
    contexts: dict[str, dict[str, Any]],
) -> dict[str, list[Any]]:
    """Claims of every usable completion by the LLM extractor (deterministic fallback per instance).

    Args:
        run: run table; instances: the task's instances indexed by id; task: the task;
        client: the verifier model's client (None: deterministic extraction only);
        params: its decoding parameters; contexts: instance_id -> grounding context.

    Returns:
        instance_id -> list of :class:`anachron.verify.taxonomy.Claim`.
    """
    usable = run[run["parse_status"].isin(EVIDENCE_USABLE)]
    outputs = [(json.loads(r.evidence or "[]"), r.reasoning or "") for r in usable.itertuples(index=False)]
    ctxs = [{"task": task, **contexts[i]} for i in usable["instance_id"]]
    if client is None:
        return {i: extract_claims(ev, rs, c) for i, (ev, rs), c in zip(usable["instance_id"], outputs, ctxs)}
    rows = [instances.loc[i] for i in usable["instance_id"]]
    got = extract_claims_llm(client, task, rows, outputs, params, ctxs)
    return {i: claims for i, (claims, _) in zip(usable["instance_id"], got)}


def verify_run(
    run: pd.DataFrame,
    contexts: dict[str, dict[str, Any]],
    *,
    grounding: Grounding | None = None,
    layers: tuple[str, ...] = LAYERS,
    leak_on_same_day: bool = False,
    task: TaskRules | None = None,
    claims_by_instance: dict[str, list[Any]] | None = None,
    llm: dict[str, Any] | None = None,
    corpus: CorpusLayer | None = None,
    progress: bool = False,
    workers: int = 1,
) -> pd.DataFrame:
    """One row per claim of every usable completion in ``run``.

    Args:
        run: a run table (``RUN_COLUMNS`` of :mod:`anachron.methods.base`).
        contexts: instance_id -> grounding context (``cutoff_date`` at least).
        grounding: the task's grounded checks, or None.
        layers: verifier layers to apply (``grounded``, ``corpus``, ``rules``, ``llm``).
        leak_on_same_day: see :func:`verify_claim`.
        task: the task (:class:`~anachron.verify.task_rules.TaskRules`, given to the claim categoriser).
        claims_by_instance: claims already extracted per instance (e.g. by the LLM extractor,
            :class:`anachron.verify.taxonomy.Claim`); others use the deterministic extractor.
        llm: the LLM layer's ``{"client", "params", "batch_size"}``; required when ``layers``
            has ``llm``.
        corpus: the corpus layer; required when ``layers`` has ``corpus``.
        progress: show the instances done (:func:`anachron.progress.track`; rule verify_claims).
        workers: processes that verify the completions (rule verify_claims: its ``threads``). With
            more than one, the completions are cut into consecutive chunks that forked processes
            verify (they inherit the grounding and the corpus index, nothing is pickled but the
            rows), and the rows are put back in run order: the same table as one process gives. The
            ``llm`` layer runs afterwards in this process. Where processes cannot be forked
            (platforms without ``fork``), one process verifies all.

    Returns:
        DataFrame with :data:`CLAIM_COLUMNS` (empty, with those columns, if no claims).

    Raises:
        ValueError: ``llm`` in ``layers`` without an ``llm`` client, ``corpus`` without ``corpus``;
            ``workers`` below 1.
    """
    _needs(layers, llm, corpus)
    if int(workers) < 1:
        raise ValueError(f"workers must be >= 1, got {workers!r}")
    job = _RunJob(contexts, grounding, tuple(x for x in layers if x != "llm"), leak_on_same_day, task,
                  claims_by_instance, corpus)
    records = list(run.itertuples(index=False))
    workers = min(int(workers), max(1, len(records)))
    if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
        rows = _verify_forked(job, records, workers, progress)
    else:
        rows = []
        for r in track(records, "claims", total=len(records), calls=False, enabled=progress):
            rows.extend(job.rows(r))
    if "llm" in layers and rows:
        _apply_llm_layer(rows, llm or {}, leak_on_same_day)
    out = pd.DataFrame(rows, columns=CLAIM_COLUMNS)
    out["evidence_id"] = out["evidence_id"].astype("Int64")
    return out


class _RunJob:
    """What verifying one completion of a run needs (the arguments of :func:`verify_run`)."""

    def __init__(self, contexts, grounding, layers, leak_on_same_day, task, claims_by_instance, corpus):
        self.contexts, self.grounding, self.layers = contexts, grounding, layers
        self.leak_on_same_day, self.task = leak_on_same_day, task
        self.claims_by_instance, self.corpus = claims_by_instance, corpus

    def rows(self, r: Any) -> list[dict[str, Any]]:
        """The claim rows of completion ``r`` (a run row); none when its evidence is not usable."""
        if getattr(r, "parse_status", "ok") not in EVIDENCE_USABLE:
            return []
        evidence = json.loads(r.evidence or "[]")
        ctx = self.contexts[r.instance_id]
        cutoff = dt.date.fromisoformat(r.cutoff_date)
        cited = cited_ids(r.reasoning)
        if self.claims_by_instance is not None and r.instance_id in self.claims_by_instance:
            claims = self.claims_by_instance[r.instance_id]
        else:
            claims = extract_claims(evidence, r.reasoning or "", {"task": self.task, **ctx})
        out = []
        n_reasoning = 0
        for k, c in enumerate(claims, start=1):
            verdict = verify_claim(
                c.text,
                c.declared_date_raw,
                cutoff,
                instance=ctx,
                grounding=self.grounding,
                layers=self.layers,
                leak_on_same_day=self.leak_on_same_day,
                corpus=self.corpus,
            )
            if c.source == "evidence":
                cid = f"{r.instance_id}:{k}"
            else:
                n_reasoning += 1
                cid = f"{r.instance_id}:r{n_reasoning}"
            out.append(
                {
                    "task": r.task,
                    "method": r.method,
                    "model": r.model,
                    "instance_id": r.instance_id,
                    "claim_id": cid,
                    "source": c.source,
                    "evidence_id": c.evidence_id,
                    "fact": c.text,
                    "cutoff_date": r.cutoff_date,
                    "cited": c.source == "evidence" and c.evidence_id is not None and int(c.evidence_id) in cited,
                    **verdict,
                    "category": verdict["category"] or c.category,
                    "category_rule": "grounded check" if verdict["category"] else c.category_rule,
                    "extractor": c.extractor,
                }
            )
        return out


#: The job and completions a forked worker of :func:`_verify_forked` reads (set before the fork).
_FORKED: tuple[_RunJob, list[Any]] | None = None


def _forked_chunk(bounds: tuple[int, int]) -> tuple[list[dict[str, Any]], int, tuple[int, int, str]]:
    """Rows of the completions ``bounds`` (a half-open range), their number, and the corpus layer's
    counters of this chunk (searches, errors, last error)."""
    job, records = _FORKED  # type: ignore[misc]
    corpus = job.corpus
    before = (corpus.n_searches, corpus.n_errors) if corpus is not None else (0, 0)
    rows = [row for r in records[bounds[0]:bounds[1]] for row in job.rows(r)]
    counts = (corpus.n_searches - before[0], corpus.n_errors - before[1], corpus.last_error) if corpus is not None else (0, 0, "")
    return rows, bounds[1] - bounds[0], counts


def _verify_forked(job: _RunJob, records: list[Any], workers: int, progress: bool) -> list[dict[str, Any]]:
    """:meth:`_RunJob.rows` of every completion by ``workers`` forked processes, in run order.

    Chunks of consecutive completions (about eight per worker, so a slow chunk does not hold the
    others back) go to the pool in order and come back in order (``imap``); the corpus layer's
    counters of the workers are added to the parent's."""
    global _FORKED
    size = max(1, -(-len(records) // (workers * 8)))
    chunks = [(i, min(i + size, len(records))) for i in range(0, len(records), size)]
    rows: list[dict[str, Any]] = []
    _FORKED = (job, records)
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool, \
                Progress(len(records), "claims", calls=False, enabled=progress) as bar:
            for part, n, (searches, errors, last) in pool.imap(_forked_chunk, chunks):
                rows.extend(part)
                bar.update(n)
                if job.corpus is not None:
                    job.corpus.n_searches += searches
                    job.corpus.n_errors += errors
                    job.corpus.last_error = last or job.corpus.last_error
    finally:
        _FORKED = None
    return rows


def _apply_llm_layer(rows: list[dict[str, Any]], llm: dict[str, Any], leak_on_same_day: bool) -> None:
    """Layer 3 in place: declared dates left standing by grounded / rules go to the verifier model."""
    todo = [i for i, r in enumerate(rows) if r["layer"] == "declared" and r["declared_date"]]
    if not todo:
        return
    items = [{"fact": rows[i]["fact"], "declared_date": rows[i]["declared_date"], "cutoff_date": rows[i]["cutoff_date"]} for i in todo]
    verdicts = check_plausibility(llm["client"], items, llm.get("params") or {}, batch_size=int(llm.get("batch_size", 80)))
    for i, v in zip(todo, verdicts):
        r = rows[i]
        if v.status != "ok":
            r["reason"] = f"llm verifier unusable ({v.reason}); rules layer: {r['reason']}"
            continue
        cutoff = dt.date.fromisoformat(r["cutoff_date"])
        declared = dt.date.fromisoformat(r["declared_date"])
        eff = declared if v.plausible or v.corrected_date is None else max(declared, v.corrected_date)
        leaked = eff > cutoff or (leak_on_same_day and eff == cutoff)
        r.update(
            effective_date=eff.isoformat(),
            leaked=bool(leaked),
            verdict="leaked" if leaked else "clean",
            declared_only=False,
            layer="llm",
            reason=("plausible: " if v.plausible else f"implausible, corrected to {eff}: ") + v.reason,
        )


def verify_table(
    claims: pd.DataFrame,
    contexts: dict[str, dict[str, Any]],
    groundings: dict[str, Grounding | None],
    layers: tuple[str, ...],
    *,
    llm: dict[str, Any] | None = None,
    leak_on_same_day: bool = False,
    corpus: CorpusLayer | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Verdicts for a table of claims of any tasks (the calibration's ``verify_fn``).

    Args:
        claims: rows with ``task``, ``instance_id``, ``fact``, ``declared_date_raw``, ``cutoff_date``.
        contexts: instance_id -> grounding context.
        groundings: task -> grounded checks (or None).
        layers: layers to apply (``llm`` needs ``llm``: ``{"client", "params", "batch_size"}``;
            ``corpus`` needs ``corpus``).
        leak_on_same_day: see :func:`verify_claim`.
        corpus: the corpus layer (:class:`~anachron.verify.layers.corpus.CorpusLayer`), or None.
        progress: show the claims done (:func:`anachron.progress.track`; rule calibrate_verifier).

    Returns:
        Frame aligned to ``claims`` with ``leaked``, ``verdict``, ``layer``, ``reason``, ``effective_date``,
        ``declared_only``.

    Raises:
        ValueError: ``llm`` in ``layers`` without a client, ``corpus`` without ``corpus``.
    """
    _needs(layers, llm, corpus)
    base = tuple(x for x in layers if x != "llm")
    rows = []
    desc = "verify " + "+".join(layers)
    for r in track(claims.itertuples(index=False), desc, total=len(claims), unit="claim", calls=False, enabled=progress):
        v = verify_claim(
            r.fact,
            r.declared_date_raw,
            dt.date.fromisoformat(r.cutoff_date),
            instance=dict(contexts.get(r.instance_id, {})),
            grounding=groundings.get(r.task) if "grounded" in base else None,
            layers=base,
            leak_on_same_day=leak_on_same_day,
            corpus=corpus,
        )
        rows.append({**v, "fact": r.fact, "cutoff_date": r.cutoff_date})
    if "llm" in layers and rows:
        _apply_llm_layer(rows, llm or {}, leak_on_same_day)
    cols = ["leaked", "verdict", "layer", "reason", "effective_date", "declared_only"]
    return pd.DataFrame([{k: r[k] for k in cols} for r in rows], index=claims.index, columns=cols)

