"""The words of a company-figure claim: the concept family it names, and what makes it no stated figure.

:data:`FAMILIES` maps keywords to XBRL concepts (revenue, net income, EPS, ...); :data:`FORWARD`
marks a forward-looking statement (not checked), :data:`EXPECTATION` a comparison with a forecast
(masked first), :data:`A_SHARE` a per-share amount and :data:`REPORT_WORDS` a claim about a report or
filing (category A3) (docs/verification.md#grounded; :mod:`anachron.verify.layers.edgar`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """A concept family: keywords that name it, its XBRL concepts (in preference order), kind."""

    name: str
    pattern: re.Pattern[str]
    concepts: tuple[str, ...]
    instant: bool = False
    per_share: bool = False


def _rx(p: str) -> re.Pattern[str]:
    return re.compile(p, re.I)


#: Concept families, most specific first; a family's match masks its span for the later ones.
FAMILIES: tuple[Family, ...] = (
    Family(
        "EPS",
        _rx(r"\b(?:(?:diluted|basic)\s+)?(?:EPS|earnings per (?:diluted |basic )?share|(?:net )?(?:income|profit|earnings|loss) per (?:diluted |basic )?share|per[- ]share (?:earnings|profit|loss))\b"),
        ("EarningsPerShareDiluted", "EarningsPerShareBasic", "EarningsPerShareBasicAndDiluted"),
        per_share=True,
    ),
    Family("operating income", _rx(r"\b(?:operating (?:income|profit|loss|earnings)|income from operations|(?:loss|losses) from operations)\b"), ("OperatingIncomeLoss",)),
    Family("gross profit", _rx(r"\bgross (?:profit|margin)s?\b"), ("GrossProfit",)),
    Family(
        "operating cash flow",
        _rx(r"\b(?:operating cash flows?|cash flows? from operati\w+|cash (?:provided by|generated (?:by|from)) operati\w+)\b"),
        ("NetCashProvidedByUsedInOperatingActivities",),
    ),
    Family(
        "capital expenditure",
        _rx(r"\b(?:capital expenditures?|capex|capital spending|(?:payments (?:to acquire|for)|purchases? of) property,? plant,? and equipment)\b"),
        ("PaymentsToAcquirePropertyPlantAndEquipment",),
    ),
    Family("R&D expense", _rx(r"(?:\bR&D\b|\bresearch and development\b)"), ("ResearchAndDevelopmentExpense",)),
    Family(
        "net income",
        _rx(r"\b(?:net (?:income|earnings|profit|loss)|earn(?:ed|s)|(?<!gross )(?<!operating )profits?|(?<!per share )earnings(?! (?:call|report|release|date|season|guidance)))\b"),
        ("NetIncomeLoss", "ProfitLoss", "NetIncomeLossAvailableToCommonStockholdersBasic"),
    ),
    Family(
        "revenue",
        _rx(r"\b(?:total |net )?(?:revenues?|sales|turnover|top[- ]line)\b"),
        (
            "Revenues",
            "RevenueFromContractWithCustomerExcludingAssessedTax",
            "SalesRevenueNet",
            "RevenueFromContractWithCustomerIncludingAssessedTax",
            "SalesRevenueGoodsNet",
        ),
    ),
    Family("total assets", _rx(r"\btotal assets\b"), ("Assets",), instant=True),
    Family("total liabilities", _rx(r"\btotal liabilities\b"), ("Liabilities",), instant=True),
    Family("stockholders' equity", _rx(r"\b(?:stockholders|shareholders)['’]? equity\b"), ("StockholdersEquity",), instant=True),
    Family(
        "cash",
        _rx(r"\bcash(?: and (?:cash )?equivalents)?\b(?!\s*flows?)(?! (?:provided|generated|from|dividends?))"),
        ("CashAndCashEquivalentsAtCarryingValue", "CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents"),
        instant=True,
    ),
)

#: Forward-looking words (guidance, expectations, estimates): such a claim states no reported figure.
FORWARD = _rx(
    r"\b(?:guidance|guided|guides|expect(?:s|ed|ing|ations?)?|forecast(?:s|ed|ing)?|outlook|projected|projects|projection|"
    r"anticipat\w+|estimates?|estimated|consensus|analysts?|will|would|target(?:s|ed)?|plans? to|aims? to|could|might)\b"
    r"|(?-i:\bmay\b)"
)
#: A reported figure compared with a forecast ("missed estimates", "beat consensus of $1.2B", "above
#: what analysts expected"): the comparison is masked before the forward-looking test, and a figure
#: right after it (the forecast's value) is not a stated figure.
EXPECTATION = _rx(
    r"\b(?:beat|beats|beating|miss|missed|misses|missing|top(?:s|ped|ping)?|exceed(?:s|ed|ing)?|surpass(?:es|ed|ing)?|"
    r"above|below|ahead\s+of|short\s+of|shy\s+of|in\s+line\s+with|better\s+than|worse\s+than|lagg?(?:ed|ing)?|"
    r"versus|vs\.?|compared\s+(?:with|to)|against|trail(?:s|ed|ing)?)\s+"
    r"(?:(?:the|its|their|own|analysts['’]?|Wall\s+Street(?:['’]s)?|the\s+Street(?:['’]s)?|market|average|"
    r"consensus|prior|previous|earlier|company|management(?:['’]s)?|FactSet|Refinitiv|Bloomberg|LSEG|Zacks)\s+)*"
    r"(?:estimates?|expectations?|consensus|forecasts?|guidance|projections?|targets?|"
    r"what\s+(?:analysts|Wall\s+Street|investors|the\s+market)\s+(?:had\s+)?(?:expected|forecast|projected|estimated|anticipated))"
    r"(?:\s+(?:of|for|at)\s+(?:about\s+|around\s+)?(?:US\s?\$|\$)\s?\d[\d,.]*(?:\s*(?:trillion|billion|million|bn|mn|[bmk]\b))?"
    r"(?:\s+(?:a|per)\s+share)?)?"
)
#: "a share" / "per diluted share" right after a value: a per-share amount.
A_SHARE = _rx(r"\s*(?:a|per)\s+(?:diluted\s+|basic\s+)?share\b")
#: Words of a report or filing: the claim's category is A3, else A2.
REPORT_WORDS = _rx(r"\b(?:reported|reports|reporting|filed|filing|10-K(?:/A)?|10-Q|annual report|quarterly report|announced|disclosed|posted|published)\b")
