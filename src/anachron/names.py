"""Who a claim names: people, companies and sports teams, by one set of rules.

The claim categoriser (the tasks' outcome rules, :meth:`anachron.tasks.base.Task.outcome_rule`)
and the grounded checks (:mod:`anachron.verify.layers.grounded`, the tasks' ``grounding`` modules)
both ask whether a claim names the instance's player, case, party, company or team; they
ask here, so the two layers cannot disagree about the same claim.

* A person or a case (:func:`name_in`): the full name anywhere, case-insensitive; with
  ``by_surname=True`` also the last name as a capitalised whole word of 4+ letters ("James"
  for "LeBron James"; "Jr."/"III" ignored: "Oubre" for "Kelly Oubre Jr.").
* One of the instance's companies (:func:`mentioned_tickers`): its ticker as an upper-case
  word, or the first distinctive word of its name, case-insensitive ("Marathon" for
  "Marathon Petroleum", "3M" for "3M Company"; also "ExxonMobil", "Conoco": :func:`name_forms`).
* Any S&P 500 company (:func:`company_mention`): its ticker, or its name without the
  corporate suffix, or a distinctive first word of 4+ letters (stricter: no instance
  context narrows the candidates).
* A team (:func:`team_in`, :func:`team_key`, :func:`teams_named`): any nickname or
  abbreviation of its franchise in :data:`TEAMS`, or its home city / region in :data:`CITIES`
  ("Houston" for the Rockets; a city with two franchises names both), as a case-sensitive
  whole word; a team the table does not know is matched by its name as written, or its last
  word.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Iterable

#: Name suffixes that are not a surname ("Gary Trent Jr." -> "Trent").
NAME_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv", "v"})
#: Words of a company name too generic to identify it ("The", "Inc.", "Holdings").
GENERIC_NAME_WORDS = frozenset(
    {"the", "inc", "inc.", "corp", "corp.", "corporation", "company", "co", "co.", "group", "holdings", "plc", "ltd"}
)
#: A surname matches alone only with at least this many letters.
MIN_SURNAME_CHARS = 4


@functools.lru_cache(maxsize=65_536)
def compile_cached(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, cached. ``re`` keeps only its last 512 patterns, fewer than
    the word patterns of the S&P 500 names a grounded check tries on every claim; past them each
    ``re.search(f"...")`` compiled its pattern again (~0.3 ms), for every claim."""
    return re.compile(pattern, flags)


def has_word(text: str, word: str, *, ignore_case: bool = False) -> bool:
    """True if ``word`` occurs in ``text`` as a whole word, i.e.
    ``re.search(rf"\\b{re.escape(word)}\\b", text, re.I if ignore_case else 0)`` matches.

    Same answer, cheaper when many words are tried on one text: a substring test rules out
    most words before any pattern runs (case-insensitively only when both strings are ASCII,
    where ``re.I`` folds exactly the ASCII letters), and patterns come from :func:`compile_cached`.
    """
    if ignore_case:
        if text.isascii() and word.isascii() and word.lower() not in text.lower():
            return False
    elif word not in text:
        return False
    return compile_cached(rf"\b{re.escape(word)}\b", re.I if ignore_case else 0).search(text) is not None


def has_symbol(text: str, symbol: str, before: str = "[A-Za-z0-9]") -> bool:
    """True if ``symbol`` occurs in ``text`` (case-sensitive) with no character of the class
    ``before`` just before it and no letter or digit just after it (a ticker as a word: "XOM"
    in "XOM fell", not in "XOMA"); a substring test first, then the cached pattern."""
    return symbol in text and compile_cached(rf"(?<!{before}){re.escape(symbol)}(?![A-Za-z0-9])").search(text) is not None


def surname(name: str) -> str:
    """The last word of ``name`` that is not a suffix ("Oubre" for "Kelly Oubre Jr."); "" for blank."""
    words = str(name or "").split()
    parts = [w for w in words if w.strip(".,").lower() not in NAME_SUFFIXES]
    return parts[-1] if parts else (words[-1] if words else "")


