"""ALFRED first releases: a FRED series' observations as first published (:mod:`anachron.sources.forecastbench`).

One request per series, ``GET {ALFRED_URL}?series_id=ID&api_key=KEY&file_type=json&output_type=4
&realtime_start=1776-07-04&realtime_end=AS_OF&observation_start=...&observation_end=...``:
``output_type=4`` is "Initial Release Only" (one row per observation date, its ``realtime_start`` the
day the value was first published); the real-time period from FRED's earliest day to ``as_of``
keeps only values first published on or before ``as_of``. The key is sent to the API only: never
logged, never in a manifest origin or an error message.
"""

from __future__ import annotations

import bisect
import json
import time
from typing import Any, Callable, NamedTuple

from anachron.sources.base import SourceError

ALFRED_URL = "https://api.stlouisfed.org/fred/series/observations"
#: Environment variable holding the FRED API key (config ``tasks.forecast.fred_key_env``).
KEY_ENV = "FRED_API_KEY"
#: FRED's earliest real-time day: the real-time period then holds every vintage up to ``as_of``.
REALTIME_START = "1776-07-04"
#: Seconds between requests (FRED allows 120 a minute).
MIN_INTERVAL = 0.5


class Release(NamedTuple):
    """One observation as first published: observation ``date``, ``published`` (realtime_start), ``value``."""

    date: str
    published: str
    value: float


class AlfredError(Exception):
    """A first-release lookup failed; ``reason`` is the manifest's fallback count key."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class AlfredClient:
    """First releases through ``get(url, params=, what=, allow_status=)`` (the reader's HTTP session)."""

    def __init__(self, get: Callable[..., Any], api_key: str, *, as_of: str, min_interval: float = MIN_INTERVAL,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._get, self._key, self.as_of = get, api_key, as_of
        self.min_interval, self._sleep, self._last = float(min_interval), sleep, float("-inf")

    def params(self, series_id: str, start: str, end: str) -> dict[str, str]:
        """The query of one series' request, without the key."""
        return {"series_id": series_id, "file_type": "json", "output_type": "4", "realtime_start": REALTIME_START,
                "realtime_end": self.as_of, "observation_start": start, "observation_end": end}

    def origin(self, series_id: str, start: str, end: str) -> str:
        """The request's URL as recorded in the manifest (no key)."""
        return ALFRED_URL + "?" + "&".join(f"{k}={v}" for k, v in self.params(series_id, start, end).items())

    def first_releases(self, series_id: str, start: str, end: str) -> tuple[list[Release], bytes]:
        """Observations dated ``start``..``end`` as first published on or before :attr:`as_of`, by date,
        and the response body. Raises :class:`AlfredError` (reason ``alfred_http_error``,
        ``alfred_rejected`` for a 400/404 answer, ``alfred_bad_response``)."""
        wait = self.min_interval - (time.monotonic() - self._last)
        if wait > 0:
            self._sleep(wait)
        self._last = time.monotonic()
        what = f"ALFRED first releases of {series_id}"
        try:
            response = self._get(ALFRED_URL, params={**self.params(series_id, start, end), "api_key": self._key},
                                 what=what, allow_status=(400, 404))
        except SourceError as exc:
            raise AlfredError("alfred_http_error", str(exc).replace(self._key, "***")) from None
        try:
            body = json.loads(response.content)
            if response.status_code in (400, 404):
                raise AlfredError("alfred_rejected", f"{what}: HTTP {response.status_code} "
                                  f"{str(body.get('error_message', ''))[:200].replace(self._key, '***')}")
            releases = [Release(str(o["date"])[:10], str(o["realtime_start"])[:10], float(o["value"]))
                        for o in body["observations"] if o.get("value") not in (".", "", None)]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise AlfredError("alfred_bad_response", f"{what}: unreadable answer ({type(exc).__name__})") from None
        keep = sorted((r for r in releases if r.published <= self.as_of), key=lambda r: r.date)
        return keep, response.content


def value_on(releases: list[Release], day: str) -> Release | None:
    """The latest observation dated on or before ``day`` (ForecastBench's forward fill), as first
    published; ``None`` when none is. ``releases`` sorted by date."""
    i = bisect.bisect_right([r.date for r in releases], day)
    return releases[i - 1] if i else None
