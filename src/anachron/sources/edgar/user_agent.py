"""The User-Agent the SEC requires of automated requests: a name and a contact e-mail."""

from __future__ import annotations

import os
import re

from anachron.sources.base import SourceError, snapshot_hint
from anachron.sources.edgar.layout import SNAPSHOT_LAYOUT, USER_AGENT_ENV


def sec_user_agent(user_agent: str | None = None) -> str:
    """The SEC User-Agent to send: ``user_agent``, else ``$ANACHRON_SEC_USER_AGENT``.

    Raises :class:`SourceError` when neither is set or the value has no contact e-mail
    (the SEC refuses anonymous automated requests).
    """
    ua = (user_agent or os.environ.get(USER_AGENT_ENV) or "").strip()
    if not ua or not re.search(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}", ua):
        raise SourceError(
            "SEC EDGAR requires a User-Agent naming you with a contact e-mail, e.g. "
            f"'Jane Doe research jane@example.org'; set the environment variable {USER_AGENT_ENV} "
            f"(or pass user_agent). {snapshot_hint(SNAPSHOT_LAYOUT)}"
        )
    return ua
