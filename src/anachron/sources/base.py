"""Shared plumbing for the source readers: errors, snapshot lookup, checked CSV reads, HTTP.

Every reader in :mod:`anachron.sources` follows the pandas-datareader pattern: one small
class per source, constructed with its query and an optional injected HTTP ``session``
(so tests can replay recorded responses) and an optional ``snapshot_dir``. Live fetching
is the default; a snapshot directory is an explicit choice, given either as the
``snapshot_dir`` argument (config key ``snapshot_dir``) or through the environment
variable ``ANACHRON_SNAPSHOT_DIR``. Each reader exposes ``read()`` and, after it,
``manifest`` (a list of :func:`anachron.io.manifest_entry` records).
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any, Iterable, Sequence

import pandas as pd
import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from anachron.errors import AnachronError

#: Environment variable naming a snapshot directory (same meaning as ``snapshot_dir``).
SNAPSHOT_ENV = "ANACHRON_SNAPSHOT_DIR"

#: User-Agent sent by sessions this package creates (Wikipedia requires a descriptive one).
DEFAULT_USER_AGENT = "anachron/0.1 (temporal-leakage research; python-requests)"

#: Default timeout, seconds, for one HTTP request.
DEFAULT_TIMEOUT = 30.0


class SourceError(AnachronError, RuntimeError):
    """A source could not deliver data (network, HTTP status, empty result, bad file).

    The message always says what failed and how to fix it, typically by pointing the
    reader at a snapshot: ``snapshot_dir`` (config key ``snapshot_dir``, environment
    variable ``ANACHRON_SNAPSHOT_DIR``).
    """


def snapshot_hint(layout: str) -> str:
    """The standard "how to fix" sentence for a failed live fetch.

    ``layout`` is the path pattern the snapshot directory must hold, relative to it,
    e.g. ``"yahoo/prices_daily_*.csv.gz"``.
    """
    return (
        f"To work offline, set `snapshot_dir` (config key `snapshot_dir`, env {SNAPSHOT_ENV}) "
        f"to a directory holding {layout}."
    )


def resolve_snapshot_dir(snapshot_dir: str | os.PathLike[str] | None) -> Path | None:
    """The snapshot directory to use: the argument, else ``$ANACHRON_SNAPSHOT_DIR``, else None.

    ``None`` means live fetching. Raises :class:`SourceError` if a directory is named
    but does not exist.
    """
    chosen = snapshot_dir if snapshot_dir not in (None, "") else os.environ.get(SNAPSHOT_ENV) or None
    if chosen is None:
        return None
    path = Path(chosen).expanduser()
    if not path.is_dir():
        raise SourceError(
            f"snapshot directory {str(path)!r} does not exist or is not a directory; "
            f"fix `snapshot_dir` (config key `snapshot_dir`, env {SNAPSHOT_ENV}) or unset it "
            "to fetch live."
        )
    return path


def find_snapshot_files(snapshot_dir: Path, pattern: str) -> list[Path]:
    """Files under ``snapshot_dir`` matching the glob ``pattern``, sorted by name.

    Raises :class:`SourceError` (naming the directory and pattern) when none match.
    """
    files = sorted(p for p in snapshot_dir.glob(pattern) if p.is_file())
    if not files:
        raise SourceError(
            f"no file matching {pattern!r} under snapshot directory {str(snapshot_dir)!r}; "
            f"point `snapshot_dir` (config key `snapshot_dir`, env {SNAPSHOT_ENV}) at a "
            f"directory holding {pattern}, or unset it to fetch live."
        )
    return files


def check_columns(df: pd.DataFrame, required: Iterable[str], where: str) -> None:
    """Raise :class:`SourceError` naming ``where`` and the absent columns of ``required``."""
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise SourceError(
            f"{where}: missing required column(s) {', '.join(missing)} "
            f"(found: {', '.join(map(str, df.columns)) or 'none'}); "
            "the file is not in the expected layout — replace it with one that has these columns."
        )


def read_csv_checked(
    source: str | os.PathLike[str] | io.IOBase,
    required: Sequence[str],
    *,
    name: str | None = None,
    **read_csv_kwargs,
) -> pd.DataFrame:
    """Read a CSV with :func:`pandas.read_csv` and check that ``required`` columns exist.

    ``source`` is a path or a file-like object (then ``name`` labels it in errors, e.g.
    the URL it came from). ``read_csv_kwargs`` are passed through; a ``usecols`` list is
    allowed to name only columns present (absent ones are reported, not a pandas error).

    Raises :class:`SourceError` naming the file and the missing column(s), or naming the
    file when it cannot be read or parsed.
    """
    label = name or str(source)
    usecols = read_csv_kwargs.pop("usecols", None)
    try:
        if usecols is not None:
            header = pd.read_csv(source, nrows=0, **{k: v for k, v in read_csv_kwargs.items() if k in ("sep", "compression", "encoding")})
            check_columns(header, required, label)
            if hasattr(source, "seek"):
                source.seek(0)  # type: ignore[union-attr]
            present = [c for c in usecols if c in header.columns]
            df = pd.read_csv(source, usecols=present, **read_csv_kwargs)
        else:
            df = pd.read_csv(source, **read_csv_kwargs)
    except SourceError:
        raise
    except FileNotFoundError as exc:
        raise SourceError(f"{label}: file not found ({exc}); check the snapshot directory layout.") from exc
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError, OSError) as exc:
        raise SourceError(f"{label}: could not parse as CSV ({exc}); replace the file with a valid CSV.") from exc
    check_columns(df, required, label)
    return df


def make_session(retries: int = 3, backoff: float = 1.0) -> requests.Session:
    """A :class:`requests.Session` with retries on connection errors and 429/5xx.

    Used when a reader is not given a session. Sends :data:`DEFAULT_USER_AGENT`.
    """
    session = requests.Session()
    retry = Retry(
        total=retries,
        backoff_factor=backoff,
        status_forcelist=(429, 500, 502, 503, 504),
        allowed_methods=("GET",),
        raise_on_status=False,
    )
    adapter = HTTPAdapter(max_retries=retry)
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    session.headers["User-Agent"] = DEFAULT_USER_AGENT
    return session


def http_get(
    session: requests.Session,
    url: str,
    *,
    params: dict | None = None,
    what: str,
    layout: str,
    timeout: float = DEFAULT_TIMEOUT,
) -> requests.Response:
    """GET ``url`` and return the response; any failure becomes one :class:`SourceError`.

    ``what`` names the data for the message (e.g. "S&P 500 membership spells"); ``layout``
    is the snapshot path pattern suggested as the offline fix.
    """
    try:
        response = session.get(url, params=params, timeout=timeout)
        response.raise_for_status()
    except requests.RequestException as exc:
        raise SourceError(f"could not fetch {what} from {url}: {exc}. {snapshot_hint(layout)}") from exc
    return response


def normalize_ticker(ticker: str) -> str:
    """Canonical S&P-style ticker: stripped, upper case, share class with ``.`` (BRK-B -> BRK.B).

    Yahoo writes share classes with ``-``; S&P lists and Wikipedia use ``.``. The package
    keeps the S&P spelling everywhere and converts only at the Yahoo boundary.
    """
    return str(ticker).strip().upper().replace("-", ".")


def to_yahoo_symbol(ticker: str) -> str:
    """Yahoo Finance spelling of an S&P ticker (BRK.B -> BRK-B)."""
    return normalize_ticker(ticker).replace(".", "-")


class SourceReader:
    """Base of the reader classes: an injectable HTTP ``session``, an optional
    ``snapshot_dir``, and the provenance ``manifest`` of the last ``read()``.

    Subclasses implement ``read()`` and set ``self._manifest`` (a list of
    :func:`anachron.io.manifest_entry` records) while reading; rows they drop are counted
    in ``skipped_by_reason`` (reason code -> count).
    """

    def __init__(self, *, session: Any = None, snapshot_dir: str | os.PathLike[str] | None = None) -> None:
        self.session = session
        self.snapshot_dir = snapshot_dir
        self._manifest: list[dict[str, Any]] = []
        self.skipped_by_reason: dict[str, int] = {}

    @property
    def manifest(self) -> list[dict[str, Any]]:
        """Provenance records of the last ``read()`` (empty before it)."""
        return list(self._manifest)
