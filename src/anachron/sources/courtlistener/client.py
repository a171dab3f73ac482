"""The CourtListener REST v4 HTTP client: token auth, cursor pagination, 429 back-off."""

from __future__ import annotations

import logging
import time
from typing import Any, Callable, Iterable, Iterator

import requests

from anachron.http import throttle_wait_seconds
from anachron.progress import advance_job
from anachron.sources.base import DEFAULT_USER_AGENT, SourceError, make_session
from anachron.sources.courtlistener.layout import API_BASE, DEFAULT_COURTS

log = logging.getLogger(__name__)


class CourtListenerClient:
    """A small CourtListener REST v4 client: token auth, cursor pagination, 429 back-off.

    Parameters
    ----------
    token:
        The API token (sent as ``Authorization: Token <token>`` to ``base_url`` only).
    session:
        ``requests.Session`` (tests inject one replaying recordings); None:
        :func:`~anachron.sources.base.make_session` with ``retries=0`` (no adapter retries:
        back-off is done here, visibly and testably, and its waits are recorded in
        :attr:`stats` and the manifest, which the adapter's ``Retry`` would not do).
    sleep:
        Called with the seconds to wait before a retry (default :func:`time.sleep`).
    max_retries, backoff, max_wait:
        Retries per request after 429/5xx/connection errors; base of the exponential
        back-off (``backoff * 2**attempt`` s, at most ``max_wait``) when the server states no
        wait; the longest wait accepted. A 429 that states a wait, in its ``Retry-After``
        header or in its body ("Expected available in N seconds", Django REST framework
        throttling; :func:`anachron.http.throttle_wait_seconds`, the longer of the two), is
        retried after exactly that wait, never sooner; one asking for more than ``max_wait``
        raises :class:`SourceError` at once (the quota is exhausted) instead of retrying early.

    :attr:`stats` counts ``requests``, ``pages``, ``retries_429``, ``retries_other`` and
    ``waited_s``. Errors are :class:`SourceError` and never contain the token.
    """

    def __init__(
        self,
        token: str,
        *,
        session: requests.Session | None = None,
        base_url: str = API_BASE,
        sleep: Callable[[float], None] = time.sleep,
        max_retries: int = 5,
        backoff: float = 2.0,
        max_wait: float = 900.0,
        timeout: float = 60.0,
    ) -> None:
        if not token:
            raise ValueError("CourtListenerClient needs a token")
        self._token = token
        self.session = session if session is not None else make_session(retries=0)
        self.session.headers.setdefault("User-Agent", DEFAULT_USER_AGENT)
        self.base_url = base_url.rstrip("/")
        self.sleep = sleep
        self.max_retries = int(max_retries)
        self.backoff = float(backoff)
        self.max_wait = float(max_wait)
        self.timeout = float(timeout)
        self.stats = {"requests": 0, "pages": 0, "retries_429": 0, "retries_other": 0, "waited_s": 0.0}

    def __repr__(self) -> str:  # never show the token
        return f"CourtListenerClient(base_url={self.base_url!r})"

    def _headers(self, url: str) -> dict[str, str]:
        return {"Authorization": f"Token {self._token}"} if url.startswith(self.base_url) else {}

    def get(self, url: str, params: dict[str, Any] | None = None, *, what: str) -> requests.Response:
        """GET with retries; returns the 2xx response or raises :class:`SourceError`."""
        attempt = 0
        while True:
            self.stats["requests"] += 1
            try:
                resp = self.session.get(url, params=params, headers=self._headers(url), timeout=self.timeout)
            except requests.RequestException as exc:
                if attempt >= self.max_retries:
                    raise SourceError(f"CourtListener: could not fetch {what} ({type(exc).__name__}: {exc}).") from exc
                wait = min(self.backoff * 2**attempt, self.max_wait)
                self.stats["retries_other"] += 1
            else:
                if resp.status_code < 400:
                    advance_job()
                    return resp
                if resp.status_code in (401, 403):
                    raise SourceError(
                        f"CourtListener refused {what} (HTTP {resp.status_code}): the API token was rejected or lacks "
                        "permission; check the token in the environment variable named by sources.courtlistener.token_env."
                    )
                retryable = resp.status_code == 429 or resp.status_code >= 500
                if not retryable or attempt >= self.max_retries:
                    detail = resp.text[:200].replace("\n", " ") if resp.text else ""
                    raise SourceError(
                        f"CourtListener: {what} failed with HTTP {resp.status_code} after {attempt + 1} attempt(s)"
                        + (f" ({detail})" if detail else "")
                        + ("; the rate limit or daily quota is exhausted, try again later." if resp.status_code == 429 else ".")
                    )
                if resp.status_code == 429:
                    stated = throttle_wait_seconds(resp.headers, resp.text)
                    if stated is not None and stated > self.max_wait:
                        raise SourceError(
                            f"CourtListener: {what} is throttled; the server asks to wait {stated:.0f} s, longer than "
                            f"max_wait ({self.max_wait:.0f} s): the rate limit or daily quota is exhausted, try again later."
                        )
                    self.stats["retries_429"] += 1
                    # never sooner than the server said (Retry-After or "Expected available in N seconds")
                    wait = stated if stated is not None else min(self.backoff * 2**attempt, self.max_wait)
                else:
                    self.stats["retries_other"] += 1
                    wait = min(self.backoff * 2**attempt, self.max_wait)
            wait = float(wait)
            log.info("CourtListener: waiting %.1f s before retrying %s (attempt %d)", wait, what, attempt + 2)
            self.stats["waited_s"] += wait
            self.sleep(wait)
            attempt += 1

    def get_json(self, url: str, params: dict[str, Any] | None = None, *, what: str) -> dict[str, Any]:
        """:meth:`get` and decode a JSON object; :class:`SourceError` when it is not one."""
        resp = self.get(url, params, what=what)
        try:
            data = resp.json()
        except ValueError as exc:
            raise SourceError(f"CourtListener: {what} did not return JSON ({exc}).") from exc
        if not isinstance(data, dict):
            raise SourceError(f"CourtListener: {what} returned {type(data).__name__}, expected a JSON object.")
        return data

    def search_opinions(
        self,
        *,
        courts: Iterable[str] = DEFAULT_COURTS,
        filed_after: str | None = None,
        filed_before: str | None = None,
        order_by: str = "citeCount desc",
        max_results: int | None = None,
        extra_params: dict[str, Any] | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Yield opinion search hits (``/search/?type=o``), following ``next`` cursors.

        Stops after ``max_results`` hits or when a page has no ``next`` URL.
        """
        params: dict[str, Any] = {"type": "o", "court": " ".join(courts), "order_by": order_by}
        if filed_after:
            params["filed_after"] = filed_after
        if filed_before:
            params["filed_before"] = filed_before
        params.update(extra_params or {})
        url: str | None = f"{self.base_url}/search/"
        n = 0
        page_params: dict[str, Any] | None = params
        while url:
            page = self.get_json(url, page_params, what=f"opinion search page {self.stats['pages'] + 1}")
            self.stats["pages"] += 1
            results = page.get("results")
            if not isinstance(results, list):
                raise SourceError("CourtListener: a search page has no 'results' list; the API answer changed shape.")
            for hit in results:
                if max_results is not None and n >= max_results:
                    return
                n += 1
                yield hit
            url = page.get("next") or None
            page_params = None  # the next URL carries the query and cursor
            if max_results is not None and n >= max_results:
                return

    def cluster(self, cluster_id: int) -> dict[str, Any]:
        """``GET /clusters/{id}/``."""
        return self.get_json(f"{self.base_url}/clusters/{int(cluster_id)}/", what=f"cluster {cluster_id}")

    def opinion(self, opinion_id: int) -> dict[str, Any]:
        """``GET /opinions/{id}/``."""
        return self.get_json(f"{self.base_url}/opinions/{int(opinion_id)}/", what=f"opinion {opinion_id}")

    def download(self, url: str, *, what: str) -> bytes:
        """Bytes of a file (an opinion PDF); the token is not sent to other hosts."""
        return self.get(url, what=what).content
