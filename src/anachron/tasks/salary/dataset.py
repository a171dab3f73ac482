"""The salary task's dataset: free agents' new contracts and their average annual value (AAV).

Definition (docs/tasks.md#salary; TEMPO paper, App. D): predict the AAV in US dollars of
the free-agent contract of a player who changed teams. Training instances come from the
NHL (and the NFL / MLB where a table exists), evaluation instances from the NBA, a sport
held out of training. Thresholds: AAV >= $3M for the NHL and >= $5M for the NFL and MLB
(the paper's); the NBA threshold is configurable (default $3M, see :data:`CONFIG_SCHEMA`).
The cutoff is the day before the contract could first be known: the day before the league's
negotiating window opened for that offseason, unless the source dates the announcement earlier;
signings long after the window keep their own date (:func:`anachron.tasks.salary.windows.salary_cutoff`,
the window table :data:`~anachron.tasks.salary.windows.NEGOTIATING_WINDOWS`). Signings without a
date (the NHL tables; the source's ``date_rule`` "free-agency opening fallback") take their
year's window.

Inputs are the ``signings`` tables of the sources ``nba`` and ``nhl``
(:data:`anachron.sources.signings.SIGNING_COLUMNS`); any further table with the same
columns (an ``nfl`` or ``mlb`` source) is used by its ``league`` column.

Instances share the columns of every task: ``instance_id, task, split, cutoff_date,
inputs, label, provenance`` (``inputs``, ``label`` and ``provenance`` are JSON strings).
The prompt shows the sport, the year, the player and his free-agent status only — not the
team he signs with, which is part of the outcome.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any, Mapping

import numpy as np
import pandas as pd

from anachron.frames import is_na, text_or_none
from anachron.sources.base import check_columns
from anachron.sources.player_names import normalize_name
from anachron.sources.signings import SIGNING_COLUMNS
from anachron.tasks.base import INSTANCE_COLUMNS
from anachron.tasks.salary.windows import (
    EARLY_DAYS,
    LATE_REPORT_LEAD_DAYS,
    WINDOW_SPAN_DAYS,
    WindowError,
    dated_by,
    salary_cutoff,
    window_table,
)

log = logging.getLogger(__name__)

TASK = "salary"
#: Source tables the builder reads (``data/raw/{source}/data.parquet``).
SOURCE_TABLES = ("nba", "nhl")
REQUIRED_COLUMNS = [c for c in SIGNING_COLUMNS if c != "note"]
EXCLUSION_COLUMNS = ["source", "league", "player", "signing_date", "reason", "detail"]

#: Sport named in the prompt for each league.
SPORTS = {
    "NBA": "basketball",
    "NHL": "ice hockey",
    "NFL": "American football",
    "MLB": "baseball",
    "WNBA": "basketball",
    "MLS": "soccer",
}
#: ``date_rule`` of signings dated by a league's free-agency opening (no recorded date).
FALLBACK_DATE_RULE = "free-agency opening fallback"

#: Exclusion reasons (the ``reason`` column of the exclusions frame).
REASON_LEAGUE = "league_not_configured"
REASON_INVALID_AAV = "invalid_aav"
REASON_NO_DATE = "no_signing_date"
REASON_UNDATED = "undated_signing"
REASON_YEARS = "outside_eval_years"
REASON_TEAM_UNKNOWN = "team_change_unknown"
REASON_NO_CHANGE = "no_team_change"
REASON_SNT = "sign_and_trade_excluded"
REASON_BELOW_MIN = "below_min_aav"
REASON_DUPLICATE = "duplicate_player_year"
REASON_OVERLAP = "overlap_with_eval"
REASON_NO_WINDOW = "no_negotiating_window"

#: JSON Schema (draft 2020-12) of the ``tasks.salary`` config block.
CONFIG_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "tasks.salary",
    "description": (
        "Free-agent contract AAV (docs/tasks.md#salary): train on NHL (and NFL/MLB where data exist), "
        "evaluate on NBA, cutoff = the day before the contract could first be known (the negotiating window's "
        "opening). Built from the sources nba and nhl."
    ),
    "type": "object",
    "additionalProperties": False,
    "default": {},
    "properties": {
        "seed": {
            "description": "Seed of the (stable, pseudo-random) order of the instances; the set itself is built whole.",
            "type": "integer",
            "default": 42,
        },
        "eval_league": {
            "description": "League held out for evaluation (its signings form the eval split).",
            "type": "string",
            "default": "NBA",
        },
        "eval_start_year": {
            "description": "First signing year of the eval split (inclusive).",
            "type": "integer",
            "minimum": 1990,
            "default": 2019,
        },
        "eval_end_year": {
            "description": "Last signing year of the eval split (inclusive).",
            "type": "integer",
            "minimum": 1990,
            "default": 2023,
        },
        "eval_min_aav": {
            "description": (
                "Minimum AAV (USD) of an eval contract. Default 3,000,000: the NHL training threshold, and it leaves "
                "out most minimum-scale NBA deals, whose AAV the CBA fixes; 0 keeps every contract."
            ),
            "type": "number",
            "minimum": 0,
            "default": 3000000,
        },
        "eval_require_date": {
            "description": "Eval signings need a recorded signing/announcement date (fallback-dated ones are excluded).",
            "type": "boolean",
            "default": True,
        },
        "train_min_aav": {
            "description": (
                "Training leagues and their minimum AAV (USD): the paper's $3M for the NHL and $5M for the NFL and MLB. "
                "A league without a source table simply contributes nothing."
            ),
            "type": "object",
            "additionalProperties": {"type": "number", "minimum": 0},
            "default": {"NHL": 3000000, "NFL": 5000000, "MLB": 5000000},
        },
        "require_team_change": {
            "description": "Keep only contracts of players who changed teams (a sign-and-trade counts as a change).",
            "type": "boolean",
            "default": True,
        },
        "include_sign_and_trades": {
            "description": "Keep sign-and-trade contracts (stated or inferred by the nba source).",
            "type": "boolean",
            "default": True,
        },
        "negotiating_windows": {
            "description": (
                "Extra or corrected negotiating windows: league -> {year: ISO day terms could first be agreed}, "
                "over the task's table (anachron.tasks.salary.windows.NEGOTIATING_WINDOWS, with its sources)."
            ),
            "type": "object",
            "additionalProperties": {"type": "object", "additionalProperties": {"type": "string", "format": "date"}},
            "default": {},
        },
        "window_span_days": {
            "description": (
                "A contract dated at most this many days after its window opened takes the window's cutoff (the day "
                "before it opened); later ones are dated by themselves."
            ),
            "type": "integer",
            "minimum": 0,
            "default": WINDOW_SPAN_DAYS,
        },
        "early_report_days": {
            "description": "An announcement at most this many days before a window opened belongs to that offseason.",
            "type": "integer",
            "minimum": 0,
            "default": EARLY_DAYS,
        },
        "late_report_lead_days": {
            "description": (
                "A late signing known only by its signing date is dated this many days earlier (it may have been "
                "agreed and reported before it was signed)."
            ),
            "type": "integer",
            "minimum": 0,
            "default": LATE_REPORT_LEAD_DAYS,
        },
        "control_after_knowledge_cutoff": {
            "description": (
                "Signings whose cutoff lies after every configured model's knowledge cutoff go to the control split "
                "(no model can know their outcome) instead of train/eval."
            ),
            "type": "boolean",
            "default": True,
        },
    },
}

_DEFAULTS = {k: v["default"] for k, v in CONFIG_SCHEMA["properties"].items()}


def _config(task_config: Mapping[str, Any] | None) -> dict[str, Any]:
    cfg = {k: (dict(v) if isinstance(v, dict) else v) for k, v in _DEFAULTS.items()}
    unknown = sorted(set(task_config or {}) - set(cfg))
    if unknown:
        raise ValueError(f"tasks.salary: unknown key(s) {unknown}; known: {sorted(cfg)}")
    cfg.update(task_config or {})
    cfg["eval_league"] = str(cfg["eval_league"]).upper()
    cfg["train_min_aav"] = {str(k).upper(): float(v) for k, v in (cfg["train_min_aav"] or {}).items()}
    if cfg["eval_league"] in cfg["train_min_aav"]:
        raise ValueError(f"tasks.salary: eval_league {cfg['eval_league']!r} is also a training league (train_min_aav)")
    if int(cfg["eval_end_year"]) < int(cfg["eval_start_year"]):
        raise ValueError("tasks.salary: eval_end_year is before eval_start_year")
    for key in ("eval_min_aav", "window_span_days", "early_report_days", "late_report_lead_days"):
        if float(cfg[key]) < 0:
            raise ValueError(f"tasks.salary.{key} must be >= 0")
    cfg["windows"] = window_table(cfg["negotiating_windows"])
    return cfg



def _str_or_none(value: Any) -> str | None:
    return text_or_none(value, is_na)


def _flag(value: Any) -> bool | None:
    if is_na(value):
        return None
    return bool(value)


def _order_key(seed: int, instance_id: str) -> str:
    return hashlib.sha256(f"{seed}:{instance_id}".encode("utf-8")).hexdigest()


def build_salary_instances(
    tables: Mapping[str, pd.DataFrame],
    task_config: Mapping[str, Any] | None,
    *,
    knowledge_cutoffs: Mapping[str, str],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Build salary instances from signings tables; return ``(instances, exclusions)``.

    Args:
        tables: source name -> signings table (:data:`REQUIRED_COLUMNS`; sources ``nba``
            and ``nhl``, others used by their ``league`` column).
        task_config: the ``tasks.salary`` block (:data:`CONFIG_SCHEMA`; missing keys take
            their defaults).
        knowledge_cutoffs: model name -> ISO knowledge cutoff; with
            ``control_after_knowledge_cutoff`` a signing whose cutoff is after all of them
            becomes a ``control`` instance.

    Rules, per signing, first failing one names the exclusion reason: the league is the
    eval league or a training league (``league_not_configured``); AAV positive
    (``invalid_aav``); a signing date (``no_signing_date``); eval only: a recorded date,
    not the free-agency fallback (``undated_signing``), and a year in
    ``eval_start_year..eval_end_year`` (``outside_eval_years``); a team change known
    (``team_change_unknown``) and true (``no_team_change``); sign-and-trades allowed
    (``sign_and_trade_excluded``); AAV at or above the league's threshold
    (``below_min_aav``); one contract per (league, player, year)
    (``duplicate_player_year``, the earliest kept). A training player-year that also is an
    eval player-year (same normalised name and year) is dropped from training
    (``overlap_with_eval``). Cutoff: :func:`~anachron.tasks.salary.windows.salary_cutoff` (the
    day before the negotiating window opened, the announcement's eve, or a late signing's own
    date); a signing whose offseason has no window in the table is excluded
    (``no_negotiating_window``).

    Returns:
        ``instances`` with :data:`~anachron.tasks.base.INSTANCE_COLUMNS` — ``instance_id``
        ``salary-<split>-<league>-<year>-<player-slug>``, ``inputs`` JSON {sport, league,
        year, player, status}, ``label`` JSON {aav, total_value (USD), years, team,
        previous_team, signing_date, date_rule, cutoff_rule, window_opens, sign_and_trade,
        re_signing}, ``provenance``
        JSON {source, origin, note, seed} — in a seeded stable order; ``exclusions`` with
        :data:`EXCLUSION_COLUMNS`.

    Raises:
        ValueError: for a bad config or when no table is given.
        SourceError: when a table lacks a required column.
    """
    cfg = _config(task_config)
    if not tables:
        raise ValueError(f"salary needs at least one signings table (sources {', '.join(SOURCE_TABLES)})")
    frames = []
    for name, df in tables.items():
        check_columns(df, REQUIRED_COLUMNS, f"salary source table {name!r}")
        frames.append(df.assign(_source=name))
    data = pd.concat(frames, ignore_index=True)
    data["_date"] = pd.to_datetime(data["signing_date"], errors="coerce")
    data = data.sort_values(["_date", "_source", "player", "origin"], kind="mergesort", na_position="last").reset_index(
        drop=True
    )

    eval_league = cfg["eval_league"]
    train_min = cfg["train_min_aav"]
    hi = max(knowledge_cutoffs.values()) if (knowledge_cutoffs and cfg["control_after_knowledge_cutoff"]) else None

    kept: list[dict[str, Any]] = []
    exclusions: list[dict[str, Any]] = []
    seen: set[tuple[str, str, int]] = set()

    def exclude(r: Any, reason: str, detail: str) -> None:
        exclusions.append(
            {
                "source": r["_source"],
                "league": str(r["league"]),
                "player": str(r["player"]),
                "signing_date": _str_or_none(r["signing_date"]),
                "reason": reason,
                "detail": detail,
            }
        )

    for _, r in data.iterrows():
        league = str(r["league"]).strip().upper()
        is_eval = league == eval_league
        if not is_eval and league not in train_min:
            exclude(r, REASON_LEAGUE, f"league {league} is neither eval_league nor in train_min_aav")
            continue
        aav = pd.to_numeric(r["aav"], errors="coerce")
        if pd.isna(aav) or not np.isfinite(aav) or aav <= 0:
            exclude(r, REASON_INVALID_AAV, f"aav {r['aav']!r}")
            continue
        day = r["_date"]
        if pd.isna(day):
            exclude(r, REASON_NO_DATE, "no signing or announcement date")
            continue
        year = int(day.year)
        if is_eval:
            if cfg["eval_require_date"] and _str_or_none(r["date_rule"]) == FALLBACK_DATE_RULE:
                exclude(r, REASON_UNDATED, "dated by the free-agency opening fallback")
                continue
            if not int(cfg["eval_start_year"]) <= year <= int(cfg["eval_end_year"]):
                exclude(r, REASON_YEARS, f"signed in {year}, outside {cfg['eval_start_year']}..{cfg['eval_end_year']}")
                continue
        change = _flag(r["team_change"])
        if cfg["require_team_change"]:
            if change is None:
                exclude(r, REASON_TEAM_UNKNOWN, f"team {r['team']!r}, previous team {r['previous_team']!r}")
                continue
            if not change:
                exclude(r, REASON_NO_CHANGE, f"stayed with {r['team']!r}")
                continue
        snt = bool(_flag(r["sign_and_trade"]))
        if snt and not cfg["include_sign_and_trades"]:
            exclude(r, REASON_SNT, "sign-and-trade")
            continue
        threshold = float(cfg["eval_min_aav"]) if is_eval else train_min[league]
        if aav < threshold:
            exclude(r, REASON_BELOW_MIN, f"AAV ${aav:,.0f} < ${threshold:,.0f}")
            continue
        try:
            cut = salary_cutoff(
                league,
                day.date(),
                dated_by(r["date_rule"]),
                cfg["windows"],
                span_days=int(cfg["window_span_days"]),
                early_days=int(cfg["early_report_days"]),
                report_lead_days=int(cfg["late_report_lead_days"]),
            )
        except WindowError as exc:
            exclude(r, exc.reason, exc.detail)
            continue
        key = (league, normalize_name(r["player"]), year)
        if key in seen:
            exclude(r, REASON_DUPLICATE, f"another {league} contract of this player in {year} is kept")
            continue
        seen.add(key)
        kept.append({"row": r, "league": league, "year": year, "aav": float(aav), "is_eval": is_eval, "cutoff": cut})

    eval_player_years = {(normalize_name(k["row"]["player"]), k["year"]) for k in kept if k["is_eval"]}
    rows: list[dict[str, Any]] = []
    used_ids: set[str] = set()
    for k in kept:
        r, league, year = k["row"], k["league"], k["year"]
        if not k["is_eval"] and (normalize_name(r["player"]), year) in eval_player_years:
            exclude(r, REASON_OVERLAP, f"same player name and year as an {eval_league} eval instance")
            continue
        cutoff = k["cutoff"].day.isoformat()
        split = "eval" if k["is_eval"] else "train"
        if hi is not None and cutoff > hi:
            split = "control"
        slug = normalize_name(r["player"]).replace(" ", "-") or "player"
        base = f"{TASK}-{split}-{league.lower()}-{year}-{slug}"
        iid, n = base, 2
        while iid in used_ids:
            iid, n = f"{base}-{n}", n + 1
        used_ids.add(iid)
        years = pd.to_numeric(r["years"], errors="coerce")
        total = pd.to_numeric(r["total_value"], errors="coerce")
        inputs = {
            "sport": SPORTS.get(league, league.lower()),
            "league": league,
            "year": year,
            "player": str(r["player"]),
            "status": _str_or_none(r["status"]),
        }
        label = {
            "aav": k["aav"],
            "total_value": None if pd.isna(total) else float(total),
            "years": None if pd.isna(years) else int(years),
            "team": _str_or_none(r["team"]),
            "previous_team": _str_or_none(r["previous_team"]),
            "signing_date": r["_date"].date().isoformat(),
            "date_rule": _str_or_none(r["date_rule"]),
            "cutoff_rule": k["cutoff"].rule,
            "window_opens": k["cutoff"].window.opens.isoformat() if k["cutoff"].window else None,
            "sign_and_trade": bool(_flag(r["sign_and_trade"])),
            "re_signing": _flag(r["re_signing"]),
        }
        provenance = {
            "source": r["_source"],
            "origin": _str_or_none(r["origin"]),
            "note": _str_or_none(r["note"]) if "note" in r.index else None,
            "seed": int(cfg["seed"]),
        }
        rows.append(
            {
                "instance_id": iid,
                "task": TASK,
                "split": split,
                "cutoff_date": cutoff,
                "inputs": json.dumps(inputs, ensure_ascii=False),
                "label": json.dumps(label, ensure_ascii=False),
                "provenance": json.dumps(provenance, ensure_ascii=False, sort_keys=True),
                "_order": _order_key(int(cfg["seed"]), iid),
            }
        )
    instances = pd.DataFrame(rows, columns=INSTANCE_COLUMNS + ["_order"])
    instances = instances.sort_values("_order", kind="mergesort").drop(columns="_order").reset_index(drop=True)
    for c in INSTANCE_COLUMNS:
        instances[c] = instances[c].astype("str")
    excl = pd.DataFrame(exclusions, columns=EXCLUSION_COLUMNS)
    excl = excl.astype({c: "object" for c in EXCLUSION_COLUMNS})
    log.info(
        "salary: %s instances; %d excluded (%s)",
        instances["split"].value_counts().to_dict(),
        len(excl),
        excl["reason"].value_counts().to_dict(),
    )
    return instances, excl
