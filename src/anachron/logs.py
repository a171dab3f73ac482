"""Logging set-up for workflow scripts: everything a rule prints goes to its log."""

from __future__ import annotations

import contextlib
import faulthandler
import logging
import os
import re
import sys
from pathlib import Path
from typing import Iterator

from anachron.errors import AnachronError

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

#: HTTP client loggers that log every request URL at INFO; quietened to WARNING in rule logs.
#: ``httpx2``/``httpcore2``: the names of the HTTP library the pinned ``openai`` client uses.
NOISY_LOGGERS = ("httpx", "httpx2", "httpcore", "httpcore2", "openai", "urllib3")

_SECRET_PATTERNS = (
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]+(?::[^/\s@]*)?@"), r"\1***@"),  # user:password@ in a URL
    (re.compile(r"(?i)([?&](?:api[_-]?key|key|token|access_token|password|secret|sig)=)[^&\s'\"]+"), r"\1***"),
    (re.compile(r"(?i)\b(authorization:?\s*(?:bearer|token|basic)?\s*)[A-Za-z0-9._~+/=-]{8,}"), r"\1***"),
    (re.compile(r"\b(sk-[A-Za-z0-9_-]{4})[A-Za-z0-9_-]{8,}"), r"\1***"),  # OpenAI-style keys
)


def mask_secrets(text: str) -> str:
    """``text`` with credentials masked: ``user:password@`` in URLs, secret query parameters
    (``key``, ``api_key``, ``token``, ...), ``Authorization`` header values and ``sk-...`` keys
    become ``***``. Used on every record a rule logs."""
    for pattern, repl in _SECRET_PATTERNS:
        text = pattern.sub(repl, text)
    return text


class SecretMaskingFilter(logging.Filter):
    """A handler filter that formats each record's message and masks credentials in it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: leave the record to the handler's own error path
            return True
        masked = mask_secrets(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


def _enable_faulthandler(stream: object) -> bool:
    """Point :mod:`faulthandler` at ``stream`` when it is a real file (has a file descriptor)."""
    try:
        faulthandler.enable(file=stream, all_threads=True)  # type: ignore[arg-type]
    except (AttributeError, ValueError, OSError, TypeError):  # no fileno(): a StringIO, None, a closed file
        return False
    return True


@contextlib.contextmanager
def log_to(path: str | os.PathLike[str] | None) -> Iterator[logging.Logger]:
    """Send logging records, stdout and stderr (tqdm progress included) to ``path``.

    With ``path`` None, log to stderr. Yields the ``anachron`` logger. Credentials in any record
    are masked (:func:`mask_secrets`), and the HTTP client loggers (:data:`NOISY_LOGGERS`), which
    log every request URL at INFO, only pass warnings.

    :mod:`faulthandler` writes into the same log, so a crash in native code (a segfault in the
    local model's runtime, say) leaves the Python stack of every thread in the rule's log
    (docs/running.md#local-model-check); it is switched back off when the block ends.
    """
    root = logging.getLogger()
    old_handlers, old_level = root.handlers[:], root.level
    if path is None:
        handler: logging.Handler = logging.StreamHandler(sys.stderr)
        stream = None
    else:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        stream = open(path, "w", buffering=1, encoding="utf-8")
        handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.addFilter(SecretMaskingFilter())
    root.handlers = [handler]
    root.setLevel(logging.INFO)
    noisy = {name: logging.getLogger(name).level for name in NOISY_LOGGERS}
    for name in NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.captureWarnings(True)
    fault_was_enabled = faulthandler.is_enabled()
    _enable_faulthandler(stream if stream is not None else sys.__stderr__)
    try:
        if stream is not None:
            with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
                yield logging.getLogger("anachron")
        else:
            yield logging.getLogger("anachron")
    except AnachronError as exc:
        # A user-facing error (bad source, config, missing snapshot): one clear message,
        # in the rule's log and on the console Snakemake prints, without a traceback.
        logging.getLogger("anachron").error("%s", exc)
        print(f"anachron error: {exc}", file=sys.__stderr__)
        raise SystemExit(1) from None
    except BaseException:
        logging.getLogger("anachron").exception("rule failed")
        raise
    finally:
        if not (fault_was_enabled and _enable_faulthandler(sys.__stderr__)):
            faulthandler.disable()
        root.handlers, root.level = old_handlers, old_level
        for name, level in noisy.items():
            logging.getLogger(name).setLevel(level)
        if stream is not None:
            stream.close()


#: How faulthandler's report of a crash in native code begins.
FATAL_MARK = "Fatal Python error: "


def native_crash_logs(root: str | os.PathLike[str] = "logs", *, since: float = 0.0) -> list[tuple[Path, str, bool]]:
    """The rule logs under ``root`` modified at or after ``since`` (a Unix time, in seconds) that hold a
    native crash report (faulthandler's ``Fatal Python error: ...``, written by :func:`log_to`).

    Returns:
        ``(path, the report's first line, whether a stack runs through the llama_cpp package)`` per
        log, sorted by path; ``[]`` when ``root`` does not exist.
    """
    found = []
    base = Path(root)
    if not base.is_dir():
        return found
    for path in sorted(base.rglob("*.log")):
        try:
            if path.stat().st_mtime < since:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        at = text.rfind(FATAL_MARK)
        if at < 0:
            continue
        report = text[at:]
        found.append((path, report.splitlines()[0], "/llama_cpp/" in report))  # a frame in the package
    return found
