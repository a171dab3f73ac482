"""The report checker finds what a reader would see broken: a broken image, an overflowing table,
a result without caption, a missing result (headless Chromium; skipped where it is absent)."""

from __future__ import annotations

import base64
import struct
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pytest

from anachron.report import htmlcheck

pytest.importorskip("playwright", reason="playwright is not installed (pip install -e '.[dev]')")
try:
    CHROMIUM = htmlcheck.find_chromium()
except FileNotFoundError:
    pytest.skip("no Chromium binary (apt-get install chromium)", allow_module_level=True)

SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
# a 2x2 red PNG
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR4nGP8z8DAwMDAxMDAAAAZJQIB"
    "VQ2SZQAAAABJRU5ErkJggg=="
)


def _png(width: int, height: int) -> bytes:
    """A grey RGB PNG of the given size (zlib-compressed rows, one filter byte each)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x80" * (3 * width) for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("report")
    (work / "cap.rst").write_text("What this shows.\n")
    (work / "wf.rst").write_text("A test workflow.\n")
    (work / "good.png").write_bytes(PNG)
    (work / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\nnot an image")
    (work / "tall.png").write_bytes(_png(300, 1200))  # taller than the 900 px view: cut off
    wide = "".join(f"<th>a_very_long_column_header_{i}</th>" for i in range(40))
    (work / "narrow.html").write_text("<html><body><table><tr><th>A</th></tr><tr><td>1</td></tr></table></body></html>")
    (work / "wide.html").write_text(f"<html><body><table><tr>{wide}</tr><tr><td>nan</td></tr></table></body></html>")
    (work / "Snakefile").write_text(textwrap.dedent("""\
        report: "wf.rst"
        rule all:
            input: "out/good.png", "out/broken.png", "out/tall.png", "out/narrow.html", "out/wide.html"
        rule copy:
            input: "{name}.{ext}"
            output: report("out/{name}.{ext}", caption="cap.rst", category="Results")
            wildcard_constraints: name="good|tall|narrow|wide"
            log: "logs/{name}.{ext}.log"
            shell: "cp {input} {output}"
        rule nocaption:
            input: "broken.png"
            output: report("out/broken.png", category="Results")
            log: "logs/broken.log"
            shell: "cp {input} {output}"
        """))
    for args in (["--cores", "1"], ["--report", "report.html"]):
        res = subprocess.run([SNAKEMAKE, *args], cwd=work, capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr[-3000:]
    return work / "report.html"


def test_checker_sees_what_renders_and_what_does_not(report, tmp_path):
    checks = {c.name: c for c in htmlcheck.check_report(report, tmp_path / "shots", expected=["out/good.png", "out/gone.png"])}
    assert checks["out/good.png"].problems == []
    assert checks["out/good.png"].detail["images"] == [[True, 2, 2]]
    assert any("image cut off" in p for p in checks["out/tall.png"].problems)
    assert checks["out/narrow.html"].problems == []
    assert any("broken image" in p for p in checks["out/broken.png"].problems)
    assert "no caption" in checks["out/broken.png"].problems
    wide = checks["out/wide.html"]
    assert any("overflows" in p for p in wide.problems) and any("nan" in p for p in wide.problems)
    assert checks["out/gone.png"].problems == ["not in the report"]
    shots = {p.name for p in (tmp_path / "shots").iterdir()}
    assert {"overview.png", "out__good.png.png", "out__wide.html.png"} <= shots
    assert (tmp_path / "shots" / "out__good.png.png").stat().st_size > 1000


def test_command_line_exit_status(report, tmp_path):
    assert htmlcheck.main([str(report), "--out", str(tmp_path / "s")]) == 1  # the broken and wide results
    assert htmlcheck.main([str(tmp_path / "none.html"), "--out", str(tmp_path / "s")]) == 2
