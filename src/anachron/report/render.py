"""Cell formatting and the Markdown / LaTeX / HTML rendering of the report tables.

A report table reaches the renderers as a :class:`TableData`: its cells already formatted as
text (the numbers come from the SQL of the table modules, :mod:`anachron.report.tables`, the
formatting from the helpers here), the cells to set in bold (the best value of a block), the rows
that start a new block, and extra sentences for the caption; or, when there is nothing to show,
the reason.
:func:`render_markdown`, :func:`render_latex` and :func:`render_html` turn it into the three
files of ``results/tables/{name}.*``.

:func:`format_main` is the main results table as ``anachron show`` prints it (one row per task x
method x model x split: OLR %, strict OLR %, declared-only %, Perf, Cov %, parse %, with 95% CIs and
n), laid out as the TEMPO paper's Table 2 plus the parse rate.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import pandas as pd

from anachron.frames import is_na

if TYPE_CHECKING:
    import duckdb


def main_table(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The ``main_table`` view as a DataFrame (empty frame if no metrics)."""
    has_view = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'main_table'"
    ).fetchone()[0]
    if not has_view:
        return pd.DataFrame()
    return con.execute("SELECT * FROM main_table").df()


def fmt_ci(v: float | None, lo: float | None = None, hi: float | None = None, *, pct: bool = False,
           digits: int | None = None) -> str:
    """A value and, when both bounds are given, its CI: ``"25.0 [0.0, 50.0]"``; "–" when missing.

    ``pct``: a fraction shown as a percentage with one decimal; otherwise ``digits`` decimals (3).
    """
    if is_na(v):
        return "–"
    scale = 100.0 if pct else 1.0
    spec = f".{1 if pct else 3 if digits is None else digits}f"
    s = format(scale * v, spec)
    if not (is_na(lo) or is_na(hi)):
        s += f" [{format(scale * lo, spec)}, {format(scale * hi, spec)}]"
    return s


def as_count(v: object) -> int:
    """A count column's value as an int; 0 where it has none (a run with trace metrics only)."""
    return 0 if is_na(v) else int(v)


def format_main(df: pd.DataFrame) -> pd.DataFrame:
    """Human-readable main table: percentages with 95% CIs, Perf and perf_clean with CI, the share of
    Perf the leaks bought, n per metric (0 where a metric is missing; "–" where a run has no
    perf_clean)."""
    rows = []
    for r in df.itertuples(index=False):
        rows.append(
            {
                "Task": r.task,
                "Method": r.method,
                "Model": r.model,
                "Split": r.split,
                "n": as_count(r.n),
                "OLR % [95% CI]": fmt_ci(r.olr, r.olr_ci_low, r.olr_ci_high, pct=True),
                "n (OLR)": as_count(r.olr_n),
                "strict OLR % [95% CI]": fmt_ci(r.olr_strict, r.olr_strict_ci_low, r.olr_strict_ci_high, pct=True),
                "declared-only % [95% CI]": fmt_ci(
                    r.declared_only_rate, r.declared_only_rate_ci_low, r.declared_only_rate_ci_high, pct=True
                ),
                "Perf [95% CI]": fmt_ci(r.perf, r.perf_ci_low, r.perf_ci_high),
                "n (Perf)": as_count(r.perf_n),
                "perf_clean [95% CI]": fmt_ci(getattr(r, "perf_clean", None), getattr(r, "perf_clean_ci_low", None),
                                              getattr(r, "perf_clean_ci_high", None)),
                "leak share % [95% CI]": fmt_ci(getattr(r, "perf_leak_share", None), getattr(r, "perf_leak_share_ci_low", None),
                                                getattr(r, "perf_leak_share_ci_high", None), pct=True),
                "Cov %": fmt_ci(r.cov, pct=True),
                "Parse %": fmt_ci(r.parse_rate, pct=True),
            }
        )
    return pd.DataFrame(rows)


def frame_text(df: pd.DataFrame, fmt: str) -> str:
    """A query result as the ``anachron`` command prints it: ``csv``, ``json`` (records) or a Markdown table."""
    if fmt == "csv":
        return df.to_csv(index=False)
    if fmt == "json":
        return df.to_json(orient="records", date_format="iso", indent=2) + "\n"
    return (df.to_markdown(index=False) if len(df) else "(no rows)") + "\n"


# ----------------------------------------------------------------------------- rendering


