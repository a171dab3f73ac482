"""Atomic file output, checksums and provenance manifests.

Every writer in the package goes through these helpers so that an interrupted
run never leaves a half-written file behind: data is written to a temporary
file in the destination directory and then renamed over the target (an atomic
``os.replace`` on POSIX file systems).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pandas as pd


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` on success.

    On an exception the temporary file is removed and ``path`` is left as it was.
    Parent directories are created.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Write ``obj`` as indented, key-sorted JSON to ``path`` atomically."""
    write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def write_parquet(df: pd.DataFrame, path: str | os.PathLike[str]) -> None:
    """Write ``df`` to a Parquet file atomically (no index)."""
    with atomic_path(path) as tmp:
        df.to_parquet(tmp, index=False)


def sha256_file(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def stable_hash(obj: Any) -> str:
    """Short SHA-256 (16 hex digits) of ``obj`` as canonical JSON (sorted keys, ``str`` for
    anything JSON cannot hold): the config hashes in ``runs`` and the test server's answers."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def utc_now() -> str:
    """Current UTC time as an ISO-8601 string with seconds."""
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


def manifest_entry(origin: str, sha256: str, rows: int, **extra: Any) -> dict[str, Any]:
    """One provenance record: where data came from (URL or snapshot path), its hash and size.

    ``origin`` is a URL for a live fetch or ``snapshot:<path>`` for an import;
    ``extra`` holds source-specific fields (date range, excluded counts, ...).
    """
    return {"origin": origin, "sha256": sha256, "rows": int(rows), "fetched_at": utc_now(), **extra}


def replace_dir(tmp: str | os.PathLike[str], out_dir: str | os.PathLike[str]) -> None:
    """Move the finished directory ``tmp`` to ``out_dir``, replacing what is there.

    Two renames on one file system: an older ``out_dir`` is first moved aside (so ``out_dir`` is
    never a mix of old and new files), then removed. ``tmp`` must be on ``out_dir``'s file system.
    """
    tmp, out_dir = Path(tmp), Path(out_dir)
    old: Path | None = None
    if out_dir.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old.", dir=out_dir.parent))
        os.rename(out_dir, old / "previous")
    os.rename(tmp, out_dir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
