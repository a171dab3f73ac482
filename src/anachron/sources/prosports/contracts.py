"""Signings from a long transaction table (one row per date, team, player and note), de-duplicated by player-year."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from anachron.sources.base import check_columns, read_csv_checked
from anachron.sources.player_names import normalize_name
from anachron.sources.prosports.layout import LEAGUE, TRANSACTION_COLUMNS
from anachron.sources.prosports.notes import ACQUISITION_RE, ParsedNote, parse_note
from anachron.sources.prosports.players import display_name, player_keys
from anachron.sources.prosports.skips import DUP_ROW, SKIP_BAD_DATE, SKIP_NO_PLAYER, SKIP_NO_TEAM
from anachron.sources.prosports.teams import canonical_team
from anachron.sources.signings import SIGNING_COLUMNS, finish_signings


def _empty_signings() -> pd.DataFrame:
    return finish_signings(pd.DataFrame({c: [] for c in SIGNING_COLUMNS}))


def _team_change(prev: str | None, team: str | None) -> Any:
    if prev is None or team is None:
        return pd.NA
    return prev != team


def contracts_from_transactions(
    tx: pd.DataFrame,
    *,
    sign_and_trade_days: int = 90,
    status_lookback_days: int = 183,
) -> tuple[pd.DataFrame, Counter]:
    """Signings parsed from a long transaction table; returns ``(signings, skipped_by_reason)``.

    Args:
        tx: one row per (date, team, player, note): columns ``date`` (ISO string or
            datetime), ``team``, ``player``, ``notes`` and ``origin`` (where the row came
            from, e.g. ``snapshot:<file>#row=12`` or the page URL).
        sign_and_trade_days: a re-signing followed within this many days by a
            non-acquisition transaction of the player with another team is a
            sign-and-trade (:mod:`anachron.sources.prosports`).
        status_lookback_days: when the contract note does not say "unrestricted" /
            "restricted", the latest such status note of the player at most this many days
            earlier supplies it.

    Returns:
        ``signings`` with :data:`SIGNING_COLUMNS` (not yet de-duplicated by player-year)
        and a :class:`collections.Counter` of skipped notes by reason; exact duplicate
        rows count as ``duplicate_row``.

    Raises:
        SourceError: when ``tx`` lacks a required column.
    """
    check_columns(tx, TRANSACTION_COLUMNS + ["origin"], "transaction table")
    skipped: Counter = Counter()
    df = tx.copy()
    dup = df.duplicated(subset=TRANSACTION_COLUMNS, keep="first")
    skipped[DUP_ROW] += int(dup.sum())
    df = df.loc[~dup]
    dates = pd.to_datetime(df["date"], errors="coerce")
    bad = dates.isna()
    skipped[SKIP_BAD_DATE] += int(bad.sum())
    df = df.loc[~bad].assign(_date=dates[~bad].dt.normalize())
    no_player = df["player"].isna() | (df["player"].astype("str").str.strip() == "")
    skipped[SKIP_NO_PLAYER] += int(no_player.sum())
    df = df.loc[~no_player]
    df = df.assign(
        _player=df["player"].astype("str").str.strip(),
        _team=[canonical_team(t) for t in df["team"]],
        _parsed=[parse_note(n) for n in df["notes"]],
    )
    df = df.reset_index(drop=True)
    df["_seq"] = range(len(df))
    # Same-day rows: a player's "Relinquished" row (the team he left) before his "Acquired" row.
    role = df["role"] if "role" in df.columns else pd.Series(None, index=df.index, dtype="object")
    df["_role"] = role.map({"relinquished": 0, "acquired": 2}).fillna(1)
    df = df.sort_values(["_player", "_date", "_role", "_seq"], kind="mergesort")

    rows: list[dict[str, Any]] = []
    for player, hist in df.groupby("_player", sort=False):
        hist = hist.reset_index(drop=True)
        for i, r in hist.iterrows():
            p: ParsedNote = r["_parsed"]
            if not p.is_contract:
                skipped[p.kind] += 1
                continue
            team = r["_team"]
            if team is None:
                skipped[SKIP_NO_TEAM] += 1
                continue
            day = r["_date"]
            earlier = hist[
                ((hist["_date"] < day) | ((hist["_date"] == day) & ~hist["_parsed"].map(lambda q: q.is_contract)))
                & hist["_team"].notna()
                & (hist.index != i)
            ]
            prev = earlier["_team"].iloc[-1] if len(earlier) else None
            status = p.status
            if status is None:
                lookback = earlier[earlier["_date"] >= day - pd.Timedelta(days=status_lookback_days)]
                for q in reversed(lookback["_parsed"].tolist()):
                    if q.status is not None:
                        status = q.status
                        break
            snt = p.sign_and_trade
            note = str(r["notes"])
            if p.re_signing:
                later = hist[(hist["_date"] > day) & hist["_team"].notna()]
                if snt and p.sign_and_trade_team and p.sign_and_trade_team != team:
                    prev, team = team, p.sign_and_trade_team
                elif len(later):
                    nxt = later.iloc[0]
                    within = (nxt["_date"] - day).days <= sign_and_trade_days
                    if nxt["_team"] != team and within and not ACQUISITION_RE.match(str(nxt["notes"])):
                        prev, team, snt = team, nxt["_team"], True
                        note += f" [sign-and-trade inferred: with {team} on {nxt['_date'].date().isoformat()}]"
                    elif snt:
                        prev, team = team, None
                elif snt:
                    prev, team = team, None
            change = True if (snt and prev is not None) else _team_change(prev, team)
            rows.append(
                {
                    "league": LEAGUE,
                    "player": display_name(player),
                    "signing_date": day.date().isoformat(),
                    "team": team,
                    "previous_team": prev,
                    "team_change": change,
                    "years": p.years,
                    "total_value": p.total_value,
                    "aav": p.total_value / p.years,
                    "status": status,
                    "sign_and_trade": snt,
                    "re_signing": p.re_signing,
                    "date_rule": "transaction date",
                    "origin": r["origin"],
                    "note": note,
                    "_keys": player_keys(player),
                    "_raw": player,
                }
            )
    out = pd.DataFrame(rows)
    if out.empty:
        return _empty_signings().assign(_keys=pd.Series(dtype="object"), _raw=pd.Series(dtype="object")), skipped
    return out, skipped


def dedup_player_year(signings: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Keep the earliest signing per (player key, calendar year of the signing); count the rest.

    Rows without a date use the year in ``_year`` when present. Returns ``(kept, n_removed)``.
    """
    if signings.empty:
        return signings, 0
    df = signings.copy()
    year = pd.to_datetime(df["signing_date"], errors="coerce").dt.year
    if "_year" in df.columns:
        year = year.fillna(df["_year"])
    key = (
        df["_keys"].map(lambda ks: min(ks) if ks else "") if "_keys" in df.columns else df["player"].map(normalize_name)
    )
    df = df.assign(_k=key, _y=year, _o=df["signing_date"].fillna("9999-12-31"))
    df = df.sort_values(["_k", "_y", "_o"], kind="mergesort")
    dup = df.duplicated(subset=["_k", "_y"], keep="first")
    return df.loc[~dup].drop(columns=["_k", "_y", "_o"]), int(dup.sum())


def read_transactions(path: Path, rel: str) -> pd.DataFrame:
    """Read one ``prosports_transactions_*.csv`` (``date, team, player, notes[, season]``).

    Returns the columns :data:`~anachron.sources.prosports.layout.TRANSACTION_COLUMNS` and
    ``origin`` (``snapshot:<rel>#row=<n>``, ``n`` the line in the file), all strings; blank
    cells are missing.

    Raises:
        SourceError: naming the file and the missing column.
    """
    raw = read_csv_checked(
        path, TRANSACTION_COLUMNS, name=str(path), dtype="str", keep_default_na=False, na_values=[""]
    )
    raw = raw.assign(origin=[f"snapshot:{rel}#row={i + 2}" for i in range(len(raw))])
    return raw[TRANSACTION_COLUMNS + ["origin"]]
