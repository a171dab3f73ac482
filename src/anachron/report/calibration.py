"""The verifier calibration report (``results/tables/calibration.md``): recall and false positives
on planted claims per task and layer set, the styles that miss the bar, the re-worded real claims
per date format and declared date, and the control-split OLR floor (docs/verification.md#calibration;
docs/verification.md#calibration). The numbers come from :mod:`anachron.verify.calibration`.
"""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd

from anachron.frames import is_na
from anachron.verify.calibration.evaluate import ALL_LEAKS, FP_MAX, PAPER_CONTROL_OLR, RECALL_MIN
from anachron.verify.calibration.real import REAL_FAMILIES
from anachron.verify.calibration.reword import DECLARED_MODES, REWORD_FORMATS


def _pct(x: float) -> str:
    return "n/a" if is_na(x) else f"{100 * x:.1f}%"


def _cell(row: pd.Series | None) -> str:
    if row is None:
        return "–"
    return f"{_pct(row['rate'])} [{_pct(row['ci_low'])}, {_pct(row['ci_high'])}] ({int(row['n_flagged'])}/{int(row['n'])})"


def calibration_markdown(table: pd.DataFrame, control: pd.DataFrame | None = None, *, recall_min: float = RECALL_MIN,
                         fp_max: float = FP_MAX, max_failing_styles: int = 40) -> str:
    """Markdown report of a calibration table (:func:`anachron.verify.calibration.calibrate`) and the
    control OLR floor.

    Per task and layer set: recall on planted post-cutoff facts, on planted outcome
    statements, and on both (the pass criterion), the false-positive rate on planted
    clean claims, each with its Wilson 95% interval and counts, and a PASS / FAIL line
    against recall >= ``recall_min`` and FP <= ``fp_max`` (point estimates; docs/verification.md#calibration).
    Then the wording styles that miss the bar, the re-worded real claims per family and date
    format and per family and declared mode (:func:`_real_claims_section`), and the
    control-split OLR (rows of a metrics table with metric == "olr", split == "control") next to
    the paper's 0.0-0.7% range (docs/metrics.md#control-floor).
    """
    lines = ["# Verifier calibration", "",
             f"Planted claims of known truth; recall on leaks (post-cutoff facts and outcome statements) must be "
             f">= {recall_min:.2f} and false positives on clean (pre-cutoff) claims <= {100 * fp_max:.0f}%, per task. "
             "Rates with Wilson 95% intervals (flagged/n). Undated and ambiguous claims count as not flagged.", "",
             "| task | layers | recall post-cutoff | recall outcome | recall all leaks | FP pre-cutoff | undated (leak/clean) | verdict |",
             "|---|---|---|---|---|---|---|---|"]
    overall = table[table["style"] == "all"]
    verdicts = []
    for (task, layers), g in overall.groupby(["task", "layers"], sort=True):
        by = {r["kind"]: r for _, r in g.iterrows()}
        leaks, pre = by.get(ALL_LEAKS), by.get("pre_cutoff")
        ok_recall = leaks is not None and leaks["rate"] >= recall_min
        ok_fp = pre is not None and pre["rate"] <= fp_max
        verdict = "PASS" if ok_recall and ok_fp else "FAIL"
        und_leak = int(leaks["n_undated"]) if leaks is not None else 0
        und_clean = int(pre["n_undated"]) if pre is not None else 0
        lines.append(f"| {task} | {layers} | {_cell(by.get('post_cutoff'))} | {_cell(by.get('outcome'))} | {_cell(leaks)} | "
                     f"{_cell(pre)} | {und_leak}/{und_clean} | {verdict} |")
        why = []
        why.append(f"recall {leaks['rate']:.3f} {'>=' if ok_recall else '<'} {recall_min:.2f}" if leaks is not None else "no planted leaks")
        why.append(f"FP {_pct(pre['rate'])} {'<=' if ok_fp else '>'} {_pct(fp_max)}" if pre is not None else "no planted clean claims")
        verdicts.append(f"- {task}, {layers}: **{verdict}** ({'; '.join(why)})")
    lines += ["", "## Pass / fail", "", *verdicts, ""]
    styles = table[table["style"] != "all"].copy()
    bad = styles[((styles["metric"] == "recall") & (styles["rate"] < recall_min)) | ((styles["metric"] == "fp_rate") & (styles["rate"] > fp_max))]
    bad = bad.assign(_miss=np.where(bad["metric"] == "recall", bad["n"] - bad["n_flagged"], bad["n_flagged"]),
                     _facet=bad["style"].str.contains("=") & ~bad["style"].str.contains(":declared="))
    for title, part in (("## Style facets that miss the bar", bad[bad["_facet"]]),
                        ("## Full wording styles that miss the bar", bad[~bad["_facet"]])):
        lines += [title, ""]
        if part.empty:
            lines += ["None.", ""]
            continue
        part = part.sort_values(["task", "layers", "_miss"], ascending=[True, True, False]).head(max_failing_styles)
        lines += ["| task | layers | kind | style | metric | rate | missed | n |", "|---|---|---|---|---|---|---|---|"]
        for _, r in part.iterrows():
            lines.append(f"| {r['task']} | {r['layers']} | {r['kind']} | `{r['style']}` | {r['metric']} | {_pct(r['rate'])} | "
                         f"{int(r['_miss'])} | {int(r['n'])} |")
        lines.append("")
    lines += _real_claims_section(table)
    lines += ["## Control split: OLR false-positive floor", ""]
    lo, hi = PAPER_CONTROL_OLR
    if control is None or control.empty:
        lines += ["No control-split OLR rows available.", ""]
    else:
        c = control
        if "metric" in c:
            c = c[c["metric"] == "olr"]
        if "split" in c:
            c = c[c["split"] == "control"]
        lines += [f"Instances dated after the model's knowledge cutoff cannot leak, so their OLR is the verifier's "
                  f"false-positive floor; the paper reports {_pct(lo)}-{_pct(hi)}.", "",
                  "| task | method | model | OLR | 95% CI | n | vs paper |", "|---|---|---|---|---|---|---|"]
        for _, r in c.sort_values([x for x in ("task", "method", "model") if x in c]).iterrows():
            v = float(r["value"])
            cmp_ = "within" if lo <= v <= hi else ("above" if v > hi else "below")
            lines.append(f"| {r.get('task', '')} | {r.get('method', '')} | {r.get('model', '')} | {_pct(v)} | "
                         f"[{_pct(r.get('ci_low', float('nan')))}, {_pct(r.get('ci_high', float('nan')))}] | {r.get('n', '')} | {cmp_} |")
        lines.append("")
    return "\n".join(lines)


