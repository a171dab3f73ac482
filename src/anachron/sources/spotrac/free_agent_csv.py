"""The snapshot's free-agent files (``nhl/spotrac_signed_free_agents_*.csv``) read into free-agent rows."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

from anachron.sources.base import check_columns, read_csv_checked
from anachron.sources.spotrac.layout import PLAYER_COLUMNS, SNAPSHOT_COLUMNS


def read_free_agent_csv(path: Path, rel: str, years: Iterable[int] | None = None) -> pd.DataFrame:
    """One snapshot file as rows for :func:`~anachron.sources.spotrac.contracts.signings_from_rows`.

    ``rel`` is the file's path relative to the snapshot directory, written in each row's
    ``origin`` as ``snapshot:<rel>#row=<n>`` (``n`` the line in the file, the header being
    line 1). ``years``: keep only rows whose ``spotrac_year`` is one of them (None keeps all).
    The player is the ``player_name`` column, else ``player``; ``position`` and
    ``ufa_rfa_type`` are optional; the file has no signing date (``date`` is None).

    Returns:
        A frame with :data:`~anachron.sources.spotrac.contracts.ROW_COLUMNS`, one row per
        kept line of the file.

    Raises:
        SourceError: naming the file and the column when a column of
            :data:`~anachron.sources.spotrac.layout.SNAPSHOT_COLUMNS` or the player column is
            missing, or when the file cannot be read as CSV.
    """
    raw = read_csv_checked(
        path, SNAPSHOT_COLUMNS, name=str(path), dtype="str", keep_default_na=False, na_values=["", "NA"]
    )
    player_col = next((c for c in PLAYER_COLUMNS if c in raw.columns), None)
    if player_col is None:
        check_columns(raw, ["player_name"], str(path))
    if years is not None:
        raw = raw[pd.to_numeric(raw["spotrac_year"], errors="coerce").isin(years)]
    return pd.DataFrame(
        {
            "player": raw[player_col],
            "position": raw["position"] if "position" in raw.columns else None,
            "status_code": raw["ufa_rfa_type"] if "ufa_rfa_type" in raw.columns else None,
            "team": raw["signing_team"],
            "previous_team": raw["previous_team"],
            "value": raw["contract_value"],
            "aav": raw["aav"],
            "years": raw["contract_years"],
            "year": raw["spotrac_year"],
            "date": None,
            "origin": [f"snapshot:{rel}#row={i + 2}" for i in raw.index],
        }
    )
