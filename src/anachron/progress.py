"""Progress of long rules: a live tqdm bar on the terminal, full periodic lines in the rule's log.

A workflow script runs with its ``sys.stderr`` sent to the rule's log file (:func:`anachron.logs.log_to`),
while ``sys.__stderr__`` of its process is still the terminal Snakemake was started from (Snakemake
runs a script job in a child process that inherits it). A tqdm bar redraws itself with carriage
returns, which turns a log file into one unreadable line, so a :class:`Progress` shows itself twice:

* on the **terminal** (``sys.stderr`` when it is a TTY, else ``sys.__stderr__`` when that is one;
  nothing without a TTY): a tqdm bar, redrawn at most every :data:`REDRAW_S` seconds, at most
  :data:`MAX_COLS` columns wide, labelled with the job (``stock/rag/smollm2 queries``). Each redraw
  clears the rest of the line, so that the bars of jobs running at once (``snakemake --cores 2``)
  overwrite each other cleanly; a finished bar stays on its line.
* in the **log** (whenever ``sys.stderr`` is not a TTY): a logging record (logger
  ``anachron.progress``) at each further 10 % when :data:`LINE_MIN_GAP_S` seconds have passed since
  the last one, at least every :data:`LINE_EVERY_S` seconds while the bar advances, and a final line.

Every line and every bar's postfix counts the LLM calls of the process since the bar started
(:class:`CallCounts`: made, cached, failed, retries), from a tally that
:meth:`anachron.llm.client.LLMClient.complete` feeds (:func:`count_call`). A rule script wraps its
work in :func:`job`: bars opened inside carry the job's label, and the job ends with one line of
totals (units done, calls made / cached / failed, retries, wall time, rates), in the log and on the
terminal.

Progress never fails a job: a closed or broken stream turns the bar off, and nothing here raises
from :meth:`Progress.update` or :meth:`Progress.close`. ``TQDM_DISABLE=1`` in the environment turns
the terminal bars off (the log lines stay).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import sys
import threading
import time
from typing import Any, Iterable, Iterator, TextIO, TypeVar

from tqdm import tqdm

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Seconds between two periodic log lines at most, while a bar advances.
LINE_EVERY_S = 60.0
#: Seconds between two periodic log lines at least (a line at each further 10 % otherwise).
LINE_MIN_GAP_S = 5.0
#: Seconds between two redraws of a terminal bar at least.
REDRAW_S = 1.0
#: Widest terminal bar, in columns (a longer one is cut at the end).
MAX_COLS = 120
#: Erase from the cursor to the end of the line (ANSI ``EL``).
_ERASE_LINE = "\x1b[K"
#: The clock of bars and lines (seconds; replaced in tests).
_clock = time.monotonic


@dataclasses.dataclass(frozen=True)
class CallCounts:
    """LLM calls counted by :func:`count_call`.

    Fields:
        made: provider calls (cache misses), failed ones included.
        cached: answers served from the cache, or shared with an identical call in flight.
        failed: provider calls whose final result has an error (after the provider's retries).
        retries: requests sent beyond the first, over the provider calls (``ChatResult.attempts - 1``).
    """

    made: int = 0
    cached: int = 0
    failed: int = 0
    retries: int = 0

    def __sub__(self, other: "CallCounts") -> "CallCounts":
        return CallCounts(*(a - b for a, b in zip(dataclasses.astuple(self), dataclasses.astuple(other))))

    def text(self) -> str:
        """``"made M, cached C, failed F, retries R"``."""
        return f"made {self.made}, cached {self.cached}, failed {self.failed}, retries {self.retries}"


_tally = [0, 0, 0, 0]  # the fields of CallCounts, in order
_tally_lock = threading.Lock()


def count_call(result: Any) -> None:
    """Add one LLM call to the process's tally: ``result`` is its
    :class:`~anachron.llm.types.ChatResult` (``cache_hit``, ``error``, ``attempts`` are read)."""
    hit = bool(result.cache_hit)
    failed = not hit and result.error is not None
    retries = 0 if hit else max(0, int(result.attempts or 0) - 1)
    with _tally_lock:
        _tally[0] += not hit
        _tally[1] += hit
        _tally[2] += failed
        _tally[3] += retries


def call_counts() -> CallCounts:
    """The LLM calls of this process so far (every :class:`~anachron.llm.client.LLMClient`)."""
    with _tally_lock:
        return CallCounts(*_tally)


def _isatty(stream: Any) -> bool:
    try:
        return stream is not None and bool(stream.isatty())
    except (AttributeError, OSError, ValueError):  # a closed or odd stream
        return False


def terminal() -> TextIO | None:
    """The stream live bars are drawn on: ``sys.stderr`` when it is a TTY, else the process's original
    stderr (``sys.__stderr__``) when that is one (:func:`~anachron.logs.log_to` sent ``sys.stderr`` to
    a log file), else None."""
    for stream in (sys.stderr, sys.__stderr__):
        if _isatty(stream):
            return stream
    return None


class _Terminal:
    """A terminal stream as tqdm's ``file``: each redraw also erases the rest of the line (where the
    longer line of another job may stand), and a failed write (closed stream) is dropped."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, s: str) -> None:
        if s.startswith("\r") and "\n" not in s:
            s = s.rstrip(" ") + _ERASE_LINE
        try:
            self.stream.write(s)
        except (OSError, ValueError):
            pass

    def flush(self) -> None:
        try:
            self.stream.flush()
        except (OSError, ValueError):
            pass


