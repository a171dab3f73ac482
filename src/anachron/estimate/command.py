"""The ``anachron estimate`` subcommand: its parser, the text table and the command (docs/running.md#estimate)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import Any

import pandas as pd

from anachron.estimate.comparison import actual_usage, compare
from anachron.estimate.counting import CHARS_PER_TOKEN, MESSAGE_TOKENS, Assumptions, estimate, summarize, totals
from anachron.frames import is_null

HELP = """\
Print, before anything runs, what a config will ask of the models: per task x method x model the
instances, LLM calls, searches, tokens and cost, with the verifier's, Shapley's and the calibration's
calls where configured. No key and no network are needed.

  instances   drawn from the built datasets (--datasets) as the workflow draws them; without a
              dataset from the config: an upper bound, or unknown
  calls       from each method's call pattern (anachron/methods/*: call_pattern), with the
              assumptions below for what depends on the answers
  searches    search calls logged as tool calls (at most queries_max per instance); claim_searches:
              searches that date claims (TimeSPEC's supervisor, the corpus layer), not logged
  tokens      prompts rendered for a few instances, characters / 4 + 4 per message; completions at
              max_tokens x --completion-share (1 = upper bound)
  cost        tokens at the config's prices (key prices; local/ and mock/ models free; unknown without)

With --db (after a run), the estimate is set beside what results.duckdb recorded: calls, cache hits,
searches, tokens, and the cost spent (calls that were not cache hits) and of all calls.
"""


def add_estimate_parser(sub: Any) -> None:
    """Add the ``estimate`` subcommand to the ``anachron`` command's subparsers."""
    p = sub.add_parser("estimate", help="count instances, LLM calls, searches, tokens and cost of a config before it runs",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("config", nargs="?", default="config/config.yaml", help="config file (default: config/config.yaml)")
    p.add_argument("--datasets", default="results/datasets", help="directory of the built datasets (default: results/datasets)")
    p.add_argument("--db", default=None, help="after a run: compare with this results.duckdb (e.g. results/results.duckdb)")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help="output format")
    p.add_argument("--by-step", action="store_true", help="one row per LLM call step instead of per run")
    d = Assumptions()
    p.add_argument("--claims", type=int, default=None, metavar="N",
                   help="assumed claims per answer (default: the method's max_evidence)")
    p.add_argument("--flagged-share", type=float, default=d.flagged_share, metavar="F",
                   help=f"assumed share of supervised instances regenerated (default {d.flagged_share})")
    p.add_argument("--retry-rate", type=float, default=d.retry_rate, metavar="F",
                   help=f"assumed share of answers asked again per retry round (default {d.retry_rate})")
    p.add_argument("--completion-share", type=float, default=d.completion_share, metavar="F",
                   help=f"assumed share of max_tokens an answer uses (default {d.completion_share}: upper bound)")
    p.set_defaults(func=cmd_estimate)


def _fmt(v: Any, usd: bool = False) -> str:
    """A number for the text table: ``?`` when unknown, dollars with cents (4 decimals below $1),
    counts whole or with one decimal (expected values)."""
    if is_null(v):
        return "?"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if usd:
        return f"{v:,.4f}" if abs(v) < 1 else f"{v:,.2f}"
    return f"{v:,.0f}" if float(v).is_integer() or abs(v) >= 100 else f"{v:,.1f}"


def _table(df: pd.DataFrame) -> str:
    """``df`` as a Markdown table with :func:`_fmt` numbers (all cells right-aligned as text)."""
    if not len(df):
        return "(no rows)\n"
    shown = df.astype(object).copy()
    for c in shown.columns:
        shown[c] = [_fmt(v, usd="cost" in c) for v in df[c]]
    return shown.to_markdown(index=False, disable_numparse=True) + "\n"


def cmd_estimate(args: argparse.Namespace) -> int:
    """The ``anachron estimate`` command (see :data:`HELP`)."""
    import yaml

    from anachron.config import load_config
    from anachron.errors import ConfigError

    for name in ("flagged_share", "retry_rate", "completion_share"):
        v = getattr(args, name)
        if not 0 <= v <= 1:
            print(f"anachron estimate: --{name.replace('_', '-')} must be between 0 and 1, got {v}", file=sys.stderr)
            return 2
    if args.claims is not None and args.claims < 0:
        print(f"anachron estimate: --claims must be >= 0, got {args.claims}", file=sys.stderr)
        return 2
    try:
        config = load_config(args.config)
        assume = Assumptions(args.claims, args.flagged_share, args.retry_rate, args.completion_share)
        est = estimate(config, args.datasets, assume)
    except (ConfigError, yaml.YAMLError) as exc:
        print(f"anachron estimate: {args.config}: {exc}", file=sys.stderr)
        return 2
    summary = summarize(est)
    table = est.steps if args.by_step else summary
    comparison, notes = None, list(est.notes)
    if args.db:
        from anachron.store import connect_readonly

        con = connect_readonly(args.db)
        try:
            actual, more = actual_usage(con, config)
        finally:
            con.close()
        notes += more
        comparison = compare(summary, actual)
    if args.format == "json":
        doc = {"config": str(args.config), "datasets": str(args.datasets), "assumptions": asdict(est.assumptions),
               "chars_per_token": CHARS_PER_TOKEN, "totals": totals(summary),
               "rows": json.loads(table.to_json(orient="records")), "notes": notes}
        if comparison is not None:
            doc["comparison"] = json.loads(comparison.to_json(orient="records"))
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return 0
    if args.format == "csv":
        sys.stdout.write((comparison if comparison is not None else table).to_csv(index=False))
        return 0
    a = est.assumptions
    claims = "the method's max_evidence" if a.claims_per_instance is None else a.claims_per_instance
    out = [f"Estimate of {args.config} (datasets: {args.datasets}); no model is called.",
           f"Assumptions: claims per answer {claims}; flagged share {a.flagged_share}; retry rate {a.retry_rate}; "
           f"completions at {a.completion_share:g} x max_tokens; prompt tokens = characters / {CHARS_PER_TOKEN:g} "
           f"+ {MESSAGE_TOKENS} per message, measured on {a.sample_rows} instances per task.", "", _table(table)]
    t = totals(summary)
    out.append("Total: " + ", ".join(f"{k.replace('_', ' ')} {_fmt(v)}" for k, v in t.items())
               + " (? = unknown; USD; completion tokens and cost are upper bounds at completion share 1)\n")
    if comparison is not None:
        out += [f"Estimate vs {args.db} (cost_spent: calls that were not cache hits; cost_all: every call):", "",
                _table(comparison)]
    out += [f"Note: {n}" for n in notes]
    sys.stdout.write("\n".join(out) + ("\n" if notes else ""))
    return 0
