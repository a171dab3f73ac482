"""HTTP helpers shared by the source readers and the model providers."""

from __future__ import annotations

import datetime as dt
import email.utils
import re
import time
from typing import Callable, Mapping


def retry_after_seconds(value: str | None, now: Callable[[], float] = time.time) -> float | None:
    """Seconds to wait from a ``Retry-After`` header value (RFC 9110 §10.2.3).

    Args:
        value: the header's value: delta-seconds (``"7"``, ``"1.5"``) or an HTTP date
            (``"Wed, 21 Oct 2015 07:28:30 GMT"``; a date without a zone is read as UTC).
        now: the clock, in seconds since the epoch (injectable for tests).

    Returns:
        Seconds, never negative (a date in the past gives 0.0); None when the value is absent,
        blank or unreadable.
    """
    if value is None:
        return None
    v = str(value).strip()
    if not v:
        return None
    try:
        return max(0.0, float(v))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(v)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return max(0.0, when.timestamp() - now())


#: "Expected available in 3600 seconds." — Django REST framework's throttling message
#: (``rest_framework.exceptions.Throttled``), in a 429 body as text or as JSON ``detail``.
_EXPECTED_AVAILABLE = re.compile(r"expected\s+available\s+in\s+(\d+(?:\.\d+)?)\s+(second|minute|hour|day)s?", re.I)
_UNIT_SECONDS = {"second": 1.0, "minute": 60.0, "hour": 3600.0, "day": 86400.0}


def throttle_body_seconds(body: str | bytes | None) -> float | None:
    """Seconds to wait stated in a throttled answer's body ("Expected available in N seconds").

    Django REST framework servers (CourtListener among them) say how long a throttle lasts in
    the body of a 429, often without a ``Retry-After`` header:
    ``{"detail": "Request was throttled. Expected available in 3600 seconds."}``.

    Args:
        body: the response body (text or bytes; JSON or plain text, the message is searched
            as text).

    Returns:
        Seconds (a stated number of minutes, hours or days converted), or None when the body
        states no wait.
    """
    if body is None:
        return None
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
    m = _EXPECTED_AVAILABLE.search(text)
    return float(m.group(1)) * _UNIT_SECONDS[m.group(2).lower()] if m else None


def throttle_wait_seconds(headers: Mapping[str, str] | None, body: str | bytes | None, now: Callable[[], float] = time.time) -> float | None:
    """The longest wait a throttled answer asks for: its ``Retry-After`` header or its body.

    Combines :func:`retry_after_seconds` (header) and :func:`throttle_body_seconds` (body);
    when both are given the longer wins, so the client never retries before either says the
    quota is back. None when neither states a wait (the caller backs off on its own).
    """
    waits = [
        w
        for w in (retry_after_seconds((headers or {}).get("Retry-After"), now=now), throttle_body_seconds(body))
        if w is not None
    ]
    return max(waits) if waits else None