def _columns(stream: TextIO) -> int:
    """Width of a bar on ``stream``: ``$COLUMNS``, else the terminal's width, else 80 (a terminal
    that reports 0 columns, e.g. a pseudo-terminal nobody sized), less one, at most :data:`MAX_COLS`."""
    try:
        cols = int(os.environ.get("COLUMNS") or 0)
    except ValueError:
        cols = 0
    if cols <= 0:
        try:
            cols = os.get_terminal_size(stream.fileno()).columns
        except (AttributeError, OSError, ValueError):
            cols = 0
    return max(40, min((cols if cols > 0 else 80) - 1, MAX_COLS))


def _duration(seconds: float) -> str:
    """``"8.2s"``, ``"3m05s"`` or ``"2h01m"``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    m, s = divmod(int(round(seconds)), 60)
    if m < 60:
        return f"{m}m{s:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m"


def _rate(n: float, seconds: float, unit: str) -> str:
    """``"2.50 inst/s"``, or below one per second ``"16.6s/inst"``; ``"- inst/s"`` before any time or unit."""
    if seconds <= 0 or n <= 0:
        return f"- {unit}/s"
    per_s = n / seconds
    return f"{per_s:.2f} {unit}/s" if per_s >= 1 else f"{seconds / n:.1f}s/{unit}"


class Progress:
    """A count of done units (instances, calls, steps) shown as a terminal bar and as log lines
    (module docstring).

    Args:
        total: units to do, or None when unknown (no percentage, lines by time only).
        desc: what is counted (``"generate"``); inside a :func:`job` it follows the job's label,
            without a leading ``name/name`` token that only repeats names of the label
            (``"temporal_hint/stock retry"`` in job ``stock/temporal_hint/smollm2`` reads
            ``"stock/temporal_hint/smollm2 retry"``).
        unit: the unit's name, for the bar and the lines.
        calls: show the LLM calls made while the bar runs (:class:`CallCounts`).
        enabled: False makes a silent counter (no bar, no line); so does ``total`` 0.
        bar: False draws no terminal bar (log lines only).

    Use as a context manager or call :meth:`close`; :func:`track` wraps an iterable.
    """

    def __init__(
        self,
        total: int | None,
        desc: str,
        *,
        unit: str = "inst",
        calls: bool = True,
        enabled: bool = True,
        bar: bool = True,
    ) -> None:
        self.total = total
        self.unit = unit
        self.label = _job_label(desc)
        self.calls_shown = calls
        self.enabled = enabled and total != 0
        self.n = 0
        self._t0 = self._last_line = _clock()
        self._last_postfix = 0.0
        self._decile = 0
        self._calls0 = call_counts()
        self._closed = False
        self._lines = self.enabled and not _isatty(sys.stderr)
        self._bar: tqdm | None = self._open_bar() if self.enabled and bar else None

    def _open_bar(self) -> tqdm | None:
        stream = terminal()
        if stream is None:
            return None
        fmt = "{desc}: {percentage:3.0f}%|{bar:8}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}{postfix}]"
        try:
            return tqdm(total=self.total, desc=self.label, unit=self.unit, file=_Terminal(stream),
                        ncols=_columns(stream), mininterval=REDRAW_S, bar_format=fmt if self.total else None,
                        leave=True)
        except Exception:  # progress never fails a job
            return None

    @property
    def elapsed(self) -> float:
        """Seconds since the bar started."""
        return _clock() - self._t0

    def calls(self) -> CallCounts:
        """LLM calls of this process since the bar started."""
        return call_counts() - self._calls0

    def _postfix(self) -> str:
        """The bar's postfix: calls made and cached, failed and retries when there are any."""
        c = self.calls()
        extra = "".join(f" {k} {v}" for k, v in (("failed", c.failed), ("retries", c.retries)) if v)
        return f"made {c.made} cached {c.cached}{extra}"

    def update(self, n: int = 1) -> None:
        """Count ``n`` more units done; redraws and writes a log line when one is due."""
        self.n += n
        if self._closed or not self.enabled:
            return
        now = _clock()
        if self._bar is not None:
            try:
                if self.calls_shown and now - self._last_postfix >= REDRAW_S:
                    self._last_postfix = now
                    self._bar.set_postfix_str(self._postfix(), refresh=False)
                self._bar.update(n)
            except Exception:
                self._bar = None
        if self._lines and self._line_due(now):
            self._last_line = now
            self._decile = 10 * self.n // self.total if self.total else 0
            log.info("%s", self.line())

    def _line_due(self, now: float) -> bool:
        if self.total is not None and self.n >= self.total:
            return False  # the final line follows
        gap = now - self._last_line
        if gap >= LINE_EVERY_S:
            return True
        return bool(self.total) and gap >= LINE_MIN_GAP_S and 10 * self.n // self.total > self._decile

    def line(self) -> str:
        """The progress line: ``"<label>: 12/20 inst (60%), 35.0s, 2.9s/inst; calls made 3, ..."``."""
        t = self.elapsed
        count = f"{self.n}/{self.total} {self.unit} ({100 * self.n / self.total:.0f}%)" if self.total else f"{self.n} {self.unit}"
        text = f"{self.label}: {count}, {_duration(t)}, {_rate(self.n, t, self.unit)}"
        return f"{text}; calls {self.calls().text()}" if self.calls_shown else text

    def summary(self) -> str:
        """The final line: ``"<label>: done 20/20 inst in 58.0s (2.9s/inst); calls made 5, cached 15,
        failed 0, retries 1 (11.6s/call made)"`` (the rate of the provider calls made)."""
        t = self.elapsed
        count = f"{self.n}/{self.total}" if self.total is not None else f"{self.n}"
        text = f"{self.label}: done {count} {self.unit} in {_duration(t)} ({_rate(self.n, t, self.unit)})"
        if not self.calls_shown:
            return text
        c = self.calls()
        return f"{text}; calls {c.text()}" + (f" ({_rate(c.made, t, 'call')} made)" if c.made else "")

    def close(self) -> None:
        """Leave the bar's last state on the terminal and write the final line to the log (once)."""
        if self._closed:
            return
        self._closed = True
        if self._bar is not None:
            try:
                if self.calls_shown:
                    self._bar.set_postfix_str(self._postfix(), refresh=False)
                self._bar.close()
            except Exception:
                pass
            self._bar = None
        if self._lines:
            log.info("%s", self.summary())

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def track(
    iterable: Iterable[T],
    desc: str,
    *,
    total: int | None = None,
    unit: str = "inst",
    calls: bool = True,
    enabled: bool = True,
) -> Iterator[T]:
    """Yield the items of ``iterable``, counting each one done once the loop body has run
    (a :class:`Progress`; ``total`` defaults to ``len(iterable)`` when it has one)."""
    if total is None:
        try:
            total = len(iterable)  # type: ignore[arg-type]
        except TypeError:
            total = None
    with Progress(total, desc, unit=unit, calls=calls, enabled=enabled) as bar:
        for item in iterable:
            yield item
            bar.update(1)