@dataclass(frozen=True)
class TableData:
    """A report table ready to render, or the reason there is none.

    Attributes:
        frame: the cells as text, columns in display order (empty when ``reason`` is set).
        n_keys: the leading columns that name a row (left-aligned); the others are numbers
            (right-aligned).
        bold: ``(row position, column name)`` of the cells set in bold (the best of a block).
        blocks: row positions (> 0) that start a new block; a rule is drawn above them.
        notes: sentences added after the table's note (e.g. why a column says "n/a").
        reason: set when there is no data: why (rendered as "No data: <reason>").
    """

    frame: pd.DataFrame = field(default_factory=pd.DataFrame)
    n_keys: int = 0
    bold: frozenset[tuple[int, str]] = frozenset()
    blocks: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()
    reason: str | None = None

    @classmethod
    def no_data(cls, reason: str) -> TableData:
        """A table with nothing to show because of ``reason``."""
        return cls(reason=reason)

    @property
    def has_data(self) -> bool:
        """False when there is a reason (or no row) instead of a table."""
        return self.reason is None and len(self.frame) > 0

    def cells(self, mark: Callable[[str], str]) -> list[list[str]]:
        """Rows of cell strings, ``mark(text)`` applied to the bold cells."""
        cols = list(self.frame.columns)
        return [[mark(str(v)) if (i, c) in self.bold else str(v) for c, v in zip(cols, row)]
                for i, row in enumerate(self.frame.itertuples(index=False))]


def _note_text(note: str, data: TableData) -> str:
    return " ".join([note, *data.notes]).strip()


def _reason_text(data: TableData) -> str:
    return data.reason or "the table has no rows"


def render_markdown(data: TableData, title: str, note: str) -> str:
    """A Markdown document: ``# title``, the table (bold as ``**x**``), the note; or the no-data line."""
    if not data.has_data:
        return f"# {title}\n\n**No data:** {_reason_text(data)}\n\n{_note_text(note, data)}\n"
    cells = data.cells(lambda s: f"**{s}**" if s not in ("", "–") else s)
    ncol = len(data.frame.columns)
    align = ["left"] * data.n_keys + ["right"] * (ncol - data.n_keys)
    body = pd.DataFrame(cells, columns=data.frame.columns).to_markdown(
        index=False, colalign=align, disable_numparse=True)
    return f"# {title}\n\n{body}\n\n{_note_text(note, data)}\n"


