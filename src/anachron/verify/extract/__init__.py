"""The two claim extractors; both return :class:`~anachron.verify.taxonomy.Claim` lists.

* :func:`extract_claims` (:mod:`~anachron.verify.extract.rules`; deterministic, no model):
  every evidence item, plus each reasoning sentence that carries a date, a number or a named
  event;
* :func:`extract_claims_llm` (:mod:`~anachron.verify.extract.llm`; a model, batched), with the
  deterministic extractor as fallback.

Both categorise claims with :func:`~anachron.verify.categorize.categorize`.
"""

from __future__ import annotations

from anachron.verify.extract.llm import extract_claims_llm
from anachron.verify.extract.rules import extract_claims

__all__ = ["extract_claims", "extract_claims_llm"]
