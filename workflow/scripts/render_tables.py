"""Glue for rule render_tables: the Markdown / LaTeX tables from results.duckdb."""

from anachron.io import write_text
from anachron.logs import log_to
from anachron.report.calibration import calibration_report
from anachron.report.paired import enforcement_report
from anachron.report.tables import MAIN_NOTE, dclr_report, format_main, main_table, to_latex, to_markdown
from anachron.store import connect_readonly

sm = snakemake  # noqa: F821 (injected by Snakemake)

with log_to(sm.log[0]) as log:
    con = connect_readonly(sm.input.db)
    try:
        table = format_main(main_table(con))
        traces = con.execute("SELECT * FROM trace_scores").df()
        dclr = dclr_report(con)
        calibration = calibration_report(con)
    finally:
        con.close()
    write_text(sm.output.enforcement, enforcement_report(traces))
    write_text(sm.output.md, to_markdown(table, "Main results: leakage, performance, coverage", MAIN_NOTE))
    write_text(sm.output.tex, to_latex(table, "OLR (and strict OLR, declared-only share), Perf, Cov and parse rate by task, method and model. " + MAIN_NOTE, "tab:main"))
    write_text(sm.output.dclr, dclr)
    write_text(sm.output.calibration, calibration)
    log.info("rendered %d main rows", len(table))
