"""HTTP helpers shared by the source readers and the model providers."""

from __future__ import annotations

import datetime as dt
import email.utils
import time
from typing import Callable


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
