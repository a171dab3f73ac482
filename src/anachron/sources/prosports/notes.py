"""Transaction notes of prosportstransactions.com: which are contract signings, and their terms."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from anachron.frames import text_or_empty
from anachron.money import scan_money
from anachron.sources.prosports.skips import (
    SKIP_AMBIGUOUS_AMOUNT,
    SKIP_CLAIMED,
    SKIP_CONVERSION,
    SKIP_DRAFT_PICK,
    SKIP_EXHIBIT,
    SKIP_EXTENSION,
    SKIP_FA_STATUS,
    SKIP_GUARANTEE,
    SKIP_IMPLAUSIBLE,
    SKIP_NO_AMOUNT,
    SKIP_NO_YEARS,
    SKIP_NOT_CONTRACT,
    SKIP_OPTION,
    SKIP_OTHER_LEAGUE,
    SKIP_QUALIFYING_OFFER,
    SKIP_RELEASED,
    SKIP_REST_OF_SEASON,
    SKIP_RETIRED,
    SKIP_TEN_DAY,
    SKIP_TWO_WAY,
    SKIP_WAIVED,
)
from anachron.sources.prosports.teams import canonical_team

#: ``kind`` of a note that is a contract signing (:class:`ParsedNote`).
CONTRACT = "contract"

#: Ordered rules: the first pattern that matches a note names its skip reason.
_SKIP_RULES: list[tuple[str, re.Pattern[str]]] = [
    (SKIP_TWO_WAY, re.compile(r"two[- ]way", re.I)),
    (SKIP_TEN_DAY, re.compile(r"\b(?:10|ten)[- ]day\b", re.I)),
    (SKIP_REST_OF_SEASON, re.compile(r"remainder of (?:the )?season|rest[- ]of[- ](?:the[- ])?season", re.I)),
    (SKIP_EXHIBIT, re.compile(r"\bexhibit\s*\d+|\bsummer contract\b|\btraining camp\b", re.I)),
    (SKIP_QUALIFYING_OFFER, re.compile(r"qualifying offer", re.I)),
    (SKIP_CLAIMED, re.compile(r"claimed off waivers", re.I)),
    (SKIP_WAIVED, re.compile(r"\bwaived\b", re.I)),
    (SKIP_RELEASED, re.compile(r"\breleased\b|\bbought out\b", re.I)),
    (SKIP_OPTION, re.compile(r"\b(?:exercised|declined|picked up)\b.*\boption\b", re.I)),
    (SKIP_GUARANTEE, re.compile(r"^team (?:partially |fully )?guaranteed\b", re.I)),
    (
        SKIP_FA_STATUS,
        re.compile(
            r"became (?:an? )?(?:unrestricted |restricted )?free agent|\brenounced\b|lost restricted free agent", re.I
        ),
    ),
    (SKIP_RETIRED, re.compile(r"\bretire", re.I)),
    (SKIP_OTHER_LEAGUE, re.compile(r"^signed (?:with|by)\b", re.I)),
    (SKIP_DRAFT_PICK, re.compile(r"round pick|\bundrafted\b|\bdraft pick\b|\brookie scale\b", re.I)),
    (SKIP_EXTENSION, re.compile(r"\bextension\b", re.I)),
    (SKIP_CONVERSION, re.compile(r"^convert", re.I)),
]
_SIGNED = re.compile(r"^\s*(?P<re>re-?)?signed\b", re.I)
_YEARS = re.compile(r"\b(?P<years>\d{1,2})(?:/\d{1,2})?[- ]years?\b", re.I)
#: "#36M": a typo on the site for "$36M".
_HASH_DOLLAR = re.compile(r"#(?=\s?\d)")
#: A figure whose separators :func:`anachron.money.read_number` refuses ("$22,5M", "$1.2.3M").
_AMBIGUOUS_AMOUNT = re.compile(r"[$#]\s?\d+(?:,\d{1,2}(?!\d)|,\d{4,}|\.\d+[.,]\d)")
#: Between the two ends of a range ("$70-72M", "$3/5M").
_RANGE_SEP = re.compile(r"\s*[-/]\s*")
#: A second figure after a slash ("$3M/$5M", "$3M / 2 years, $5M").
_SECOND_FIGURE = re.compile(r"\s*/\s*(?:\d+[- ]years?,?\s*)?\$")
#: A note (or a contract list's source link) that states a sign-and-trade.
SIGN_AND_TRADE_RE = re.compile(r"sign(?:ed)?[- ]and[- ]trade(?:d)?", re.I)
_SNT_TEAM = re.compile(
    r"sign(?:ed)?[- ]and[- ]trade(?:d)?\s+(?:with|to)\s+(?:the\s+)?(?P<team>[0-9]*[A-Z][A-Za-z0-9]*(?:\s+[A-Z][A-Za-z]+)?)"
)
_UNRESTRICTED = re.compile(r"\bunrestricted free agent", re.I)
_RESTRICTED = re.compile(r"(?<!un)restricted free agent", re.I)
#: A note of an acquisition ("signed ...", "claimed ..."), not a trade.
ACQUISITION_RE = re.compile(r"^\s*(?:signed|claimed)\b", re.I)

#: Plausible bounds of a contract (USD, years).
MIN_TOTAL_VALUE = 100_000.0
MAX_YEARS = 10


@dataclass(frozen=True)
class ParsedNote:
    """What one transaction note says.

    Attributes:
        kind: :data:`CONTRACT` or a skip-reason code (``two_way``, ``waived``, ...).
        years: contract length (contracts only).
        total_value: total value in USD (contracts only); for a range ("$70-72M") or two
            figures ("$73M / $78M", base / with incentives or option) the first, lower one.
        status: "unrestricted" / "restricted" when the note names it, else None.
        re_signing: the note reads "re-signed".
        sign_and_trade: the note states a sign-and-trade.
        sign_and_trade_team: the other team named with the sign-and-trade, if any.
        value_rule: "exact", or "first of several figures" when the note gives a range or
            alternatives.
    """

    kind: str
    years: int | None = None
    total_value: float | None = None
    status: str | None = None
    re_signing: bool = False
    sign_and_trade: bool = False
    sign_and_trade_team: str | None = None
    value_rule: str | None = None

    @property
    def is_contract(self) -> bool:
        return self.kind == CONTRACT


def parse_money(text: str) -> tuple[float, bool] | None:
    """The first dollar amount in ``text`` in USD, and whether it was one of several figures.

    "$136.5M" -> 136_500_000; "$898K" -> 898_000; "$1,620,564" -> 1_620_564;
    "$70-72M" and "$3/5M" take the lower bound (a range: flag True); so does "$3M/$5M" (the
    first figure). "#36M" (a typo on the site) reads as "$36M". Amounts are read by
    :func:`anachron.money.scan_money`; one with ambiguous separators is not an amount. Returns
    None when no amount is present.
    """
    text = _HASH_DOLLAR.sub("$", text)
    amounts = scan_money(text)
    for i, m in enumerate(amounts):
        if not (m.currency_before and m.currency == "USD"):
            continue
        nxt = amounts[i + 1] if i + 1 < len(amounts) else None
        if m.unit is None and nxt is not None and not nxt.currency_after and _RANGE_SEP.fullmatch(text[m.end : nxt.start]):
            return m.value * nxt.scale, True  # a range: the lower bound, in the upper bound's unit
        return m.value, bool(_SECOND_FIGURE.match(text, m.end))
    return None


def parse_note(note: Any) -> ParsedNote:
    """Classify one prosportstransactions note; parse it when it is a contract signing.

    A contract is a note that starts with "signed"/"re-signed" and states a length in
    years and a dollar amount before the word "contract", e.g.
    "signed unrestricted free agent to a 4-year $136.5M contract" or
    "re-signed restricted free agent to a 3-year, $10M contract". Everything else gets a
    skip code, tested in this order: two-way, 10-day, rest-of-season, Exhibit 9/10 or camp
    deals, qualifying offers, waiver claims, waivers, releases, option decisions,
    guarantees, free-agent status changes, retirements, signings abroad, draft-pick and
    rookie deals, extensions, conversions; then signings without years (``no_years``) or
    without an amount (``no_amount``) or with one whose separators are ambiguous
    (``ambiguous_amount``: "$22,5M"), implausible amounts (total under $100K, over 10
    years) and any other note (``not_a_contract``).

    Never raises; a missing or blank note is ``not_a_contract``.
    """
    text = text_or_empty(note).strip()
    if not text:
        return ParsedNote(SKIP_NOT_CONTRACT)
    status = "unrestricted" if _UNRESTRICTED.search(text) else "restricted" if _RESTRICTED.search(text) else None
    snt = bool(SIGN_AND_TRADE_RE.search(text))
    snt_team_m = _SNT_TEAM.search(text)
    snt_team = canonical_team(snt_team_m["team"]) if snt_team_m else None
    signed = _SIGNED.match(text)
    re_signing = bool(signed and signed["re"])
    for reason, pattern in _SKIP_RULES:
        if pattern.search(text):
            return ParsedNote(reason, status=status, re_signing=re_signing, sign_and_trade=snt)
    if signed is None:
        return ParsedNote(SKIP_NOT_CONTRACT, status=status, sign_and_trade=snt)
    ym = _YEARS.search(text)
    if ym is None:
        return ParsedNote(SKIP_NO_YEARS, status=status, re_signing=re_signing, sign_and_trade=snt)
    years = int(ym["years"])
    end = text.lower().find("contract", ym.end())
    segment = text[ym.end() : end if end != -1 else len(text)]
    money = parse_money(segment)
    if money is None:
        reason = SKIP_AMBIGUOUS_AMOUNT if _AMBIGUOUS_AMOUNT.search(segment) else SKIP_NO_AMOUNT
        return ParsedNote(reason, years=years, status=status, re_signing=re_signing, sign_and_trade=snt)
    value, several = money
    if not (1 <= years <= MAX_YEARS) or value < MIN_TOTAL_VALUE:
        return ParsedNote(SKIP_IMPLAUSIBLE, years=years, total_value=value, status=status, re_signing=re_signing)
    return ParsedNote(
        CONTRACT,
        years=years,
        total_value=value,
        status=status,
        re_signing=re_signing,
        sign_and_trade=snt,
        sign_and_trade_team=snt_team,
        value_rule="first of several figures" if several else "exact",
    )
