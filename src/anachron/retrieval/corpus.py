"""One date-stamped document table built from the source tables (for retrieval and trace metrics).

:func:`build_corpus` turns every source table it is given into short documents, each dated
by the day it became public (``published_at``), so that a search with an as-of date can hide
what was not yet known (Anachron's date-filtered retrieval; docs/methods.md#corpus) and so that
retrieval traces can be scored for leakage (docs/metrics.md#trace-metrics: post-cutoff items, entities not yet
or no longer listed, restated figures).

Documents (:data:`CORPUS_COLUMNS`)::

    doc_id        str       unique, stable across builds ("edgar:<accn>:<hash>", "oyez:2019:18-6135:decided", ...)
    published_at  str       ISO "YYYY-MM-DD": the day the document became public
    title         str       one line
    text          str       a short body ("" when the title says it all)
    source        str       news publisher (reuters, guardian, cnbc, wsj, analyst_ratings, reddit) or the
                            table's source (edgar, sp500, oyez, nba, nhl, forecastbench, yahoo)
    kind          str       headline, fact, restatement, index_join, index_leave, index_member_at_start,
                            index_change, case_granted, case_argued, case_decided, signing, resolution,
                            price_month
    entities      str       JSON list of entity keys (:func:`entity_key`): "ticker:AAPL", "player:lebron james",
                            "case:young v united parcel service inc", "docket:12-1226", "question:<id>"
    valid_from    str|None  for documents about an index-membership spell: the spell's first day
    valid_to      str|None  ... and the day it ended (None: still a member); None for other documents
    restates      str|None  EDGAR: doc_id of the earlier report this one revises with a different value

Entity validity (:data:`ENTITY_COLUMNS`): one row per S&P 500 membership spell; an entity is
valid on day D iff (``valid_from`` is None or ``valid_from <= D``) and (``valid_to`` is None or
``D < valid_to``): removed on day d means not valid at a cutoff of d; an entity
absent from the table is always valid (see :func:`anachron.retrieval.search.validity_index`).

Input tables (any subset; keys of ``tables``):

``news``              :mod:`anachron.sources.news` output (published_at, title, text, source, ticker)
``edgar``             :mod:`anachron.sources.edgar` facts with revision columns; one document per
                      (fact, filing), dated ``filed``; a report with ``value_changed`` restates the
                      previous report of the same (cik, taxonomy, concept, unit, start, end)
``sp500_membership``  ticker, start_date, end_date -> a join document at start_date, a leave document at
                      end_date, and one validity row per spell (no start_date but an end_date: a spell
                      open at the start, valid_from None, leave document only)
``sp500_changes``     date, add, remove (comma-separated tickers) -> one document per row
``sp500_sectors``     optional: as_of, ticker, name -> company names for titles (latest name per ticker)
``oyez``              :mod:`anachron.sources.oyez` cases -> granted / argued / decided documents
``nba``, ``nhl``      signings (:data:`anachron.sources.signings.SIGNING_COLUMNS`), dated signing_date
``forecastbench``     :mod:`anachron.sources.forecastbench` rows -> "<question> resolved YES/NO" at resolution_date
``prices``            daily prices (ticker, date, close, adj_close[, high, low]) -> one summary per ticker and
                      calendar month, dated at its last trading day in the data

A document whose date is missing or not a date is excluded and counted (``missing_date``,
``unparseable_date``); other exclusions: ``unresolved`` (ForecastBench question not resolved),
``partial_month`` (the last month of the price data, not yet complete), ``duplicate_doc``
(a doc_id seen before, e.g. a question present in two question sets).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import time
import unicodedata
from collections import Counter
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from anachron.frames import is_blank, is_missing_scalar, require_columns, text_or_empty
from anachron.sources.base import normalize_ticker
from anachron.sources.news.headlines import news_doc_id
from anachron.sources.paths import PRICES, SP500_CHANGES, SP500_MEMBERSHIP, SP500_SECTORS, source_table
from anachron.sources.player_names import normalize_name

log = logging.getLogger(__name__)

CORPUS_COLUMNS = ["doc_id", "published_at", "title", "text", "source", "kind", "entities", "valid_from", "valid_to", "restates"]
ENTITY_COLUMNS = ["entity", "valid_from", "valid_to", "source"]

#: Tickers of the companies in the shared EDGAR snapshot, by CIK (Alphabet has two share classes).
DEFAULT_CIK_TICKERS: dict[int, tuple[str, ...]] = {
    320193: ("AAPL",),
    1045810: ("NVDA",),
    1318605: ("TSLA",),
    1652044: ("GOOGL", "GOOG"),
    789019: ("MSFT",),
    1324424: ("EXPE",),
}

EXCLUDE_MISSING_DATE = "missing_date"
EXCLUDE_BAD_DATE = "unparseable_date"
EXCLUDE_UNRESOLVED = "unresolved"
EXCLUDE_PARTIAL_MONTH = "partial_month"
EXCLUDE_DUPLICATE = "duplicate_doc"

_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}")
_SNIPPET_MAX = 600


# ---------------------------------------------------------------------------------------------
# entity keys
# ---------------------------------------------------------------------------------------------


def normalize_case_name(name: Any) -> str:
    """Matching key of a case name: no accents or punctuation, lower case, single spaces.

    "Young v. United Parcel Service, Inc." -> "young v united parcel service inc".
    """
    s = text_or_empty(name)
    s = unicodedata.normalize("NFKD", s)
    s = "".join(ch for ch in s if not unicodedata.combining(ch)).lower()
    s = s.replace("'", "").replace("’", "")
    s = re.sub(r"[^a-z0-9]+", " ", s)
    return " ".join(s.split())


def entity_key(kind: str, name: Any) -> str:
    """The entity key used in ``entities`` and in the validity table: ``"<kind>:<normalised name>"``.

    ``ticker``: S&P spelling, upper case (``"ticker:BRK.B"``); ``player``:
    :func:`anachron.sources.player_names.normalize_name` (``"player:nikola vucevic"``); ``case``:
    :func:`normalize_case_name`; any other kind: lower case with single spaces
    (``"docket:17-1268"``, ``"question:abc"``). Use this function on both sides of a comparison.
    """
    kind = str(kind).strip().lower()
    if kind == "ticker":
        return f"ticker:{normalize_ticker(name)}"
    if kind == "player":
        return f"player:{normalize_name(name)}"
    if kind == "case":
        return f"case:{normalize_case_name(name)}"
    return f"{kind}:{' '.join(str(name).lower().split())}"


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _h(*parts: Any, n: int = 12) -> str:
    return hashlib.sha1("|".join("" if p is None else str(p) for p in parts).encode("utf-8")).hexdigest()[:n]


def iso_days(values: pd.Series) -> tuple[pd.Series, np.ndarray, np.ndarray]:
    """Dates as ISO day strings: ``(days, missing, unparseable)``.

    Accepts datetime64 columns (tz-aware ones are taken in their own zone) and strings that
    start with ``YYYY-MM-DD`` (a time or offset may follow; the leading calendar day is used).
    ``days`` holds None where the value is missing or not a valid date; the two boolean arrays
    tell which.
    """
    values = pd.Series(values).reset_index(drop=True)
    if pd.api.types.is_datetime64_any_dtype(values.dtype):
        missing = values.isna().to_numpy()
        days = values.dt.strftime("%Y-%m-%d").astype(object).where(~missing, None)
        return days, missing, np.zeros(len(values), dtype=bool)
    obj = values.astype(object)
    na = obj.isna().to_numpy()
    text = obj.where(~na, "").astype(str).str.strip()
    missing = na | (text == "").to_numpy()
    head = text.str.slice(0, 10).where(text.str.match(r"^\d{4}-\d{2}-\d{2}"), "")
    parsed = pd.to_datetime(head, format="%Y-%m-%d", errors="coerce")
    ok = parsed.notna().to_numpy()
    days = pd.Series(np.where(ok, head.to_numpy(dtype=object), None), dtype=object)
    return days, missing, ~missing & ~ok


def _money(v: Any) -> str:
    if is_blank(v):
        return "an undisclosed amount"
    v = float(v)
    if abs(v) >= 1e9:
        return f"${v / 1e9:,.2f} billion"
    if abs(v) >= 1e6:
        return f"${v / 1e6:,.2f} million"
    return f"${v:,.0f}"


def _value(val: float, unit: str) -> str:
    """A reported XBRL value in words ("$394.33 billion", "$6.11 per share", "16,426,786,000 shares")."""
    u = str(unit)
    if u == "USD":
        return _money(val)
    if u.startswith("USD/"):
        return f"${val:,.2f} per {u.split('/', 1)[1].rstrip('s') or 'unit'}"
    if u == "shares":
        return f"{val:,.0f} shares"
    if u == "pure":
        return f"{val:g}"
    return f"{val:,.0f} {u}" if float(val).is_integer() else f"{val:g} {u}"


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _concept_label(label: Any, concept: str) -> str:
    if not is_blank(label):
        return str(label).strip()
    return _CAMEL.sub(" ", str(concept))


def _frame(rows: dict[str, list], n: int) -> pd.DataFrame:
    """A documents frame with :data:`CORPUS_COLUMNS` (object dtype, None for absent values)."""
    out = {}
    for col in CORPUS_COLUMNS:
        vals = rows.get(col)
        out[col] = pd.Series([None] * n if vals is None else list(vals), dtype=object)
    return pd.DataFrame(out, columns=CORPUS_COLUMNS)


class _Builder:
    """Accumulates document frames, exclusions and restatement counts for :func:`build_corpus`."""

    def __init__(self) -> None:
        self.frames: list[pd.DataFrame] = []
        self.excluded: dict[str, Counter] = {}
        self.extra: dict[str, Any] = {}

    def exclude(self, source: str, reason: str, n: int) -> None:
        if n:
            self.excluded.setdefault(source, Counter())[reason] += int(n)

    def dated(self, source: str, dates: pd.Series) -> tuple[pd.Series, np.ndarray]:
        """ISO days of ``dates`` and the mask of usable rows; counts the rest as excluded."""
        days, missing, bad = iso_days(dates)
        self.exclude(source, EXCLUDE_MISSING_DATE, int(missing.sum()))
        self.exclude(source, EXCLUDE_BAD_DATE, int(bad.sum()))
        return days, ~(missing | bad)

    def add(self, df: pd.DataFrame) -> None:
        if len(df):
            self.frames.append(df)


def _col(df: pd.DataFrame, name: str, default: Any = None) -> pd.Series:
    if name in df.columns:
        return df[name].reset_index(drop=True).astype(object).where(df[name].reset_index(drop=True).notna(), None)
    return pd.Series([default] * len(df), dtype=object)


def _require(df: pd.DataFrame, cols: list[str], table: str) -> None:
    require_columns(df, cols, f"build_corpus: table {table!r}")


# ---------------------------------------------------------------------------------------------
# per-table document builders
# ---------------------------------------------------------------------------------------------


def _news_docs(df: pd.DataFrame, b: _Builder) -> None:
    _require(df, ["published_at", "title", "source"], "news")
    df = df.reset_index(drop=True)
    days, ok = b.dated("news", df["published_at"])
    src = _col(df, "source").map(lambda s: str(s))
    title = _col(df, "title", "").map(lambda s: "" if s is None else str(s))
    text = _col(df, "text", "").map(lambda s: "" if s is None else str(s)[:_SNIPPET_MAX])
    ticker = _col(df, "ticker")
    keep = ok & (title != "").to_numpy()
    b.exclude("news", "empty_title", int((ok & (title == "").to_numpy()).sum()))
    idx = np.flatnonzero(keep)
    ids = [news_doc_id(src[i], days[i], title[i]) for i in idx]
    ents = ["[]" if is_blank(ticker[i]) else json.dumps([entity_key("ticker", ticker[i])]) for i in idx]
    b.add(
        _frame(
            {
                "doc_id": ids,
                "published_at": days[idx],
                "title": title[idx],
                "text": text[idx],
                "source": src[idx],
                "kind": ["headline"] * len(idx),
                "entities": ents,
            },
            len(idx),
        )
    )


def _edgar_docs(df: pd.DataFrame, b: _Builder, cik_tickers: Mapping[int, tuple[str, ...]]) -> None:
    key = ["cik", "taxonomy", "concept", "unit", "start", "end"]
    _require(df, key + ["val", "form", "filed", "accn", "revision", "value_changed", "restates"], "edgar")
    if "derived" in df.columns:  # a derived Q4 (fiscal year minus nine months) is no filed document
        df = df[~df["derived"].astype("boolean").fillna(False).astype(bool)]
    df = df.reset_index(drop=True).copy()
    df["_start"] = df["start"].astype(object).where(df["start"].notna(), "")
    # Order every period's reports as the source numbered them (revision 0, 1, ...).
    df = df.sort_values(["cik", "taxonomy", "concept", "unit", "_start", "end", "revision"], kind="mergesort").reset_index(drop=True)
    n = len(df)
    cik = df["cik"].astype("int64").to_numpy()
    tax, concept, unit = (df[c].astype(str).to_numpy() for c in ("taxonomy", "concept", "unit"))
    start, end = df["_start"].astype(str).to_numpy(), df["end"].astype(str).to_numpy()
    accn, form = df["accn"].astype(str).to_numpy(), df["form"].astype(str).to_numpy()
    val = df["val"].astype("float64").to_numpy()
    label = _col(df, "label").to_numpy()
    entity = _col(df, "entity_name", "").map(lambda s: "" if s is None else str(s)).to_numpy()
    doc_id = np.array([f"edgar:{accn[i]}:{_h(tax[i], concept[i], unit[i], start[i], end[i], n=10)}" for i in range(n)], dtype=object)
    # Row number of the previous report of the same period (NaN for a period's first report).
    prev_idx = pd.Series(np.arange(n)).groupby([df[c] for c in ("cik", "taxonomy", "concept", "unit", "_start", "end")], sort=False).shift(1)
    src_restates = df["restates"].astype(object).where(df["restates"].notna(), None).to_numpy()
    changed = df["value_changed"].astype(bool).to_numpy()
    restates: list[str | None] = [None] * n
    mismatch = 0
    prev_val = np.full(n, np.nan)
    for i in np.flatnonzero(changed):
        j = prev_idx.iloc[i]
        if pd.isna(j):
            mismatch += 1
            continue
        j = int(j)
        restates[i] = doc_id[j]
        prev_val[i] = val[j]
        if src_restates[i] != accn[j]:
            mismatch += 1
    days, ok = b.dated("edgar", df["filed"])
    titles, texts, ents, kinds = [], [], [], []
    ent_cache: dict[int, str] = {}
    for i in range(n):
        lab = _concept_label(label[i], concept[i])
        period = f"for {start[i]} to {end[i]}" if start[i] else f"as of {end[i]}"
        name = entity[i] or f"CIK {cik[i]}"
        v = _value(val[i], unit[i])
        titles.append(f"{name} {lab} {period}: {v}")
        body = f"{name} reported {lab} of {v} {period} in its {form[i]} filing (accession {accn[i]})."
        if restates[i] is not None:
            body += f" This revises the {_value(prev_val[i], unit[i])} reported earlier for the same period."
            kinds.append("restatement")
        else:
            kinds.append("fact")
        texts.append(body)
        c = int(cik[i])
        if c not in ent_cache:
            ent_cache[c] = json.dumps([entity_key("ticker", t) for t in cik_tickers.get(c, ())])
        ents.append(ent_cache[c])
    docs = _frame(
        {
            "doc_id": doc_id,
            "published_at": days,
            "title": titles,
            "text": texts,
            "source": ["edgar"] * n,
            "kind": kinds,
            "entities": ents,
            "restates": restates,
        },
        n,
    )
    docs = docs.loc[ok]
    # A restatement whose predecessor was excluded (bad date) keeps its link: the id is stable.
    b.extra["edgar_restatement_links"] = int(docs["restates"].notna().sum())
    b.extra["edgar_restatement_accn_mismatch"] = int(mismatch)
    b.add(docs.reset_index(drop=True))


def _company_names(sectors: pd.DataFrame | None) -> dict[str, str]:
    if sectors is None or sectors.empty or "name" not in sectors.columns:
        return {}
    tab = sectors.dropna(subset=["ticker", "name"]).copy()
    if "as_of" in tab.columns:
        tab = tab.sort_values("as_of", kind="mergesort")
    return {normalize_ticker(t): str(n).strip() for t, n in zip(tab["ticker"], tab["name"]) if str(n).strip() and str(n) != "nan"}


def _named(ticker: str, names: Mapping[str, str]) -> str:
    name = names.get(ticker)
    return f"{name} ({ticker})" if name else ticker


def _membership_docs(df: pd.DataFrame, b: _Builder, names: Mapping[str, str], entities: list[dict]) -> None:
    _require(df, ["ticker", "start_date", "end_date"], "sp500_membership")
    df = df.reset_index(drop=True)
    tickers = df["ticker"].map(normalize_ticker)
    start, start_missing, start_bad = iso_days(df["start_date"])
    end, end_missing, end_bad = iso_days(df["end_date"])
    history_start = min((s for s in start if s is not None), default=None)
    # A spell with no start day but a removal day is kept, open at the start (only its leave
    # document and a validity row); with neither day there is nothing to date, so it is excluded.
    open_start = start_missing & ~end_missing & ~end_bad
    b.exclude("sp500", EXCLUDE_MISSING_DATE, int((start_missing & ~open_start).sum()))
    b.exclude("sp500", EXCLUDE_BAD_DATE, int(start_bad.sum() + end_bad.sum()))
    rows: dict[str, list] = {c: [] for c in CORPUS_COLUMNS}

    def add(doc_id, day, title, text, kind, ent, vf, vt):
        for c, v in zip(CORPUS_COLUMNS, (doc_id, day, title, text, "sp500", kind, ent, vf, vt, None)):
            rows[c].append(v)

    for i in range(len(df)):
        if (start[i] is None and not open_start[i]) or end_bad[i]:
            continue
        t = tickers[i]
        ent = json.dumps([entity_key("ticker", t)])
        vf, vt = start[i], end[i]
        entities.append({"entity": entity_key("ticker", t), "valid_from": vf, "valid_to": vt, "source": "sp500_membership"})
        who = _named(t, names)
        if vf is None:
            pass  # open at the start: only the removal is dated
        elif vf == history_start:
            add(f"sp500:member:{t}:{vf}", vf, f"{who} is a member of the S&P 500 index",
                f"{who} was already in the S&P 500 when the membership history begins.", "index_member_at_start", ent, vf, vt)
        else:
            add(f"sp500:join:{t}:{vf}", vf, f"{who} joined the S&P 500 index",
                f"{who} was added to the S&P 500 index.", "index_join", ent, vf, vt)
        if vt is not None:
            add(f"sp500:leave:{t}:{vt}", vt, f"{who} left the S&P 500 index",
                f"{who} was removed from the S&P 500 index.", "index_leave", ent, vf, vt)
    b.add(_frame(rows, len(rows["doc_id"])))


def _changes_docs(df: pd.DataFrame, b: _Builder, names: Mapping[str, str]) -> None:
    _require(df, ["date", "add", "remove"], "sp500_changes")
    df = df.reset_index(drop=True)
    days, ok = b.dated("sp500", df["date"])
    rows: dict[str, list] = {c: [] for c in CORPUS_COLUMNS}

    def split(cell: Any) -> list[str]:
        return [] if is_blank(cell) else [normalize_ticker(t) for t in str(cell).split(",") if t.strip()]

    for i in np.flatnonzero(ok):
        adds, removes = split(df["add"].iloc[i]), split(df["remove"].iloc[i])
        if not adds and not removes:
            b.exclude("sp500", "empty_change", 1)
            continue
        parts = []
        if adds:
            parts.append("added " + ", ".join(_named(t, names) for t in adds))
        if removes:
            parts.append("removed " + ", ".join(_named(t, names) for t in removes))
        title = "S&P 500 index change: " + "; ".join(parts)
        vals = (f"sp500:change:{days[i]}:{_h(','.join(adds), ','.join(removes), n=8)}", days[i], title,
                title + ".", "sp500", "index_change",
                json.dumps([entity_key("ticker", t) for t in adds + removes]), None, None, None)
        for c, v in zip(CORPUS_COLUMNS, vals):
            rows[c].append(v)
    b.add(_frame(rows, len(rows["doc_id"])))


_EVENTS = (
    ("granted_date", "case_granted", "granted", "The Supreme Court granted review in {name}"),
    ("argued_date", "case_argued", "argued", "The Supreme Court heard oral argument in {name}"),
    ("decided_date", "case_decided", "decided", "The Supreme Court decided {name}"),
)


def _oyez_docs(df: pd.DataFrame, b: _Builder) -> None:
    _require(df, ["term", "docket", "name", "granted_date", "argued_date", "decided_date"], "oyez")
    df = df.reset_index(drop=True)
    name, docket = _col(df, "name", ""), _col(df, "docket", "")
    dkey = _col(df, "docket_key").where(_col(df, "docket_key").notna(), docket)
    pet, resp = _col(df, "petitioner", ""), _col(df, "respondent", "")
    question, lower = _col(df, "question", ""), _col(df, "lower_court", "")
    outcome = _col(df, "oyez_outcome")
    rows: dict[str, list] = {c: [] for c in CORPUS_COLUMNS}
    for col, kind, tag, template in _EVENTS:
        days, ok = b.dated("oyez", df[col])
        for i in np.flatnonzero(ok):
            nm = str(name[i])
            title = template.format(name=nm)
            if kind == "case_granted":
                text = str(question[i] or "")[:400]
            elif kind == "case_argued":
                text = f"{pet[i] or 'The petitioner'} v. {resp[i] or 'the respondent'}" + (f", on review from the {lower[i]}." if lower[i] else ".")
            else:
                side = outcome[i]
                who = pet[i] if side == "petitioner" else resp[i] if side == "respondent" else None
                text = f"The Court ruled for the {side}, {str(who or '').rstrip('.')}." if side in ("petitioner", "respondent") else ""
            ents = [entity_key("case", nm)] + ([entity_key("docket", dkey[i])] if dkey[i] else [])
            vals = (f"oyez:{df['term'].iloc[i]}:{docket[i]}:{tag}", days[i], title, text, "oyez", kind, json.dumps(ents), None, None, None)
            for c, v in zip(CORPUS_COLUMNS, vals):
                rows[c].append(v)
    b.add(_frame(rows, len(rows["doc_id"])))


def _signing_docs(df: pd.DataFrame, b: _Builder, source: str) -> None:
    _require(df, ["player", "signing_date"], source)
    df = df.reset_index(drop=True)
    days, ok = b.dated(source, df["signing_date"])
    player, team = _col(df, "player", ""), _col(df, "team")
    league = _col(df, "league", source.upper())
    years, total, aav = _col(df, "years"), _col(df, "total_value"), _col(df, "aav")
    re_sign = _col(df, "re_signing")
    rows: dict[str, list] = {c: [] for c in CORPUS_COLUMNS}
    for i in np.flatnonzero(ok):
        p = str(player[i])
        with_team = f"the {team[i]}" if not is_blank(team[i]) else "a new team"
        y = None if is_blank(years[i]) else int(years[i])
        terms = f"{y} year{'s' if y != 1 else ''}, " if y is not None else ""
        title = f"{p} signed with {with_team}: {terms}{_money(total[i])}"
        verb = "re-signed with" if re_sign[i] is True else "signed with"
        text = f"{league[i]}: {p} {verb} {with_team}" + (f" on a {y}-year contract" if y is not None else "")
        text += f" worth {_money(total[i])}" + (f" ({_money(aav[i])} per year)." if not is_blank(aav[i]) else ".")
        vals = (f"{source}:signing:{_h(p, days[i], team[i], total[i])}", days[i], title, text, source, "signing",
                json.dumps([entity_key("player", p)]), None, None, None)
        for c, v in zip(CORPUS_COLUMNS, vals):
            rows[c].append(v)
    b.add(_frame(rows, len(rows["doc_id"])))


def _question_text(q: Any, due: Any, res: str) -> str:
    s = "" if is_blank(q) else str(q)
    s = s.replace("{resolution_date}", res).replace("{forecast_due_date}", "" if is_blank(due) else str(due)[:10])
    s = s.strip().split("\n\n")[0]
    return " ".join(s.split())[:300]


def _forecast_docs(df: pd.DataFrame, b: _Builder) -> None:
    _require(df, ["question_id", "question", "resolution_date", "resolved_to"], "forecastbench")
    df = df.reset_index(drop=True)
    days, ok = b.dated("forecastbench", df["resolution_date"])
    resolved = _col(df, "resolved", True).map(lambda v: True if v is None else bool(v))
    to = pd.to_numeric(df["resolved_to"], errors="coerce")
    unresolved = ok & (~resolved.to_numpy(dtype=bool) | to.isna().to_numpy())
    b.exclude("forecastbench", EXCLUDE_UNRESOLVED, int(unresolved.sum()))
    qid, src, due = _col(df, "question_id", ""), _col(df, "source", ""), _col(df, "forecast_due_date")
    questions = _col(df, "question", "").tolist()
    rows: dict[str, list] = {c: [] for c in CORPUS_COLUMNS}
    for i in np.flatnonzero(ok & ~unresolved):
        v = float(to.iloc[i])
        outcome = "YES" if v == 1.0 else "NO" if v == 0.0 else f"at {v:g}"
        q = _question_text(questions[i], due[i], days[i])
        title = f"{q} resolved {outcome}"
        text = f"ForecastBench question ({src[i]}) resolved {outcome}."
        ents = [entity_key("question", qid[i])]
        if src[i] == "yfinance" and qid[i]:
            ents.append(entity_key("ticker", qid[i]))
        vals = (f"forecastbench:{_h(qid[i], days[i], n=16)}", days[i], title, text, "forecastbench", "resolution",
                json.dumps(ents), None, None, None)
        for c, val in zip(CORPUS_COLUMNS, vals):
            rows[c].append(val)
    b.add(_frame(rows, len(rows["doc_id"])))


def _price_docs(df: pd.DataFrame, b: _Builder, names: Mapping[str, str]) -> None:
    _require(df, ["ticker", "date", "close"], "prices")
    cols = ["ticker", "date", "close"] + [c for c in ("adj_close", "high", "low") if c in df.columns]
    px = df[cols].reset_index(drop=True).copy()
    if pd.api.types.is_datetime64_any_dtype(px["date"].dtype):
        ok = px["date"].notna().to_numpy()
        b.exclude("yahoo", EXCLUDE_MISSING_DATE, int((~ok).sum()))
        dates = px["date"].dt.tz_localize(None) if getattr(px["date"].dt, "tz", None) is not None else px["date"]
        px = px.loc[ok].copy()
        px["date"] = dates[ok].dt.normalize()
    else:
        days, ok = b.dated("yahoo", px["date"])
        px = px.loc[ok].copy()
        px["date"] = pd.to_datetime(days[ok].to_numpy(dtype=str), format="%Y-%m-%d")
    px = px.dropna(subset=["close"])
    if px.empty:
        return
    if "adj_close" not in px.columns:
        px["adj_close"] = px["close"]
    px["adj_close"] = px["adj_close"].fillna(px["close"])
    spelled = {t: normalize_ticker(t) for t in px["ticker"].unique()}
    px["ticker"] = px["ticker"].map(spelled)
    px["month"] = px["date"].dt.to_period("M")
    px = px.sort_values(["ticker", "date"], kind="mergesort")
    g = px.groupby(["ticker", "month"], sort=True)
    agg = g.agg(last_day=("date", "max"), close=("close", "last"), adj=("adj_close", "last"), n=("close", "size"))
    if "high" in px.columns and "low" in px.columns:
        agg["high"] = g["high"].max()
        agg["low"] = g["low"].min()
    agg = agg.reset_index()
    # The data's last month is incomplete unless it reaches the month's last business day.
    last = px["date"].max()
    if last < (last + pd.offsets.BMonthEnd(0)).normalize():
        partial = agg["month"] == last.to_period("M")
        b.exclude("yahoo", EXCLUDE_PARTIAL_MONTH, int(partial.sum()))
        agg = agg.loc[~partial].reset_index(drop=True)
    prev_adj = agg.groupby("ticker")["adj"].shift(1)
    prev_month = agg.groupby("ticker")["month"].shift(1)
    consecutive = np.array([not is_missing_scalar(pm) and (m - pm).n == 1 for m, pm in zip(agg["month"], prev_month)], dtype=bool)
    ret = np.where(consecutive, agg["adj"].to_numpy() / prev_adj.to_numpy() - 1.0, np.nan)
    has_range = "high" in agg.columns
    tickers = agg["ticker"].astype(str).tolist()
    months = [m.strftime("%B %Y") for m in agg["month"]]
    month_keys = [m.strftime("%Y-%m") for m in agg["month"]]
    closes = agg["close"].astype(float).tolist()
    last_days = agg["last_day"].dt.strftime("%Y-%m-%d").tolist()
    highs = agg["high"].astype(float).tolist() if has_range else [math.nan] * len(agg)
    lows = agg["low"].astype(float).tolist() if has_range else [math.nan] * len(agg)
    rows: dict[str, list] = {c: [] for c in CORPUS_COLUMNS}
    for i, t in enumerate(tickers):
        month, close, r = months[i], closes[i], float(ret[i])
        who = _named(t, names)
        title = f"{t} closed {month} at ${close:,.2f}" + (f", month return {r * 100:+.1f}%" if not math.isnan(r) else "")
        text = f"{who} shares closed {month} at ${close:,.2f}"
        text += f", a {r * 100:+.1f}% return for the month" if not math.isnan(r) else ""
        if not (math.isnan(highs[i]) or math.isnan(lows[i])):
            text += f"; the month's range was ${lows[i]:,.2f} to ${highs[i]:,.2f}"
        text += "."
        vals = (f"yahoo:{t}:{month_keys[i]}", last_days[i], title, text, "yahoo", "price_month",
                json.dumps([entity_key("ticker", t)]), None, None, None)
        for c, v in zip(CORPUS_COLUMNS, vals):
            rows[c].append(v)
    b.add(_frame(rows, len(rows["doc_id"])))


# ---------------------------------------------------------------------------------------------
# public entry point
# ---------------------------------------------------------------------------------------------

#: Table keys :func:`build_corpus` understands.
KNOWN_TABLES = ("news", "edgar", "sp500_membership", "sp500_changes", "sp500_sectors", "oyez", "nba", "nhl", "forecastbench", "prices")


def corpus_tables(used: Iterable[str], *, news: bool) -> dict[str, str]:
    """The raw tables (``{key of KNOWN_TABLES: workflow path}``) the corpus is built from, given the
    paths the configured tasks read (their dataset and grounding inputs): a source enters the corpus
    only when a configured task uses it, and the dated news (no live archive) only when ``news``."""
    paths = {
        "edgar": source_table("edgar"),
        "sp500_membership": SP500_MEMBERSHIP,
        "sp500_changes": SP500_CHANGES,
        "sp500_sectors": SP500_SECTORS,
        "oyez": source_table("oyez"),
        "nba": source_table("nba"),
        "nhl": source_table("nhl"),
        "forecastbench": source_table("forecastbench"),
        "prices": PRICES,
    }
    used = set(used)
    out = {key: path for key, path in paths.items() if path in used}
    if news:
        out["news"] = source_table("news")
    return out


def build_corpus(
    tables: Mapping[str, pd.DataFrame],
    *,
    cik_tickers: Mapping[int, tuple[str, ...] | list[str] | str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Build the dated document table, the entity-validity table and a build report.

    Parameters
    ----------
    tables:
        Any subset of :data:`KNOWN_TABLES` (see the module docstring for each table's columns
        and documents). Unknown keys raise ``ValueError``.
    cik_tickers:
        EDGAR CIK -> ticker(s) for the ``entities`` of EDGAR documents; defaults to
        :data:`DEFAULT_CIK_TICKERS` (companies of the shared snapshot).

    Returns
    -------
    ``(corpus, entities, report)``: ``corpus`` with :data:`CORPUS_COLUMNS`, sorted by
    ``published_at, doc_id``; ``entities`` with :data:`ENTITY_COLUMNS`; ``report`` (JSON-safe)
    with ``documents``, ``by_source``, ``by_kind``, ``by_source_kind``, ``restatement_links``,
    ``excluded_by_reason`` (totals), ``excluded_by_source`` ({source: {reason: n}}),
    ``entities`` (validity rows), ``first_day``/``last_day``, ``tables`` (input rows) and
    ``build_seconds``.

    Raises:
        ValueError: an unknown table key, or a table without a column its documents need.
    """
    t0 = time.perf_counter()
    unknown = sorted(set(tables) - set(KNOWN_TABLES))
    if unknown:
        raise ValueError(f"build_corpus: unknown table(s) {', '.join(unknown)}; known: {', '.join(KNOWN_TABLES)}")
    tickers_by_cik: dict[int, tuple[str, ...]] = {}
    for k, v in (cik_tickers if cik_tickers is not None else DEFAULT_CIK_TICKERS).items():
        tickers_by_cik[int(k)] = (v,) if isinstance(v, str) else tuple(v)
    b = _Builder()
    names = _company_names(tables.get("sp500_sectors"))
    entity_rows: list[dict] = []
    builders: dict[str, Callable[[pd.DataFrame], None]] = {
        "news": lambda d: _news_docs(d, b),
        "edgar": lambda d: _edgar_docs(d, b, tickers_by_cik),
        "sp500_membership": lambda d: _membership_docs(d, b, names, entity_rows),
        "sp500_changes": lambda d: _changes_docs(d, b, names),
        "oyez": lambda d: _oyez_docs(d, b),
        "nba": lambda d: _signing_docs(d, b, "nba"),
        "nhl": lambda d: _signing_docs(d, b, "nhl"),
        "forecastbench": lambda d: _forecast_docs(d, b),
        "prices": lambda d: _price_docs(d, b, names),
    }
    for key in KNOWN_TABLES:
        if key in builders and tables.get(key) is not None:
            builders[key](tables[key])
            log.info("corpus: %s done (%d frames)", key, len(b.frames))
    corpus = pd.concat(b.frames, ignore_index=True) if b.frames else _frame({}, 0)
    dup = corpus["doc_id"].duplicated(keep="first")
    for src, n in corpus.loc[dup, "source"].value_counts().items():
        b.exclude(str(src), EXCLUDE_DUPLICATE, int(n))
    corpus = corpus.loc[~dup].sort_values(["published_at", "doc_id"], kind="mergesort").reset_index(drop=True)
    for col in CORPUS_COLUMNS:
        corpus[col] = corpus[col].astype(object)
    # A restatement link must point at a document of the corpus.
    if corpus["restates"].notna().any():
        present = set(corpus["doc_id"])
        dangling = corpus["restates"].notna() & ~corpus["restates"].isin(present)
        if dangling.any():
            b.exclude("edgar", "restates_target_missing", int(dangling.sum()))
            corpus.loc[dangling, "restates"] = None
    entities = pd.DataFrame(entity_rows, columns=ENTITY_COLUMNS).astype(object)
    entities = entities.where(entities.notna(), None)
    excluded_total: Counter = Counter()
    for c in b.excluded.values():
        excluded_total.update(c)
    report: dict[str, Any] = {
        "documents": int(len(corpus)),
        "by_source": {str(k): int(v) for k, v in corpus["source"].value_counts().sort_index().items()},
        "by_kind": {str(k): int(v) for k, v in corpus["kind"].value_counts().sort_index().items()},
        "by_source_kind": {
            f"{s}/{k}": int(v) for (s, k), v in corpus.groupby(["source", "kind"]).size().sort_index().items()
        },
        "restatement_links": int(corpus["restates"].notna().sum()),
        "excluded_by_reason": {k: int(v) for k, v in sorted(excluded_total.items())},
        "excluded_by_source": {s: {k: int(v) for k, v in sorted(c.items())} for s, c in sorted(b.excluded.items())},
        "entities": int(len(entities)),
        "first_day": None if corpus.empty else str(corpus["published_at"].iloc[0]),
        "last_day": None if corpus.empty else str(corpus["published_at"].iloc[-1]),
        "tables": {k: int(len(v)) for k, v in tables.items() if v is not None},
        **b.extra,
        "build_seconds": round(time.perf_counter() - t0, 3),
    }
    return corpus, entities, report
