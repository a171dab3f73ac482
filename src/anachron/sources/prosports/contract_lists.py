"""Dated contract lists of a snapshot (``nba/actual_contracts_*.csv``): read, and merged into the note signings."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from anachron.frames import is_null
from anachron.sources.base import read_csv_checked
from anachron.sources.prosports.layout import CONTRACT_COLUMNS, LEAGUE
from anachron.sources.prosports.notes import MAX_YEARS, MIN_TOTAL_VALUE, SIGN_AND_TRADE_RE
from anachron.sources.prosports.players import display_name, player_keys
from anachron.sources.prosports.rosters import SeasonTeams, single_team
from anachron.sources.prosports.skips import SKIP_IMPLAUSIBLE, SKIP_NO_CONTRACT_VALUE, SKIP_NO_PLAYER
from anachron.sources.prosports.teams import canonical_team


def read_contract_list(path: Path, rel: str) -> tuple[pd.DataFrame, Counter]:
    """Read one ``actual_contracts_*.csv``: rows ``player, Years, Total Value, date[, source]``.

    Returns ``(rows, skipped)`` with columns ``player, years, total_value, date, source,
    origin, _year`` (``_year`` from the date, else from the file name). Rows with no
    positive years or value are skipped as ``no_contract_value``.

    Raises:
        SourceError: naming the file and the missing column.
    """
    raw = read_csv_checked(path, CONTRACT_COLUMNS, name=str(path), dtype={"player": "str", "date": "str"})
    skipped: Counter = Counter()
    m = re.search(r"(\d{4})", path.name)
    file_year = int(m.group(1)) if m else None
    rows = []
    for i, r in raw.iterrows():
        name = r["player"]
        if is_null(name) or not str(name).strip():
            skipped[SKIP_NO_PLAYER] += 1
            continue
        years = pd.to_numeric(r["Years"], errors="coerce")
        value = pd.to_numeric(r["Total Value"], errors="coerce")
        if pd.isna(years) or pd.isna(value) or years < 1 or value <= 0:
            skipped[SKIP_NO_CONTRACT_VALUE] += 1
            continue
        if years > MAX_YEARS or value < MIN_TOTAL_VALUE:
            skipped[SKIP_IMPLAUSIBLE] += 1
            continue
        date = (
            pd.to_datetime(r["date"], errors="coerce") if isinstance(r["date"], str) and r["date"].strip() else pd.NaT
        )
        src = r.get("source") if "source" in raw.columns else None
        src = None if is_null(src) else str(src)
        rows.append(
            {
                "player": str(name).strip(),
                "years": int(years),
                "total_value": float(value),
                "date": None if pd.isna(date) else date.date().isoformat(),
                "source": src,
                "origin": f"snapshot:{rel}#row={i + 2}",
                "_year": date.year if not pd.isna(date) else file_year,
            }
        )
    return pd.DataFrame(rows, columns=["player", "years", "total_value", "date", "source", "origin", "_year"]), skipped


def _describe(teams: set[str]) -> str:
    return "no rows" if not teams else next(iter(teams)) if len(teams) == 1 else "one of " + "/".join(sorted(teams))


def merge_contract_lists(
    signings: pd.DataFrame,
    lists: pd.DataFrame,
    tx: pd.DataFrame,
    seasons: SeasonTeams,
) -> tuple[pd.DataFrame, int]:
    """Add the dated contract-list rows to the note-derived signings.

    A list row whose player (any alias) and year match a note signing is the same
    contract: it is merged (counted as a duplicate) — the earlier of the two dates becomes
    ``signing_date`` (an announcement precedes the official signing; ``date_rule`` says
    which; a list date after the signing is a later report, noted in ``note``), the note's teams and figures are kept, and a "sign-and-trade" in the list's
    source link sets the flag. Other list rows become new signings, with teams from the
    season rosters (:class:`SeasonTeams`): ``team`` is the player's team in the season
    after the offseason and ``previous_team`` his team in the season that ended before it
    (else the team of his latest transaction before the date). A player with several
    teams in a season has no single team (None); ``team_change`` is still True when none
    of his teams after the offseason is among his teams before it, False when both are
    the same single team, and <NA> otherwise.

    Returns ``(signings, n_merged_duplicates)``.
    """
    if lists.empty:
        return signings, 0
    out = signings.copy()
    years_of = pd.to_datetime(out["signing_date"], errors="coerce").dt.year if len(out) else pd.Series(dtype="float64")
    by_key: dict[tuple[str, int], int] = {}
    for idx, keys, y in zip(out.index, out["_keys"], years_of):
        if pd.isna(y):
            continue
        for k in keys:
            by_key.setdefault((k, int(y)), idx)
    tx_by_key: dict[str, list[pd.DataFrame]] = {}
    if len(tx):
        txx = tx.assign(
            _date=pd.to_datetime(tx["date"], errors="coerce"), _team=[canonical_team(t) for t in tx["team"]]
        )
        txx = txx[txx["_date"].notna() & txx["_team"].notna() & txx["player"].notna()]
        for raw, g in txx.groupby("player"):
            for k in player_keys(raw):
                tx_by_key.setdefault(k, []).append(g)
    merged = 0
    new_rows = []
    for _, r in lists.iterrows():
        keys = player_keys(r["player"])
        year = None if pd.isna(r["_year"]) else int(r["_year"])
        source = r["source"] if isinstance(r["source"], str) and r["source"] else None
        date = r["date"] if isinstance(r["date"], str) and r["date"] else None
        snt = bool(source and SIGN_AND_TRADE_RE.search(source))
        hit = next((by_key[(k, year)] for k in keys if year is not None and (k, year) in by_key), None)
        if hit is not None:
            merged += 1
            if date and date < out.at[hit, "signing_date"]:
                out.at[hit, "signing_date"] = date
                out.at[hit, "date_rule"] = "announcement date (contract list)"
            elif date and date > out.at[hit, "signing_date"]:
                # an "announcement" after the signing is a later report: the signing date stands
                out.at[hit, "note"] = f"{out.at[hit, 'note']}; contract list dated later ({date}): signing date kept"
            out.at[hit, "origin"] = f"{out.at[hit, 'origin']} + {r['origin']}"
            if snt:
                out.at[hit, "sign_and_trade"] = True
            continue
        after = seasons.teams(keys, year + 1) if year is not None else set()
        before = seasons.teams(keys, year) if year is not None else set()
        prev_why = f"season roster ({_describe(before)})" if before else "season roster (no rows)"
        if not before:
            frames = [g for k in keys for g in tx_by_key.get(k, [])]
            if frames and date:
                hist = pd.concat(frames)
                hist = hist[hist["_date"] < pd.Timestamp(date)].sort_values("_date", kind="mergesort")
                if len(hist):
                    before = {hist["_team"].iloc[-1]}
                    prev_why = f"latest transaction ({hist['_team'].iloc[-1]})"
        team, prev = single_team(after), single_team(before)
        if after and before and not (after & before):
            change: Any = True
        elif team is not None and prev is not None:
            change = team != prev
        else:
            change = pd.NA
        re_signing: Any = pd.NA if (team is None or prev is None) else (team == prev)
        new_rows.append(
            {
                "league": LEAGUE,
                "player": display_name(r["player"]),
                "signing_date": date,
                "team": team,
                "previous_team": prev,
                "team_change": change,
                "years": r["years"],
                "total_value": r["total_value"],
                "aav": r["total_value"] / r["years"],
                "status": None,
                "sign_and_trade": snt,
                "re_signing": re_signing,
                "date_rule": "announcement date (contract list)" if date else "missing",
                "origin": r["origin"],
                "note": (
                    f"contract list: {r['years']} years, ${r['total_value']:,.0f}"
                    f"; team: season roster ({_describe(after)}); previous team: {prev_why}"
                    + (f"; source {source}" if source else "")
                ),
                "_keys": keys,
                "_raw": r["player"],
                "_year": year,
            }
        )
    if new_rows:
        out = pd.concat([out, pd.DataFrame(new_rows)], ignore_index=True)
    return out, merged
