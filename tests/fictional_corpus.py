"""A small fictional date-stamped corpus and in-test fakes for RAG and trace-metric tests.

Every company, ticker, figure and headline here is invented. The corpus follows the
retrieval corpus layout (doc_id, published_at, title, text, source, kind, entities,
valid_from, valid_to, restates); the fakes follow the SearchBackend / EntityValidity
interfaces of ``anachron.retrieval.search`` so the tests do not depend on a BM25 index.
The model is the mock provider with a script (:func:`scripted_provider`).

Worked examples (cutoffs in brackets):
* Cygnet Robotics (CYGR) IPO on 2023-02-09 [2022-06-01]: its two documents are dated after
  the cutoff, and the company was not listed yet -> TCLR and survivorship unrestricted,
  nothing under the date filter.
* Boreal Mining (BRML) delisted 2019-11-05 [2020-06-01]: both documents predate the cutoff,
  yet the company is no longer listed -> survivorship in both modes, TCLR never.
* Dunmore Pharma (DNMP) Q4 2020 revenue $412M (2021-02-04), restated to $377M on 2021-09-17
  [2021-06-01] -> restatement (and TCLR) when the revision is consumed unrestricted, none
  under the filter.
* Eskerfield Foods (ESKF) results published exactly on the cutoff day [2020-03-02] -> no leak;
  a note one day later (2020-03-03) leaks when unrestricted.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Callable

import pandas as pd

from anachron.llm.providers import MockProvider
from anachron.llm.types import ChatRequest, ChatResult, ModelSpec

from anachron.retrieval.search import EntityValidity, SearchError, SearchHit, validity_index


CORPUS_COLUMNS = ["doc_id", "published_at", "title", "text", "source", "kind", "entities", "valid_from", "valid_to", "restates"]


def _doc(doc_id, published_at, title, text, entities, restates=None, kind="news"):
    return {
        "doc_id": doc_id, "published_at": published_at, "title": title, "text": text, "source": "fiction",
        "kind": kind, "entities": json.dumps(entities), "valid_from": None, "valid_to": None, "restates": restates,
    }


CORPUS = pd.DataFrame(
    [
        _doc("cyg-1", "2023-02-09", "Cygnet Robotics prices initial public offering",
             "Cygnet Robotics sold shares at 18 dollars in its debut on the exchange.", ["ticker:cygr"]),
        _doc("cyg-2", "2024-05-22", "Cygnet Robotics warehouse robot orders double",
             "Cygnet Robotics said orders for its warehouse robots doubled.", ["ticker:cygr"]),
        _doc("bor-1", "2019-03-14", "Boreal Mining copper output rises",
             "Boreal Mining reported higher copper output at its northern pit.", ["ticker:brml"]),
        _doc("bor-2", "2019-11-05", "Boreal Mining removed from the index after bankruptcy filing",
             "Boreal Mining shares were removed from the index after the miner filed for bankruptcy.", ["ticker:brml"]),
        _doc("dnm-1", "2021-02-04", "Dunmore Pharma fourth quarter revenue 412 million",
             "Dunmore Pharma reported fourth quarter revenue of 412 million dollars.", ["ticker:dnmp"]),
        _doc("dnm-2", "2021-09-17", "Dunmore Pharma restates fourth quarter revenue to 377 million",
             "Dunmore Pharma restated fourth quarter revenue to 377 million dollars after an audit.", ["ticker:dnmp"],
             restates="dnm-1"),
        _doc("esk-1", "2020-03-02", "Eskerfield Foods annual results beat estimates",
             "Eskerfield Foods annual results showed snack sales up nine percent.", ["ticker:eskf"]),
        _doc("esk-2", "2020-03-03", "Eskerfield Foods analyst note after results",
             "An analyst raised the Eskerfield Foods target after the results.", ["ticker:eskf"]),
    ],
    columns=CORPUS_COLUMNS,
)

#: Point-in-time validity (listing spells) of the fictional tickers; ESKF and DNMP are always listed.
ENTITIES = pd.DataFrame(
    [
        {"entity": "ticker:cygr", "valid_from": "2023-02-09", "valid_to": None, "source": "fiction"},
        {"entity": "ticker:brml", "valid_from": "2004-01-02", "valid_to": "2019-11-05", "source": "fiction"},
    ]
)


def FakeValidity(entities: pd.DataFrame = ENTITIES) -> EntityValidity:
    """The listing spells of :data:`ENTITIES` as the retrieval package's validity table
    (valid_from <= day < valid_to; entities not listed are always valid)."""
    return validity_index(entities)


def _tokens(s: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", s.lower()))


class FakeSearch:
    """Token-overlap search over a corpus table with the SearchBackend interface.

    ``as_of`` keeps documents published on or before that day. ``fail_on``: queries
    containing this word raise :class:`SearchError`. Every call is recorded in ``calls``.
    """

    def __init__(self, corpus: pd.DataFrame = CORPUS, fail_on: str | None = None):
        self.corpus = corpus
        self.fail_on = fail_on
        self.calls: list[tuple[str, int, dt.date | None]] = []

    def search(self, query: str, *, k: int = 5, as_of: dt.date | None = None) -> list[SearchHit]:
        self.calls.append((query, k, as_of))
        if self.fail_on and self.fail_on in query:
            raise SearchError("fake backend: service unavailable (HTTP 503)")
        q = _tokens(query)
        if not q:
            return []
        scored = []
        for r in self.corpus.itertuples(index=False):
            if as_of is not None and dt.date.fromisoformat(r.published_at) > as_of:
                continue
            score = len(q & _tokens(f"{r.title} {r.text}"))
            if score:
                scored.append((-score, r.doc_id, r))
        scored.sort(key=lambda t: (t[0], t[1]))
        return [
            SearchHit(doc_id=r.doc_id, title=r.title, snippet=r.text, published_at=r.published_at, score=float(-s),
                      source=r.source, entities=tuple(json.loads(r.entities)),
                      restates=r.restates if isinstance(r.restates, str) else None)
            for s, _, r in scored[:k]
        ]


VALID_OUTPUT = {"evidence": [{"id": 1, "fact": "A fact.", "source_date": "2019-01-02"}], "reasoning": "See [1].",
                "prediction": None}


def scripted_answer(queries: Callable[[str], str | None], prediction: Callable[[str], object]):
    """A mock-provider script: query-generation calls get ``queries(instance_id)`` (``None``
    gives a provider error), generation calls a valid output with ``prediction(instance_id)``."""

    def answer(request: ChatRequest) -> str | ChatResult:
        iid, step = request.tag["instance_id"], request.tag["step"]
        if step == "queries":
            text = queries(iid)
            return ChatResult(error="APIError: upstream timeout") if text is None else text
        return json.dumps(dict(VALID_OUTPUT, prediction=prediction(iid)))

    return answer


def scripted_provider(
    spec: ModelSpec, queries: Callable[[str], str | None], prediction: Callable[[str], object]
) -> MockProvider:
    """The mock provider of ``spec`` answering with :func:`scripted_answer`; every request is
    kept in ``requests``."""
    return MockProvider(spec, answers=scripted_answer(queries, prediction))


def stock_row(instance_id: str, cutoff: str, companies: list[tuple[str, str]], split: str = "eval") -> dict:
    """A stock instance row (fictional companies, ``(ticker, name)`` pairs)."""
    inputs = {"sector": "Industrials", "start_date": cutoff, "end_date": "2099-01-01",
              "companies": [{"ticker": t, "name": n} for t, n in companies]}
    return {"instance_id": instance_id, "task": "stock", "split": split, "cutoff_date": cutoff,
            "inputs": json.dumps(inputs), "label": json.dumps({"ranking": [t for t, _ in companies]}),
            "provenance": "{}"}


def query_json(*queries: str) -> str:
    """A model answer listing ``queries`` in the requested JSON shape."""
    return json.dumps([{"query": q} for q in queries])