class Job(Progress):
    """The progress of a whole rule (see :func:`job`): no bar of its own; its count (:attr:`n`) is
    set by the rule (``job.n = len(run)``) or advanced (:func:`advance_job`), and it ends with the
    line of totals, in the log and on the terminal."""

    def __init__(self, label: str, *, unit: str, total: int | None, calls: bool) -> None:
        super().__init__(total, "", unit=unit, calls=calls, bar=False)
        self.label = label
        self.failed = False

    def summary(self) -> str:
        """:meth:`Progress.summary` reading ``total`` instead of ``done`` (``stopped, total`` when the
        job failed), so that the job's line stands apart from its bars' final lines."""
        return super().summary().replace(": done ", ": stopped, total " if self.failed else ": total ", 1)

    def close(self) -> None:
        """Log the totals (always, TTY or not) and write them on the terminal when that is not the log."""
        if self._closed:
            return
        self._closed = True
        line = self.summary()
        log.info("%s", line)
        stream = terminal()
        if stream is not None and stream is not sys.stderr:
            _Terminal(stream).write(f"\r{_ERASE_LINE}{line}\n")


_job: Job | None = None


def _job_label(desc: str) -> str:
    """``desc`` under the current job's label (see :class:`Progress`)."""
    job = _job
    if job is None:
        return desc
    head, _, rest = desc.partition(" ")
    if head and set(head.split("/")) <= set(job.label.replace(" ", "/").split("/")):
        desc = rest
    return f"{job.label} {desc}".rstrip()


