"""Glue for rule render_tables: every report table (anachron.report.tables) as Markdown, LaTeX and
HTML from results.duckdb, and the long verifier calibration report as calibration.md."""

from pathlib import Path

from anachron.io import write_text
from anachron.logs import log_to
from anachron.report.calibration import calibration_report
from anachron.report.registry import render_table
from anachron.store import connect_readonly

sm = snakemake  # noqa: F821 (injected by Snakemake)

with log_to(sm.log[0]) as log:
    outputs = [Path(p) for p in sm.output]
    con = connect_readonly(sm.input.db)
    try:
        files = {name: render_table(name, con) for name in dict.fromkeys(p.stem for p in outputs)}
        try:
            files["calibration"]["md"] = calibration_report(con)
        except Exception:  # noqa: BLE001 (an older database: calibration.md keeps the table's own no-data text)
            log.exception("calibration report: kept the compact table as calibration.md")
    finally:
        con.close()
    for p in outputs:
        write_text(p, files[p.stem][p.suffix.lstrip(".")])
    empty = sorted(name for name, f in files.items() if "No data" in f["html"])
    log.info("rendered %d tables (%d files); no data: %s", len(files), len(outputs), ", ".join(empty) or "none")
