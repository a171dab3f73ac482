"""Logging set-up for workflow scripts: everything a rule prints goes to its log."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from pathlib import Path
from typing import Iterator

from anachron.errors import AnachronError

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


@contextlib.contextmanager
def log_to(path: str | os.PathLike[str] | None) -> Iterator[logging.Logger]:
    """Send logging records, stdout and stderr (tqdm progress included) to ``path``.

    With ``path`` None, log to stderr. Yields the ``anachron`` logger.
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
    root.handlers = [handler]
    root.setLevel(logging.INFO)
    logging.captureWarnings(True)
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
        root.handlers, root.level = old_handlers, old_level
        if stream is not None:
            stream.close()