def _real_claims_section(table: pd.DataFrame) -> list[str]:
    """Markdown lines: recall on post-cutoff and FP on pre-cutoff re-worded real claims (families
    :data:`~anachron.verify.calibration.real.REAL_FAMILIES`) per task, layer set and family, by date
    format (``family_date`` facet rows) and by declared date (``family_declared`` rows)."""
    lines = ["## Re-worded real claims", "",
             "Real news headlines and EDGAR figures as filed, their public date written in another format "
             "(or not at all) and the declared date honest, missing or falsely early "
             "(docs/verification.md#calibration).", ""]
    facets = table[table["style"].str.match(r"family_(?:date|declared)=", na=False)] if len(table) else table
    if not len(facets):
        lines += ["No re-worded real claims (no news snapshot or EDGAR facts).", ""]
        return lines
    parts = facets["style"].str.split("=", n=1)
    value = parts.str[1].str.split(":", n=1)
    facets = facets.assign(_facet=parts.str[0], _family=value.str[0], _what=value.str[1])
    facets = facets[facets["_family"].isin(REAL_FAMILIES)]
    if facets.empty:
        lines += ["No re-worded real claims (no news snapshot or EDGAR facts).", ""]
        return lines
    order = {v: i for i, v in enumerate((*REWORD_FORMATS, *DECLARED_MODES))}
    lines += ["| task | layers | family | date written / declared | recall post-cutoff | FP pre-cutoff |",
              "|---|---|---|---|---|---|"]
    for (task, layers, fam, fct), g in facets.groupby(["task", "layers", "_family", "_facet"], sort=True):
        by = {(r["_what"], r["kind"]): r for _, r in g.iterrows()}
        for what in sorted({w for w, _ in by}, key=lambda w: order.get(w, len(order))):
            label = f"date `{what}`" if fct == "family_date" else f"declared `{what}`"
            lines.append(f"| {task} | {layers} | {fam} | {label} | {_cell(by.get((what, 'post_cutoff')))} | "
                         f"{_cell(by.get((what, 'pre_cutoff')))} |")
    lines.append("")
    return lines


def calibration_report(con: duckdb.DuckDBPyConnection) -> str:
    """``results/tables/calibration.md``: verifier recall / false positives on planted claims, and the
    control-split OLR floor of every run (docs/metrics.md#control-floor; TEMPO App. G.5 reports 0.0-0.7%)."""
    have = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    table = con.execute("SELECT * FROM calibration").df() if "calibration" in have else pd.DataFrame()
    control = pd.DataFrame()
    if "metrics" in have:
        control = con.execute("SELECT * FROM metrics WHERE split = 'control' AND metric = 'olr'").df()
    return calibration_markdown(table, control)
