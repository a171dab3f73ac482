"""The ``anachron`` command: inspect and query a workflow's results.

The workflow itself runs through Snakemake (``snakemake --cores N``); this
command reads what it produced.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from anachron import __version__

DEFAULT_DB = "results/results.duckdb"

EPILOG = """\
examples:
  anachron show                                   # the runs that can be shown, with example commands
  anachron show stock/rag_unrestricted/smollm2    # a case study: the run's instance with the most
                                                  # leaked claims, then its other instances
  anachron show legal/timespec/smollm2 legal-eval-scotus-2014-12-1497 --format json
  anachron summary                                # the main table (OLR / Perf / Cov / parse rate)
                                                  # and the flagged tool calls, with reasons
  anachron query "SELECT * FROM metrics WHERE metric = 'olr'"
  anachron query "SELECT verdict, layer, count(*) FROM claims GROUP BY ALL" --format csv
  anachron tables                                 # tables and row counts
  anachron schema                                 # every config key with its default and meaning
  anachron compare stock/rag_unrestricted/smollm2 stock/rag/smollm2 --metric tclr

tables: instances, runs, llm_calls, completions, claims, tool_calls, instance_scores,
trace_scores, metrics; view: main_table. The workflow: `snakemake --cores 2` builds results/results.duckdb.
"""

SHOW_EPILOG = """\
A case study puts one instance's claims beside the verifier's verdicts: every claim with its
declared and effective date, verdict, deciding layer and reason, marked [LEAKED], [UNDATED] or
[AMBIGUOUS] ([ok] when clean) and whether the reasoning cites it; the reasoning with each [k]
resolved to evidence item k; prediction vs label, Perf, OLR, strict OLR, parse status; the search
calls with their flags (retrieval methods); the method's steps with the supervisor's verdicts
(self_correction, timespec); the instance's LLM calls with tokens and cache hits.

examples:
  anachron show                                   # list the runs: instances per split, parse rate,
                                                  # mean OLR, instances with a leaked claim
  anachron show stock/rag_unrestricted/smollm2    # its instance with the most leaked claims
                                                  # (ties: highest OLR, then id) and the others
  anachron show stock/timespec/smollm2 stock-eval-2019-12-01-0003
  anachron show stock/rag/smollm2 --format json > case.json
  anachron show --db other/results.duckdb
