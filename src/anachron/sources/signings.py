"""The ``signings`` table the NBA and NHL readers share: its columns and their dtypes.

Both :mod:`anachron.sources.prosports` (NBA) and :mod:`anachron.sources.spotrac` (NHL) give
one row per (player, signing year) with :data:`SIGNING_COLUMNS` (described in
:mod:`anachron.sources.prosports`), coerced by :func:`finish_signings`.
"""

from __future__ import annotations

import pandas as pd

#: Columns of the ``signings`` table (:mod:`anachron.sources.prosports`, :mod:`anachron.sources.spotrac`).
SIGNING_COLUMNS = [
    "league",
    "player",
    "signing_date",
    "team",
    "previous_team",
    "team_change",
    "years",
    "total_value",
    "aav",
    "status",
    "sign_and_trade",
    "re_signing",
    "date_rule",
    "origin",
    "note",
]


def finish_signings(df: pd.DataFrame) -> pd.DataFrame:
    """Coerce a signings frame to :data:`SIGNING_COLUMNS` with their dtypes, sorted by date and player."""
    df = df.reindex(columns=SIGNING_COLUMNS).copy()
    for c in ("league", "player", "signing_date", "team", "previous_team", "status", "date_rule", "origin", "note"):
        df[c] = df[c].astype("object").where(df[c].notna(), None)
    df["years"] = pd.to_numeric(df["years"], errors="coerce").astype("Int64")
    df["total_value"] = pd.to_numeric(df["total_value"], errors="coerce").astype("float64")
    df["aav"] = pd.to_numeric(df["aav"], errors="coerce").astype("float64")
    df["team_change"] = df["team_change"].astype("boolean")
    df["re_signing"] = df["re_signing"].astype("boolean")
    df["sign_and_trade"] = df["sign_and_trade"].fillna(False).astype("bool")
    order = df["signing_date"].fillna("9999-12-31")
    df = df.assign(_o=order).sort_values(["_o", "league", "player"], kind="mergesort").drop(columns="_o")
    return df.reset_index(drop=True)