def name_in(text: str, name: Any, *, by_surname: bool = False) -> bool:
    """True if ``text`` names ``name``: in full (case-insensitive), or, with ``by_surname``,
    by its :func:`surname` as a capitalised whole word of :data:`MIN_SURNAME_CHARS`+ letters."""
    name = str(name or "").strip()
    if not name:
        return False
    if name.lower() in text.lower():
        return True
    last = surname(name)
    return by_surname and len(last) >= MIN_SURNAME_CHARS and has_word(text, last)


def names_in(text: str, names: Iterable[Any], *, by_surname: bool = False) -> bool:
    """True if ``text`` names any of ``names`` (:func:`name_in`)."""
    return any(name_in(text, n, by_surname=by_surname) for n in names)


def mentioned_tickers(text: str, tickers: list[str], names: list[str]) -> list[str]:
    """Tickers of the instance that ``text`` names, by ticker symbol or company name.

    A ticker matches as an upper-case whole word; a company name matches on its
    first distinctive word of two or more characters (case-insensitive), e.g. "Marathon" for
    "Marathon Petroleum", "3M" for "3M Company" (a word may start with a digit), "Smith" for
    "A. O. Smith" (single initials are skipped), or another of its :func:`name_forms`
    ("ExxonMobil", "Conoco"). ``tickers`` and ``names`` are paired in order; a ticker without
    a name is not looked for (:func:`ticker_mentions` gives the positions).
    """
    return list(ticker_mentions(text, tickers, names))


