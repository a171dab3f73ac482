"""``anachron compare A B``: paired comparison of two runs' per-instance scores.

A and B are each either

* a file of instance scores — Parquet or CSV with an ``instance_id`` column and the metric
  column, or JSON ``{"<instance_id>": value, ...}`` (the Anachron v0 export) or a list of
  records; or
* a run spec ``task/method/model`` looked up in ``results.duckdb``: the ``trace_scores``
  table for trace metrics (``tclr``, ``survivorship``, ...) and ``instance_scores`` for
  ``olr``, ``perf``, ``cov``.

The statistics are :func:`anachron.metrics.paired.paired_comparison` (mean difference B − A,
paired percentile bootstrap CI, exact two-sided sign test, improved / worsened / tied, relative
reduction). Both inputs must hold the same instance ids and rates in [0, 1].
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from anachron.errors import AnachronError
from anachron.frames import require_columns
from anachron.metrics.paired import PairingError, paired_comparison
from anachron.report.paired import paired_text

DEFAULT_DB = "results/results.duckdb"
#: Tables searched for a run spec's metric, in order.
SCORE_TABLES = ("trace_scores", "instance_scores")
#: Metrics where a higher value is better (all others, leakage rates, lower is better).
HIGHER_IS_BETTER = frozenset({"perf", "cov", "parse_rate", "parsed"})
FILE_SUFFIXES = (".parquet", ".csv", ".json")


class CompareError(AnachronError):
    """A compare input that cannot be read (missing file, column, table or run)."""


def _filter_split(df: pd.DataFrame, split: str | None, origin: str) -> pd.DataFrame:
    if split and split != "all" and "split" in df.columns:
        df = df[df["split"] == split]
        if not len(df):
            raise CompareError(f"{origin}: no rows with split {split!r} (use --split all to keep every split)")
    return df


def _series(df: pd.DataFrame, metric: str, origin: str) -> pd.Series:
    require_columns(df, ("instance_id", metric), origin, error=CompareError)
    if df["instance_id"].duplicated().any():
        dup = df.loc[df["instance_id"].duplicated(), "instance_id"].head(3).tolist()
        raise CompareError(
            f"{origin}: instance ids repeat (e.g. {dup}); the file holds several runs — keep one run per file"
        )
    return pd.Series(pd.to_numeric(df[metric], errors="coerce").to_numpy(dtype=float),
                     index=df["instance_id"].astype(str).to_numpy(), name=metric)


def read_score_file(path: str | Path, metric: str, *, split: str | None = "eval") -> pd.Series:
    """Per-instance ``metric`` values from a Parquet, CSV or JSON file, indexed by instance id.

    JSON may be ``{"id": value}`` (then ``metric`` is not looked up) or a list of records.
    A ``split`` column, when present, is filtered to ``split`` (``"all"`` or None keeps all).

    Raises:
        CompareError: unreadable file, missing column, repeated instance ids.
    """
    p = Path(path)
    origin = str(p)
    try:
        if p.suffix == ".parquet":
            df = pd.read_parquet(p)
        elif p.suffix == ".csv":
            df = pd.read_csv(p)
        elif p.suffix == ".json":
            data = json.loads(p.read_text())
            if isinstance(data, dict):
                return pd.Series({str(k): (float("nan") if v is None else float(v)) for k, v in data.items()},
                                 name=metric, dtype=float)
            df = pd.DataFrame.from_records(data)
        else:
            raise CompareError(f"{origin}: unknown file type (use {', '.join(FILE_SUFFIXES)})")
    except CompareError:
        raise
    except (OSError, ValueError, TypeError) as exc:
        raise CompareError(f"{origin}: cannot read scores: {exc}") from exc
    return _series(_filter_split(df, split, origin), metric, origin)


def read_run_scores(con: Any, spec: str, metric: str, *, split: str | None = "eval") -> pd.Series:
    """Per-instance ``metric`` of run ``task/method/model`` from an open results database.

    Looks in :data:`SCORE_TABLES` for the first table that has a ``metric`` column.

    Raises:
        CompareError: bad spec, no table with the metric, or no rows for the run.
    """
    parts = spec.split("/")
    if len(parts) != 3 or not all(parts):
        raise CompareError(f"{spec!r} is neither an existing score file nor a run spec task/method/model")
    task, method, model = parts
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    for table in SCORE_TABLES:
        if table not in tables:
            continue
        cols = [r[0] for r in con.execute(f'SELECT * FROM "{table}" LIMIT 0').description]
        if metric not in cols:
            continue
        df = con.execute(
            f'SELECT * FROM "{table}" WHERE task = ? AND method = ? AND model = ?', [task, method, model]
        ).df()
        if not len(df):
            runs = con.execute(f'SELECT DISTINCT task, method, model FROM "{table}" ORDER BY 1, 2, 3').fetchall()
            known = ", ".join("/".join(r) for r in runs[:20]) or "none"
            raise CompareError(f"no rows for run {spec} in table {table} (runs there: {known})")
        return _series(_filter_split(df, split, f"{table} {spec}"), metric, f"{table} {spec}")
    raise CompareError(
        f"no table with a column {metric!r} in the database (looked in {', '.join(SCORE_TABLES)}; "
        f"tables present: {', '.join(sorted(tables)) or 'none'})"
    )


def load_scores(spec: str, metric: str, *, db: str | Path = DEFAULT_DB, split: str | None = "eval") -> pd.Series:
    """Scores for one compare argument: a file if ``spec`` names one, else a run in ``db``.

    Raises:
        CompareError: see :func:`read_score_file` and :func:`read_run_scores`.
        FileNotFoundError: the database is missing (a run spec was given).
    """
    p = Path(spec)
    if p.is_file() or p.suffix in FILE_SUFFIXES:
        if not p.is_file():
            raise CompareError(f"{spec}: no such file")
        return read_score_file(p, metric, split=split)
    from anachron.store import connect_readonly

    con = connect_readonly(db)
    try:
        return read_run_scores(con, spec, metric, split=split)
    finally:
        con.close()


def compare_main(args: argparse.Namespace) -> int:
    """Run ``anachron compare`` for parsed ``args``; print the report; return the exit status.

    Exit 0 on success, 2 when an input cannot be read, the two inputs do not hold the same
    instance ids (the unpaired ids are named), a value lies outside [0, 1], or no pair has a
    value on both sides (message on stderr).
    """
    try:
        a = load_scores(args.a, args.metric, db=args.db, split=args.split)
        b = load_scores(args.b, args.metric, db=args.db, split=args.split)
    except (CompareError, FileNotFoundError) as exc:
        print(f"anachron compare: {exc}", file=sys.stderr)
        return 2
    lower = args.lower_is_better
    if lower is None:
        lower = args.metric not in HIGHER_IS_BETTER
    try:
        res = paired_comparison(a, b, n_resamples=args.n_resamples, confidence=args.confidence, seed=args.seed,
                                lower_is_better=lower)
    except PairingError as exc:
        print(f"anachron compare: {args.a} vs {args.b}: {exc}", file=sys.stderr)
        return 2
    if res.n == 0:
        print(f"anachron compare: {args.a} and {args.b} share no instance with a {args.metric} value", file=sys.stderr)
        return 2
    if args.format == "json":
        out = {"a": args.a, "b": args.b, "metric": args.metric, "split": args.split, **res.to_dict()}
        sys.stdout.write(json.dumps(out, indent=2, allow_nan=False) + "\n")
    else:
        sys.stdout.write(paired_text(res, label_a=args.a, label_b=args.b, metric=args.metric))
    return 0


def add_compare_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``compare`` subcommand to ``subparsers`` (from ``ArgumentParser.add_subparsers``)."""
    p = subparsers.add_parser(
        "compare",
        help="paired comparison of two runs (mean difference, bootstrap CI, sign test)",
        description=(
            "Compare per-instance scores of run B against run A over the instances both have: mean "
            "difference B - A, paired percentile bootstrap CI, exact two-sided sign test, improved / "
            "worsened / tied counts."
        ),
        epilog=(
            "examples:\n"
            "  anachron compare stock/rag_unrestricted/smollm2 stock/rag/smollm2 --metric tclr\n"
            "  anachron compare unrestricted.parquet enforced.parquet --format json\n"
            "A and B: a Parquet/CSV file (instance_id + metric column), a JSON {instance_id: value} file, "
            "or task/method/model looked up in the database (tables trace_scores, instance_scores)."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("a", help="baseline: a score file or task/method/model")
    p.add_argument("b", help="compared run: a score file or task/method/model")
    p.add_argument("--metric", default="tclr", help="per-instance metric column (default: tclr)")
    p.add_argument("--db", default=DEFAULT_DB, help=f"results database for run specs (default: {DEFAULT_DB})")
    p.add_argument("--split", default="eval", help="keep rows of this split when there is a split column; 'all' keeps every split (default: eval)")
    p.add_argument("--format", choices=("table", "json"), default="table", help="output format")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--lower-is-better", dest="lower_is_better", action="store_true", default=None,
                   help="a decrease counts as improved (default for every metric but perf, cov, parse_rate)")
    g.add_argument("--higher-is-better", dest="lower_is_better", action="store_false",
                   help="an increase counts as improved (default for perf, cov, parse_rate)")
    p.add_argument("--n-resamples", type=int, default=10000, help="bootstrap resamples (default: 10000)")
    p.add_argument("--confidence", type=float, default=0.95, help="CI level (default: 0.95)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    p.set_defaults(func=compare_main)
    return p