#: Characters LaTeX reads as commands, and the Unicode signs the tables use, in LaTeX.
_LATEX = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
    "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "–": "--", "—": "---", "−": "$-$",
    "↓": r"$\downarrow$", "↑": r"$\uparrow$", "→": r"$\rightarrow$", "Δ": r"$\Delta$", "×": r"$\times$",
    "≤": r"$\leq$", "≥": r"$\geq$", "φ": r"$\varphi$", "Σ": r"$\Sigma$", "·": r"$\cdot$", "±": r"$\pm$",
    "…": r"\ldots{}", "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}", "§": r"\S{}",
}
_LATEX_RE = re.compile("|".join(re.escape(k) for k in _LATEX))


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped and the tables' Unicode signs as LaTeX
    (``%`` -> ``\\%``, ``–`` -> ``--``, ``↓`` -> ``$\\downarrow$``); Markdown code spans (`x`)
    become ``\\texttt{x}``."""
    parts = str(text).split("`")
    if len(parts) % 2 == 0:  # the last backtick is unpaired: a quote, not a code span
        parts[-2:] = [parts[-2] + "'" + parts[-1]]
    out = [_LATEX_RE.sub(lambda m: _LATEX[m.group(0)], p) for p in parts]
    return "".join(rf"\texttt{{{p}}}" if i % 2 else p for i, p in enumerate(out))


def render_latex(data: TableData, title: str, note: str, label: str) -> str:
    """A LaTeX ``table`` (booktabs; bold as ``\\textbf``; ``\\midrule`` between blocks) captioned
    ``title. note``; with no data, the same float with the reason in place of the tabular."""
    caption = latex_escape(f"{title}. {_note_text(note, data)}")
    head = [f"% {latex_escape(title)}: generated by anachron (results/tables); needs \\usepackage{{booktabs}}",
            r"\begin{table}[t]", r"\centering", r"\small"]
    tail = [rf"\caption{{{caption}}}", rf"\label{{{label}}}", r"\end{table}"]
    if not data.has_data:
        return "\n".join([*head, rf"\emph{{No data: {latex_escape(_reason_text(data))}}}", *tail]) + "\n"
    ncol = len(data.frame.columns)
    cols = "l" * data.n_keys + "r" * (ncol - data.n_keys)
    rows = data.cells(lambda s: s)
    bold = {(i, j) for i in range(len(rows)) for j, c in enumerate(data.frame.columns) if (i, c) in data.bold}
    lines = [*head, r"\setlength{\tabcolsep}{4pt}", rf"\begin{{tabular}}{{{cols}}}", r"\toprule",
             " & ".join(latex_escape(c) for c in data.frame.columns) + r" \\", r"\midrule"]
    for i, row in enumerate(rows):
        if i in data.blocks:
            lines.append(r"\midrule")
        cells = [rf"\textbf{{{latex_escape(v)}}}" if (i, j) in bold else latex_escape(v) for j, v in enumerate(row)]
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", *tail]
    return "\n".join(lines) + "\n"


_HTML_STYLE = """
body { font: 13px/1.35 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d1d1f; margin: 16px; }
h1 { font-size: 16px; margin: 0 0 8px; }
.wrap { max-width: 100%; max-height: 85vh; overflow: auto; }
table { border-collapse: collapse; font-size: 12px; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 6px; border-bottom: 1px solid #e3e3e3; vertical-align: top; }
th { position: sticky; top: 0; background: #f4f4f6; font-weight: 600; text-align: left;
     white-space: normal; max-width: 7.5em; border-bottom: 2px solid #999; }
th.num { text-align: right; }
td { white-space: nowrap; }
td.num { text-align: right; }
td .ci { display: block; font-size: 10.5px; color: #666; }
tr.block td { border-top: 2px solid #bbb; }
tbody tr:hover td { background: #fafafa; }
strong { font-weight: 700; }
p.note { max-width: 60em; color: #444; font-size: 12px; }
p.nodata { font-weight: 600; }
"""

#: A formatted value followed by its interval: "25.0 [0.0, 50.0]".
_VALUE_CI = re.compile(r"^(.*\S)\s+(\[[^\]]*\])$")


#: Markdown code spans of a note (`rag`), shown as <code> in HTML.
_CODE = re.compile(r"`([^`]+)`")


def _html_text(text: str) -> str:
    """``text`` escaped for HTML, its `code` spans as ``<code>``."""
    return _CODE.sub(r"<code>\1</code>", html.escape(text))


def _html_cell(text: str, *, strong: bool) -> str:
    m = _VALUE_CI.match(text)
    value, ci = (m.group(1), m.group(2)) if m else (text, "")
    inner = html.escape(value)
    if strong and value not in ("", "–"):
        inner = f"<strong>{inner}</strong>"
    if ci:
        inner += f'<span class="ci">{html.escape(ci)}</span>'
    return inner


def render_html(data: TableData, title: str, note: str) -> str:
    """A self-contained HTML document (inline CSS): the title, the table (numbers right-aligned,
    a value's CI on a second, smaller line, header cells that wrap and stay in view, bold for the
    best, a rule between blocks, a horizontal scroll box as the last resort) and the note; or the
    reason there is no data."""
    esc = html.escape
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             f"<title>{esc(title)}</title>", f"<style>{_HTML_STYLE}</style>", "</head>", "<body>",
             f"<h1>{esc(title)}</h1>"]
    if not data.has_data:
        parts.append(f'<p class="nodata">No data: {_html_text(_reason_text(data))}</p>')
    else:
        cols = list(data.frame.columns)
        klass = ["" if j < data.n_keys else ' class="num"' for j in range(len(cols))]
        parts += ['<div class="wrap">', "<table>", "<thead>", "<tr>"]
        parts += [f"<th{k}>{esc(str(c))}</th>" for c, k in zip(cols, klass)]
        parts += ["</tr>", "</thead>", "<tbody>"]
        for i, row in enumerate(data.frame.itertuples(index=False)):
            tr = '<tr class="block">' if i in data.blocks else "<tr>"
            tds = "".join(f"<td{k}>{_html_cell(str(v), strong=(i, c) in data.bold)}</td>"
                          for c, k, v in zip(cols, klass, row))
            parts.append(tr + tds + "</tr>")
        parts += ["</tbody>", "</table>", "</div>"]
    text = _note_text(note, data)
    if text:
        parts.append(f'<p class="note">{_html_text(text)}</p>')
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"
