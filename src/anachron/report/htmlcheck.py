"""Check a Snakemake HTML report as a reader sees it: open it in headless Chromium, show every
result, take a screenshot, and report what does not render.

``snakemake --report results/report.html`` writes one self-contained page (a React app whose
results are embedded as data URIs). :func:`check_report` loads it with Playwright driving the
system Chromium, lists the embedded results (the page's ``results`` object), shows each one as
the report's own "view" button does, screenshots it into ``out_dir`` and checks:

* an image result: the ``<img>`` decoded (``naturalWidth > 0``), i.e. no broken image, and it lies
  within the view (the report scales an image to the view's width, so a figure taller than
  that aspect is cut off at the top and bottom);
* an HTML result (the tables): the page has at least one ``<table>`` or a "no data" note, no table
  is wider than the viewport (no overflowing table), and no cell reads ``nan`` / ``None``;
* every result has a caption;
* an expected set of result names, when given, is all there.

Command line: ``python -m anachron.report.htmlcheck results/report.html --out results/report-check``
(exit status 1 when a problem is found). Needs the ``playwright`` package (``.[dev]``) and a
Chromium binary (Debian: ``apt-get install chromium``; ``--chromium PATH`` otherwise).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

#: Chromium flags for a headless run on a machine without a display or outside network.
CHROMIUM_ARGS = ("--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run")
#: Viewport of the screenshots (px): a laptop screen.
VIEWPORT = {"width": 1400, "height": 900}


@dataclass
class ResultCheck:
    """What was seen of one report result.

    Attributes:
        name: the result's path as the report lists it (e.g. ``results/tables/main.html``).
        kind: ``"img"`` or ``"html"`` (other MIME types are listed, not shown).
        screenshot: the PNG written for it (None when not shown).
        problems: what does not render, in words (empty when it is fine).
        detail: numbers behind the checks (image size, table count and width).
    """

    name: str
    kind: str
    screenshot: str | None = None
    problems: list[str] = field(default_factory=list)
    detail: dict = field(default_factory=dict)


def find_chromium(explicit: str | None = None) -> str:
    """The Chromium binary: ``explicit``, ``$CHROMIUM``, or ``chromium`` / ``chromium-browser`` on PATH.

    Raises:
        FileNotFoundError: none found (the message says how to install it).
    """
    for cand in (explicit, os.environ.get("CHROMIUM"), shutil.which("chromium"), shutil.which("chromium-browser")):
        if cand and Path(cand).exists():
            return str(cand)
    raise FileNotFoundError("no Chromium binary: install it (Debian: apt-get install chromium) or pass --chromium PATH")


_LIST_JS = """() => Object.entries(results).map(([name, r]) => ({
    name, mime: r.mime_type, caption: r.caption || "", uri: r.data_uri}))"""

_HTML_JS = """() => {
    const w = window.innerWidth;
    const tables = [...document.querySelectorAll('table')];
    const cells = [...document.querySelectorAll('td')].map(td => td.innerText.trim());
    return {
        n_tables: tables.length,
        viewport: w,
        widest: Math.max(0, ...tables.map(t => Math.ceil(t.getBoundingClientRect().right))),
        page_width: document.documentElement.scrollWidth,
        bad_cells: cells.filter(c => ['nan', 'NaN', 'None', 'null', 'undefined'].includes(c)).length,
        no_data: /no data/i.test(document.body.innerText),
    };
}"""


def check_report(report: str | os.PathLike[str], out_dir: str | os.PathLike[str], *,
                 expected: Iterable[str] = (), chromium: str | None = None,
                 settle_ms: int = 600) -> list[ResultCheck]:
    """Open ``report`` in headless Chromium, screenshot the overview and every result, check each.

    Args:
        report: the HTML file of ``snakemake --report``.
        out_dir: where the screenshots go (``overview.png``, then one PNG per result, named
            after its path with ``/`` as ``__``).
        expected: result names (paths) that must be in the report; a missing one is a problem
            of a pseudo-result named after it.
        chromium: the browser binary (:func:`find_chromium`).
        settle_ms: how long to let the page render after each view change (ms).

    Returns:
        One :class:`ResultCheck` per result (and per missing expected name), in report order.

    Raises:
        ImportError: Playwright is not installed (``pip install -e '.[dev]'``).
        FileNotFoundError: no report file or no Chromium.
    """
    from playwright.sync_api import sync_playwright

    path = Path(report).resolve()
    if not path.exists():
        raise FileNotFoundError(f"no report at {path}: build it with `snakemake --report {report}`")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    checks: list[ResultCheck] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=find_chromium(chromium), args=list(CHROMIUM_ARGS))
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(path.as_uri())
            page.wait_for_timeout(settle_ms)
            page.screenshot(path=str(out / "overview.png"))
            entries = page.evaluate(_LIST_JS)
            for entry in entries:
                checks.append(_check_entry(page, entry, out, settle_ms))
        finally:
            browser.close()
    names = {c.name for c in checks}
    checks += [ResultCheck(name, "missing", problems=["not in the report"]) for name in expected if name not in names]
    return checks


def _check_entry(page, entry: dict, out: Path, settle_ms: int) -> ResultCheck:
    """Show one result the way the report's view button does and check what renders."""
    mime = entry["mime"] or ""
    kind = "img" if mime.startswith("image/") else ("html" if mime == "text/html" else mime or "unknown")
    check = ResultCheck(entry["name"], kind)
    if not entry["caption"].strip():
        check.problems.append("no caption")
    if kind not in ("img", "html"):
        return check
    page.evaluate("([kind, uri, name]) => app.setView({content: kind, contentPath: uri, resultPath: name})",
                  [kind, entry["uri"], entry["name"]])
    page.wait_for_timeout(settle_ms)
    shot = out / (entry["name"].replace("/", "__") + ".png")
    page.screenshot(path=str(shot))
    check.screenshot = str(shot)
    if kind == "img":
        shown = page.evaluate("""(uri) => [...document.querySelectorAll('img')].filter(i => i.src === uri)
                                 .map(i => {const r = i.getBoundingClientRect();
                                            return [i.complete, i.naturalWidth, i.naturalHeight, r.top, r.bottom]})""",
                              entry["uri"])
        check.detail["images"] = [s[:3] for s in shown]
        if not shown or not all(ok and w > 0 and h > 0 for ok, w, h, _, _ in shown):
            check.problems.append("broken image (not decoded)")
        elif any(top < -1 or bottom > VIEWPORT["height"] + 1 for *_, top, bottom in shown):
            top, bottom = shown[0][3], shown[0][4]
            check.problems.append(f"image cut off: shown {bottom - top:.0f} px tall in a {VIEWPORT['height']} px view "
                                  "(make the figure wider than tall)")
        return check
    frame = next((f for f in page.frames if f.url.startswith("data:text/html")), None)
    if frame is None:
        check.problems.append("HTML result not shown (no frame)")
        return check
    frame.wait_for_load_state()
    info = frame.evaluate(_HTML_JS)
    check.detail.update(info)
    if not info["n_tables"] and not info["no_data"]:
        check.problems.append("no table and no 'no data' note")
    if info["widest"] > info["viewport"] or info["page_width"] > info["viewport"]:
        check.problems.append(f"table overflows: {max(info['widest'], info['page_width'])} px wide in a "
                              f"{info['viewport']} px frame")
    if info["bad_cells"]:
        check.problems.append(f"{info['bad_cells']} cells read nan/None")
    return check