def name_forms(name: str) -> list[str]:
    """The forms a claim may name a company by, besides its ticker: the first distinctive word of
    ``name`` (2+ characters; generic words and initials skipped), its first two words written
    as one ("ExxonMobil" for "Exxon Mobil Corp."), and the head of a compound first word of 4+
    letters ("Conoco" for "ConocoPhillips"). Empty when the name has no distinctive word."""
    words = [w.rstrip(".") for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9&'.-]+", name or "") if w.lower() not in GENERIC_NAME_WORDS]
    # an initial ("A." of "A. O. Smith") names nothing on its own: "a" would match any article
    words = [w for w in words if len(w) >= 2]
    if not words:
        return []
    forms = [words[0]]
    if len(words) >= 2 and words[1][:1].isupper():
        forms.append(words[0] + words[1])
    head = re.match(r"[A-Z][a-z]{3,}(?=[A-Z][a-z])", words[0])
    if head:
        forms.append(head[0])
    return forms


def ticker_mentions(text: str, tickers: list[str], names: list[str]) -> dict[str, list[int]]:
    """Where ``text`` names each of the instance's tickers: ticker -> character offsets of its
    mentions, in the order of ``tickers``; tickers not named are left out. A ticker is named by
    its symbol as an upper-case whole word, or by a :func:`name_forms` of its name as a whole
    word (case-insensitive)."""
    symbols, forms = _mention_patterns(tuple(tickers), tuple(names))
    found: dict[str, set[int]] = {}
    for pattern, key in ((symbols, lambda m: m[0]), (forms, lambda m: m[0].lower())):
        if pattern is None:
            continue
        table = pattern[1]
        for m in pattern[0].finditer(text):
            for t in table[key(m)]:
                found.setdefault(t, set()).add(m.start())
    return {t: sorted(found[t]) for t in dict.fromkeys(t for t, _ in zip(tickers, names)) if t in found}


@functools.lru_cache(maxsize=4096)
def _mention_patterns(tickers: tuple[str, ...], names: tuple[str, ...]) -> tuple[Any, Any]:
    """The two patterns of :func:`ticker_mentions` for one instance: symbols (case-sensitive)
    and name forms (case-insensitive), each ``(compiled, text -> tickers)`` or None."""
    by_symbol: dict[str, list[str]] = {}
    by_form: dict[str, list[str]] = {}
    for t, name in zip(tickers, names):
        by_symbol.setdefault(t, []).append(t)
        for form in name_forms(name):
            by_form.setdefault(form.lower(), []).append(t)

    def compiled(table: dict[str, list[str]], edge: str, flags: int) -> Any:
        if not table:
            return None
        alts = "|".join(re.escape(k) for k in sorted(table, key=len, reverse=True))
        return re.compile(rf"(?<!{edge})(?:{alts})(?!{edge})", flags), table

    return compiled(by_symbol, "[A-Za-z]", 0), compiled(by_form, "[A-Za-z0-9]", re.I)


#: Words too common to identify a company on their own (first word of names like "American Airlines").
_COMMON_FIRST = {
    "american", "general", "united", "first", "national", "international", "southern", "western", "eastern",
    "northern", "global", "public", "universal", "consolidated", "federal", "standard", "capital", "digital",
    "advanced", "applied", "analog", "best", "church", "dollar", "equity", "fifth", "host", "live", "match",
    "news", "principal", "progressive", "prudential", "regions", "republic", "state", "target", "texas",
    "the", "travelers", "union", "waste", "water", "west", "valero", "ball", "crown", "discovery", "electronic",
}
_NAME_SUFFIX = re.compile(
    r"[,.]?\s+(?:inc\.?|incorporated|corp\.?|corporation|co\.?|company|ltd\.?|plc|group|holdings?|n\.?v\.?|s\.?a\.?|l\.?p\.?|class [a-z])$",
    re.I,
)


def _clean_name(name: str) -> str:
    prev = None
    name = str(name or "").strip()
    while prev != name:
        prev = name
        name = _NAME_SUFFIX.sub("", name).strip()
    return name


def company_mention(text: str, ticker: str, names: Iterable[str]) -> int:
    """2 if ``text`` names ``ticker`` by its symbol, 1 by one of its company ``names``, 0 not at all.

    The symbol: the whole text, a word of 2+ characters, or "(NYSE: T)"-style. A name: its
    form without corporate suffixes ("Inc.", "Corp.", "Class A"), or its first word when that
    has 4+ letters, is capitalised in the text and is not a common word ("American", "First").
    """
    if text.strip(" ()") == ticker:
        return 2  # the whole object of "added Q to the S&P 500"
    if len(ticker) >= 2 and has_symbol(text, ticker, "[A-Za-z0-9.]"):
        return 2
    if ticker in text and compile_cached(rf"\((?:NYSE:\s*|NASDAQ:\s*)?{re.escape(ticker)}\)").search(text):
        return 2
    for name in names:
        clean, first = _name_keys(name)
        if clean and has_word(text, clean, ignore_case=True):
            return 1
        if len(first) >= 4 and first.lower() not in _COMMON_FIRST and has_word(text, first):
            return 1
    return 0


@functools.lru_cache(maxsize=65_536)
def _name_keys(name: str) -> tuple[str, str]:
    """A company name without its corporate suffixes, and that form's first word (:func:`company_mention`)."""
    clean = _clean_name(name)
    words = re.findall(r"[A-Za-z0-9][A-Za-z0-9&'.-]+", clean)
    return clean, (words[0].rstrip(".") if words else "")


#: Team names by league: canonical abbreviation -> names a claim may use (nicknames and
#: abbreviations; matched case-sensitively as whole words).
TEAMS: dict[str, dict[str, tuple[str, ...]]] = {
    "NBA": {
        "ATL": ("Hawks",), "BOS": ("Celtics",), "BKN": ("Nets", "BRK"), "CHA": ("Hornets", "CHO"),
        "CHI": ("Bulls",), "CLE": ("Cavaliers", "Cavs"), "DAL": ("Mavericks", "Mavs"), "DEN": ("Nuggets",),
        "DET": ("Pistons",), "GSW": ("Warriors", "GS"), "HOU": ("Rockets",), "IND": ("Pacers",),
        "LAC": ("Clippers",), "LAL": ("Lakers",), "MEM": ("Grizzlies",), "MIA": ("Heat",), "MIL": ("Bucks",),
        "MIN": ("Timberwolves", "Wolves"), "NOP": ("Pelicans", "NO"), "NYK": ("Knicks", "NY"),
        "OKC": ("Thunder",), "ORL": ("Magic",), "PHI": ("76ers", "Sixers"), "PHX": ("Suns", "PHO"),
        "POR": ("Blazers", "Trail Blazers"), "SAC": ("Kings",), "SAS": ("Spurs", "SA"), "TOR": ("Raptors",),
        "UTA": ("Jazz", "UTAH"), "WAS": ("Wizards", "WSH"),
    },
    "NHL": {
        "ANA": ("Ducks",), "ARI": ("Coyotes", "PHX"), "BOS": ("Bruins",), "BUF": ("Sabres",), "CGY": ("Flames",),
        "CAR": ("Hurricanes", "Canes"), "CHI": ("Blackhawks",), "COL": ("Avalanche",), "CBJ": ("Blue Jackets",),
        "DAL": ("Stars",), "DET": ("Red Wings",), "EDM": ("Oilers",), "FLA": ("Panthers",), "LAK": ("Kings", "LA"),
        "MIN": ("Wild",), "MTL": ("Canadiens", "Habs"), "NSH": ("Predators", "Preds"), "NJD": ("Devils", "NJ"),
        "NYI": ("Islanders",), "NYR": ("Rangers",), "OTT": ("Senators",), "PHI": ("Flyers",),
        "PIT": ("Penguins",), "SJS": ("Sharks", "SJ"), "SEA": ("Kraken",), "STL": ("Blues",),
        "TBL": ("Lightning", "TB"), "TOR": ("Maple Leafs", "Leafs"), "UTA": ("Utah Hockey Club", "Mammoth"),
        "VAN": ("Canucks",), "VGK": ("Golden Knights", "VEG"), "WSH": ("Capitals", "Caps", "WAS"),
        "WPG": ("Jets",),
    },
}


#: Home cities / regions by league: canonical abbreviation -> the places a claim may name the
#: franchise by ("Houston acquired ...", "agreed to a deal with New York"). A place shared by
#: two franchises of a league ("New York", "Los Angeles") names both.
CITIES: dict[str, dict[str, tuple[str, ...]]] = {
    "NBA": {
        "ATL": ("Atlanta",), "BOS": ("Boston",), "BKN": ("Brooklyn", "New York"), "CHA": ("Charlotte",),
        "CHI": ("Chicago",), "CLE": ("Cleveland",), "DAL": ("Dallas",), "DEN": ("Denver",), "DET": ("Detroit",),
        "GSW": ("Golden State",), "HOU": ("Houston",), "IND": ("Indiana",), "LAC": ("Los Angeles", "L.A."),
        "LAL": ("Los Angeles", "L.A."), "MEM": ("Memphis",), "MIA": ("Miami",), "MIL": ("Milwaukee",),
        "MIN": ("Minnesota",), "NOP": ("New Orleans",), "NYK": ("New York",), "OKC": ("Oklahoma City",),
        "ORL": ("Orlando",), "PHI": ("Philadelphia", "Philly"), "PHX": ("Phoenix",), "POR": ("Portland",),
        "SAC": ("Sacramento",), "SAS": ("San Antonio",), "TOR": ("Toronto",), "UTA": ("Utah",),
        "WAS": ("Washington",),
    },
    "NHL": {
        "ANA": ("Anaheim",), "ARI": ("Arizona",), "BOS": ("Boston",), "BUF": ("Buffalo",), "CGY": ("Calgary",),
        "CAR": ("Carolina",), "CHI": ("Chicago",), "COL": ("Colorado",), "CBJ": ("Columbus",), "DAL": ("Dallas",),
        "DET": ("Detroit",), "EDM": ("Edmonton",), "FLA": ("Florida",), "LAK": ("Los Angeles", "L.A."),
        "MIN": ("Minnesota",), "MTL": ("Montreal", "Montréal"), "NSH": ("Nashville",), "NJD": ("New Jersey",),
        "NYI": ("New York",), "NYR": ("New York",), "OTT": ("Ottawa",), "PHI": ("Philadelphia", "Philly"),
        "PIT": ("Pittsburgh",), "SJS": ("San Jose",), "SEA": ("Seattle",), "STL": ("St. Louis",),
        "TBL": ("Tampa Bay", "Tampa"), "TOR": ("Toronto",), "UTA": ("Utah",), "VAN": ("Vancouver",),
        "VGK": ("Vegas", "Las Vegas"), "WSH": ("Washington",), "WPG": ("Winnipeg",),
    },
}


def _leagues(league: str | None) -> list[str]:
    """The leagues of :data:`TEAMS` to search (all when ``league`` is None)."""
    return [lg for lg in TEAMS if not league or lg == str(league).upper()]


def team_key(league: str | None, team: Any) -> str | None:
    """Canonical abbreviation of ``team`` in ``league``, or None.

    ``team`` is an abbreviation, a nickname ("Nets"), or a full name ending in a nickname
    ("Brooklyn Nets", "Golden State Warriors").
    """
    if not isinstance(team, str) or not team.strip():
        return None
    return _team_key(str(league or ""), team.strip())


@functools.lru_cache(maxsize=4096)
def _team_key(league: str, t: str) -> str | None:
    """:func:`team_key` of a stripped name ("" league: every league)."""
    for lg in _leagues(league):
        for key, names in TEAMS[lg].items():
            if t.upper() == key or t in names or t.lower() in {n.lower() for n in names}:
                return key
    for lg in _leagues(league):
        for key, names in TEAMS[lg].items():
            if any(len(n) >= 4 and t.lower().endswith(" " + n.lower()) for n in names):
                return key
    return None


@functools.lru_cache(maxsize=None)
def _team_pattern(league: str) -> tuple[re.Pattern[str], dict[str, tuple[str, ...]]]:
    """One pattern for every way :func:`teams_named` names a team of ``league`` (longest first),
    and what each written name stands for (a shared city stands for two franchises)."""
    keys: dict[str, list[str]] = {}
    for lg in _leagues(league or None):
        cities = CITIES.get(lg, {})
        for key, names in TEAMS[lg].items():
            # one member: "a Pacer", "the first Knick" (singulars of 5+ letters)
            singulars = tuple(n[:-1] for n in names if n.endswith("s") and len(n) >= 6)
            for n in (key, *names, *singulars, *cities.get(key, ())):
                if key not in keys.setdefault(n, []):
                    keys[n].append(key)
    alternation = "|".join(re.escape(n) for n in sorted(keys, key=len, reverse=True)) or r"(?!)"
    return re.compile(rf"(?<![A-Za-z0-9])(?:{alternation})(?![A-Za-z0-9])"), {n: tuple(k) for n, k in keys.items()}


def teams_named(text: str, league: str | None, skip: str = "") -> set[str]:
    """Canonical abbreviations of the teams of ``league`` named in ``text`` by nickname (or a
    member's: "a Pacer"), abbreviation or home city (:data:`CITIES`) (``skip``: text to
    ignore, e.g. the player's name, so "Jordan Wild" is not the Minnesota Wild)."""
    text = text.replace(skip, " ") if skip else text
    pattern, keys = _team_pattern(str(league or "").upper())
    return {k for m in pattern.finditer(text) for k in keys[m[0]]}


def team_in(text: str, team: Any, league: str | None = None, *, skip: str = "") -> bool:
    """True if ``text`` names ``team``.

    A team :data:`TEAMS` knows (:func:`team_key`) is named by any nickname or abbreviation
    of its franchise (:func:`teams_named`, ``skip`` masked); another team by its name as
    written or its last word of 3+ letters ("Ravens" for "Portland Ravens"), case-insensitive.
    """
    if not isinstance(team, str) or not team.strip():
        return False
    key = team_key(league, team)
    if key is not None:
        return key in teams_named(text, league, skip=skip)
    if team.lower() in text.lower():
        return True
    last = team.split()[-1]
    return len(last) >= 3 and has_word(text, last, ignore_case=True)


# ---------------------------------------------------------------------------
# parties of a case: short forms and acronyms
# ---------------------------------------------------------------------------

#: Abbreviations that case names and court databases write for a word of a party's name
#: (lower case, apostrophes and dots dropped: "Ass'n" -> "assn").
PARTY_SHORT_FORMS = {
    "assn": "association", "commn": "commission", "dept": "department", "intl": "international", "natl": "national",
    "govt": "government", "bd": "board", "univ": "university", "secy": "secretary", "atty": "attorney",
    "gen": "general", "fed": "federal", "dist": "district", "cnty": "county", "admr": "administrator",
    "admin": "administration", "auth": "authority", "corp": "corporation", "co": "company",
    "mfrs": "manufacturers", "ctr": "center", "cmty": "community", "envtl": "environmental",
    "sch": "school", "servs": "services", "svcs": "services", "mgmt": "management", "prot": "protection",
}  # fmt: skip
#: Written forms of the United States ("U.S.", "US", "U. S. A.", "USA").
_UNITED_STATES = re.compile(r"\bU\.\s?S\.(?:\s?A\.)?|\bUSA?\b")
#: Small words that an acronym may drop ("EPA" has no "of"), or keep ("AFPF" keeps "for").
ACRONYM_SMALL_WORDS = frozenset({"of", "the", "and", "for", "on", "in", "to", "at", "a", "an", "&"})
_ACRONYM_DROP = ACRONYM_SMALL_WORDS | {"et", "al", "inc", "llc", "ltd"}


def expand_short_forms(name: str) -> str:
    """``name`` with its abbreviations written out, lower case: "U.S. Dept. of Labor" ->
    "united states department of labor", "Nat'l Ass'n of Mfrs." -> "national association of
    manufacturers" (:data:`PARTY_SHORT_FORMS`; "U.S."/"US"/"USA" only in capitals)."""
    text = _UNITED_STATES.sub(" United States ", str(name or ""))
    words = re.findall(r"[a-z0-9]+", text.lower().replace("'", "").replace("’", "").replace(".", ""))
    return " ".join(PARTY_SHORT_FORMS.get(w, w) for w in words)


def acronyms(name: str) -> set[str]:
    """The acronyms ``name`` may be written as, lower case: the initials of its words with the
    small words (:data:`ACRONYM_SMALL_WORDS`) kept and with them dropped ("Americans for
    Prosperity Foundation" -> {"afpf", "apf"}; "Environmental Protection Agency" -> {"epa"}),
    and the same without a leading "United States" ("U.S. Environmental Protection Agency"
    -> also "epa"). Only the part before the first comma counts ("NLRB, et al."); a name
    of one word has none."""
    head = re.split(r",", str(name or ""))[0]
    words = [w for w in expand_short_forms(head).split() if w not in {"et", "al", "inc", "llc", "ltd"}]
    out: set[str] = set()
    for ws in (words, words[2:] if words[:2] == ["united", "states"] else []):
        if len(ws) < 2:
            continue
        out.add("".join(w[0] for w in ws))
        kept = [w for w in ws if w not in _ACRONYM_DROP]
        if len(kept) >= 2:
            out.add("".join(w[0] for w in kept))
    return out


def is_acronym_of(short: str, name: str) -> bool:
    """True if ``short`` is written as an acronym (one word, 2+ letters, in capitals, dots
    allowed: "EPA", "N.L.R.B.") and is one of :func:`acronyms` of ``name``."""
    s = str(short or "").strip()
    plain = s.replace(".", "").replace(" ", "")
    return len(plain) >= 2 and plain.isalpha() and plain.isupper() and plain.lower() in acronyms(name)
