"""Each publisher's headline file: its name prefix, the columns it must have, its date format."""

from __future__ import annotations

from typing import Callable, Iterable

import pandas as pd

from anachron.sources.base import normalize_ticker

#: Time zone a unix ``timestamp`` (reddit) is dated in.
_NEWS_TZ = "America/New_York"


def _strings(series: pd.Series) -> pd.Series:
    """A column as plain Python strings ("" for missing), stripped."""
    return series.astype(object).where(series.notna(), "").map(lambda v: str(v).strip())


def _parse_formats(values: pd.Series, formats: Iterable[str]) -> pd.Series:
    """Parse strings with the first matching format; ISO day strings, None where none matches."""
    out = pd.Series([None] * len(values), index=values.index, dtype=object)
    todo = values != ""
    for fmt in formats:
        if not todo.any():
            break
        parsed = pd.to_datetime(values[todo], format=fmt, errors="coerce")
        ok = parsed.notna()
        out.loc[parsed.index[ok]] = parsed[ok].dt.strftime("%Y-%m-%d").to_numpy()
        todo.loc[parsed.index[ok]] = False
    return out


def _iso_prefix(values: pd.Series) -> pd.Series:
    """The leading ``YYYY-MM-DD`` of timestamp strings with an offset (local day), validated."""
    head = values.str.slice(0, 10)
    parsed = pd.to_datetime(head.where(values.str.match(r"^\d{4}-\d{2}-\d{2}"), ""), format="%Y-%m-%d", errors="coerce")
    return parsed.dt.strftime("%Y-%m-%d").astype(object).where(parsed.notna(), None)


# -- per-publisher layouts ----------------------------------------------------------------------
# Each parser takes the raw string frame and returns (date_raw, published_at, title, text, ticker).


def _reuters_or_guardian(fmt: str) -> Callable[[pd.DataFrame], tuple]:
    def parse(raw: pd.DataFrame) -> tuple:
        date_raw = _strings(raw["Time"])
        return date_raw, _parse_formats(date_raw, [fmt]), _strings(raw["Headlines"]), None, None

    return parse


def _cnbc(raw: pd.DataFrame) -> tuple:
    date_raw = _strings(raw["Time"])
    day = date_raw.str.rsplit(",", n=1).str[-1].str.strip().str.replace(r"\bSept\b", "Sep", regex=True)
    published = _parse_formats(day.where(date_raw != "", ""), ["%d %B %Y", "%d %b %Y"])
    return date_raw, published, _strings(raw["Headlines"]), _strings(raw["Description"]), None


def _wsj(raw: pd.DataFrame) -> tuple:
    date_raw = _strings(raw["Date"])
    return date_raw, _parse_formats(date_raw, ["%m/%d/%y"]), _strings(raw["Headline"]), None, None


def _analyst_ratings(raw: pd.DataFrame) -> tuple:
    date_raw = _strings(raw["date"])
    ticker = _strings(raw["stock"]).map(lambda t: normalize_ticker(t) if t else None)
    return date_raw, _iso_prefix(date_raw), _strings(raw["title"]), None, ticker


def _reddit(raw: pd.DataFrame) -> tuple:
    date_raw = _strings(raw["published"])
    published = _parse_formats(date_raw, ["%B %d, %Y %I:%M %p"])
    if "timestamp" in raw.columns:
        stamp = _strings(raw["timestamp"])
        missing = published.isna() & (stamp != "")
        if missing.any():
            secs = pd.to_numeric(stamp[missing], errors="coerce")
            ts = pd.to_datetime(secs, unit="s", utc=True, errors="coerce").dt.tz_convert(_NEWS_TZ)
            ok = ts.notna()
            published.loc[ts.index[ok]] = ts[ok].dt.strftime("%Y-%m-%d").to_numpy()
        date_raw = date_raw.where(date_raw != "", stamp)
    return date_raw, published, _strings(raw["title"]), None, None


#: name prefix -> (required columns, parser). Order matters only for documentation.
LAYOUTS: dict[str, tuple[list[str], Callable[[pd.DataFrame], tuple]]] = {
    "reuters": (["Time", "Headlines"], _reuters_or_guardian("%b %d %Y")),
    "guardian": (["Time", "Headlines"], _reuters_or_guardian("%d-%b-%y")),
    "cnbc": (["Headlines", "Time", "Description"], _cnbc),
    "wsj": (["Date", "Headline"], _wsj),
    "analyst_ratings": (["title", "date", "stock"], _analyst_ratings),
    "reddit": (["published", "title"], _reddit),
}


def source_of_file(name: str) -> str | None:
    """The publisher key of a snapshot file name (``reuters_headlines_2018_2020.csv`` -> ``reuters``)."""
    low = name.lower()
    for prefix in sorted(LAYOUTS, key=len, reverse=True):
        if low.startswith(prefix):
            return prefix
    return None