"""


def _read(args: argparse.Namespace, fn) -> int:
    """Open the database read-only, run ``fn(con) -> DataFrame``, print it."""
    import duckdb

    from anachron.report.render import frame_text
    from anachron.store import connect_readonly

    con = connect_readonly(args.db)
    try:
        df = fn(con)
    except duckdb.Error as exc:
        print(f"anachron {args.command}: {exc}", file=sys.stderr)
        return 2
    finally:
        con.close()
    sys.stdout.write(frame_text(df, args.format))
    return 0


def _cmd_query(args: argparse.Namespace) -> int:
    return _read(args, lambda con: con.execute(args.sql).df())


#: Flagged tool calls ``anachron summary`` lists under the main table (the rest are counted).
SHOW_FLAGGED = 20


def flagged_calls_text(con, limit: int = SHOW_FLAGGED) -> str:
    """The "Flagged tool calls" section of ``anachron summary``: one line per call with a ``flag_reason``.

    Empty when ``tool_calls`` has no flagged call (or, in an older database, no ``flag_reason``).
    """
    from anachron.store import database_columns

    if "flag_reason" not in database_columns(con).get("tool_calls", set()):
        return ""
    where = "FROM tool_calls WHERE flag_reason IS NOT NULL"
    total = con.execute(f"SELECT count(*) {where}").fetchone()[0]
    if not total:
        return ""
    rows = con.execute(f"SELECT task, method, model, instance_id, seq, flag_reason {where} "
                       "ORDER BY task, method, model, instance_id, seq LIMIT ?", [limit]).fetchall()
    n_calls = con.execute("SELECT count(*) FROM tool_calls").fetchone()[0]
    lines = [f"\nFlagged tool calls: {total} of {n_calls}"
             + (f" (first {limit}; all: anachron query \"SELECT * FROM tool_calls WHERE flag_reason IS NOT NULL\")"
                if total > limit else "")]
    lines += [f"  {t}/{m}/{mo} {iid} #{seq}: {reason}" for t, m, mo, iid, seq, reason in rows]
    return "\n".join(lines) + "\n"


def _cmd_summary(args: argparse.Namespace) -> int:
    from anachron.report.render import format_main, main_table

    flagged: list[str] = []

    def summary(con):
        if args.format == "table":
            flagged.append(flagged_calls_text(con))
        return format_main(main_table(con))

    status = _read(args, summary)
    if status == 0 and flagged:
        sys.stdout.write(flagged[0])
    return status


def _cmd_show(args: argparse.Namespace) -> int:
    """``anachron show [RUN [INSTANCE]]``: the list of runs, or one instance as a case study.

    Exit status 2 with a message on stderr for an unknown run or instance or an unreadable database.
    """
    import json

    import duckdb

    from anachron.report.case import CaseError, case_study, case_text, list_runs, parse_run_spec, runs_text
    from anachron.store import connect_readonly

    try:
        con = connect_readonly(args.db)
    except duckdb.Error as exc:
        print(f"anachron show: cannot open {args.db}: {exc}", file=sys.stderr)
        return 2
    try:
        if args.run is None:
            doc = list_runs(con)
            text = runs_text(doc, args.db)
        else:
            doc = case_study(con, *parse_run_spec(args.run), args.instance, db=args.db)
            text = case_text(doc)
    except CaseError as exc:
        print(f"anachron show: {exc}", file=sys.stderr)
        return 2
    except duckdb.Error as exc:
        print(f"anachron show: cannot read {args.db}: {exc}. Rebuild it: snakemake --forcerun load_results",
              file=sys.stderr)
        return 2
    finally:
        con.close()
    sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n" if args.format == "json" else text)
    return 0


def _cmd_tables(args: argparse.Namespace) -> int:
    import pandas as pd

    def tables(con):
        names = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall()]
        return pd.DataFrame([{"table": n, "rows": con.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0]} for n in names])

    return _read(args, tables)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``anachron`` command."""
    parser = argparse.ArgumentParser(
        prog="anachron",
        description="Inspect the results of an anachron run (temporal leakage in LLM backtests).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"anachron {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--db", default=DEFAULT_DB, help=f"results database (default: {DEFAULT_DB})")
        p.add_argument("--format", choices=("table", "csv", "json"), default="table", help="output format")

    q = sub.add_parser("query", help="run a read-only SQL query against results.duckdb")
    q.add_argument("sql", help="SQL text; the database is opened read-only")
    common(q)
    q.set_defaults(func=_cmd_query)

    s = sub.add_parser("show", help="one instance of a run as a case study; without arguments, the runs to choose from",
                       description="Show one instance of a run as a case study (claims, verdicts, reasoning,\n"
                       "retrieval and supervisor steps), or list the runs.",
                       epilog=SHOW_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("run", nargs="?", metavar="TASK/METHOD/MODEL", help="the run, e.g. stock/rag/smollm2; omit to list runs")
    s.add_argument("instance", nargs="?", metavar="INSTANCE",
                   help="instance id; default: the run's instance with the most leaked claims")
    s.add_argument("--db", default=DEFAULT_DB, help=f"results database (default: {DEFAULT_DB})")
    s.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    s.set_defaults(func=_cmd_show)

    su = sub.add_parser("summary", help="print the main table (OLR / Perf / Cov / parse rate) and the flagged tool calls")
    common(su)
    su.set_defaults(func=_cmd_summary)

    t = sub.add_parser("tables", help="list the tables and their row counts")
    common(t)
    t.set_defaults(func=_cmd_tables)
    from anachron.compare import add_compare_parser

    add_compare_parser(sub)
    from anachron.estimate import add_estimate_parser

    add_estimate_parser(sub)

    sc = sub.add_parser("schema", help="print the full config JSON Schema (every key, default, description)")
    sc.set_defaults(func=_cmd_schema)
    return parser


def _cmd_schema(args: argparse.Namespace) -> int:
    import json

    from anachron.config import load_schema

    sys.stdout.write(json.dumps(load_schema(), indent=2) + "\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args))
    except FileNotFoundError as exc:
        print(f"anachron: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
