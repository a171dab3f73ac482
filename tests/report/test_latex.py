"""Every LaTeX table compiles with pdflatex (booktabs), from the fixture database and from one with
no data (skipped where no TeX engine is installed: Debian texlive-latex-recommended)."""

from __future__ import annotations

import shutil
import subprocess

import duckdb
import pytest
from results_fixture import write_results_db

from anachron.report.registry import render_table
from anachron.report.tables import TABLE_NAMES

PDFLATEX = shutil.which("pdflatex")
pytestmark = pytest.mark.skipif(PDFLATEX is None, reason="no pdflatex (apt-get install texlive-latex-recommended)")

DOCUMENT = r"""\documentclass{article}
\usepackage[T1]{fontenc}
\usepackage[utf8]{inputenc}
\usepackage{booktabs}
\usepackage[margin=1cm,landscape]{geometry}
\begin{document}
%s
\end{document}
"""


@pytest.mark.parametrize("drop", [(), ("instance_scores", "llm_calls", "training_log", "calibration", "tool_calls")])
def test_every_table_compiles(tmp_path, drop):
    db = write_results_db(tmp_path / "db", drop=drop)
    with duckdb.connect(str(db), read_only=True) as con:
        tables = [render_table(name, con)["tex"] for name in TABLE_NAMES]
    (tmp_path / "doc.tex").write_text(DOCUMENT % "\n\\clearpage\n".join(tables), encoding="utf-8")
    res = subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "doc.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    errors = [line for line in res.stdout.splitlines() if line.startswith("!")]
    assert res.returncode == 0 and not errors, (errors, res.stdout[-2000:])
    assert (tmp_path / "doc.pdf").stat().st_size > 1000