def summary(checks: Sequence[ResultCheck]) -> str:
    """One line per result: ``ok`` or its problems, then a count."""
    lines = [f"{'ok ' if not c.problems else 'BAD'} {c.kind:<5} {c.name}"
             + (f": {'; '.join(c.problems)}" if c.problems else "") for c in checks]
    bad = sum(bool(c.problems) for c in checks)
    lines.append(f"{len(checks) - bad} of {len(checks)} results render")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Command line; exit status 1 when a result has a problem, 2 when the check cannot run."""
    p = argparse.ArgumentParser(prog="python -m anachron.report.htmlcheck", description=__doc__.split("\n\n")[0])
    p.add_argument("report", help="the HTML file of `snakemake --report`")
    p.add_argument("--out", default="results/report-check", help="screenshot folder (default: %(default)s)")
    p.add_argument("--expect", nargs="*", default=(), help="result paths that must be in the report")
    p.add_argument("--chromium", help="Chromium binary (default: $CHROMIUM or chromium on PATH)")
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
    args = p.parse_args(argv)
    try:
        checks = check_report(args.report, args.out, expected=args.expect, chromium=args.chromium)
    except (ImportError, FileNotFoundError) as exc:
        print(f"htmlcheck: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(json.dumps([c.__dict__ for c in checks], indent=2) + "\n" if args.json else summary(checks))
    return int(any(c.problems for c in checks))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