@contextlib.contextmanager
def job(label: str, *, unit: str = "inst", total: int | None = None, calls: bool = True) -> Iterator[Job]:
    """Run a rule's work as one job: bars opened inside carry ``label`` (short: the rule's task /
    method / model, e.g. ``"stock/rag/smollm2"``), and on exit the job writes its line of totals
    (``"<label>: total 20 inst in 3m05s (9.2s/inst); calls made 21, cached 19, failed 0,
    retries 2 (8.8s/call made)"``; ``stopped, total`` when the body raised, the exception then passes).

    Args:
        label: the job's name in every bar and line.
        unit: the unit of :attr:`Job.n` (``inst``, ``step``, ``doc``, ``req``).
        total: units to do, when known.
        calls: count LLM calls in the totals (False for rules that make none).

    Yields the :class:`Job`. Use inside :func:`~anachron.logs.log_to`, so that the totals reach the log.
    """
    global _job
    outer = _job
    current = Job(label, unit=unit, total=total, calls=calls)
    _job = current
    try:
        yield current
    except BaseException:
        current.failed = True
        raise
    finally:
        _job = outer
        current.close()


def advance_job(n: int = 1) -> None:
    """Count ``n`` units of the current :func:`job` done (e.g. HTTP requests of a fetch); no-op
    outside a job."""
    current = _job
    if current is not None:
        current.update(n)
