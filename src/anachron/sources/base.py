"""The source reader base class and its plumbing: errors, snapshot lookup, checked CSV reads, HTTP.

Every reader in :mod:`anachron.sources` follows the pandas-datareader pattern: one small
class per source, a subclass of :class:`SourceReader`, constructed with its query, an
optional injected HTTP ``session`` (so tests can replay recorded responses) and an
optional ``snapshot_dir``. Live fetching is the default; a snapshot directory is an
explicit choice, given either as the ``snapshot_dir`` argument (config key
``snapshot_dir``) or through the environment variable ``ANACHRON_SNAPSHOT_DIR``.

The base does the common work: :meth:`SourceReader.read` chooses snapshot or live once
(``_read_snapshot(dir)`` or ``_read_live(session)``, the session from
:func:`make_session` unless one was injected), :meth:`SourceReader.fetch` builds the
manifest the workflow writes (``{"sources": [records], "skipped_by_reason": {...},
...}``), and the ``_record*`` helpers build the provenance records
(:func:`anachron.io.manifest_entry`). A reader only says where its data is (snapshot
layout, URLs) and how to parse it.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any, Collection, Iterable, Mapping, Sequence

import pandas as pd
import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from anachron.errors import AnachronError
from anachron.frames import require_columns
from anachron.io import manifest_entry, sha256_bytes, sha256_file
from anachron.progress import advance_job

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
    """Raise :class:`SourceError` naming ``where`` and the absent columns of ``required``
    (:func:`anachron.frames.require_columns`, with what to do about the file)."""
    require_columns(df, required, where, error=SourceError,
                    hint="the file is not in the expected layout — replace it with one that has these columns.")


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


#: Statuses retried by :func:`make_session` (rate limit and transient server errors).
RETRY_STATUSES = (429, 500, 502, 503, 504)


def make_session(retries: int = 3, backoff: float = 1.0) -> requests.Session:
    """The one HTTP session factory of the live readers: retries that honour ``Retry-After``.

    A :class:`requests.Session` sending :data:`DEFAULT_USER_AGENT`, with an
    :class:`~requests.adapters.HTTPAdapter` whose :class:`urllib3.util.Retry` retries GETs
    up to ``retries`` times after connection errors and :data:`RETRY_STATUSES`, waiting
    the answer's ``Retry-After`` (seconds or an HTTP date) when it gives one (429, 503),
    else ``backoff * 2**(n - 1)`` seconds (at most 120) before the n-th retry (none before
    the first).
    After the last retry the final answer is returned as it is (``raise_on_status=False``),
    so :func:`http_get` reports its status. ``retries=0`` gives a session without retries
    (for a client that retries itself, see :mod:`anachron.sources.courtlistener`).
    """
    session = requests.Session()
    retry = Retry(
        total=retries,
        backoff_factor=backoff,
        status_forcelist=RETRY_STATUSES,
        allowed_methods=("GET",),
        respect_retry_after_header=True,
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
    headers: Mapping[str, str] | None = None,
    what: str,
    layout: str,
    timeout: float = DEFAULT_TIMEOUT,
    allow_status: Collection[int] = (),
) -> requests.Response:
    """GET ``url`` and return the response; any failure becomes one :class:`SourceError`.

    ``what`` names the data for the message (e.g. "S&P 500 membership spells"); ``layout``
    is the snapshot path pattern suggested as the offline fix. ``headers`` are sent with
    this request only (e.g. the SEC User-Agent). A status in ``allow_status`` (e.g. 404
    for an optional file) is returned, not raised, for the caller to handle. Each answered
    request counts one unit of the current progress job (:func:`anachron.progress.advance_job`).
    """
    try:
        response = session.get(url, params=params, headers=headers, timeout=timeout)
        if response.status_code not in allow_status:
            response.raise_for_status()
    except requests.RequestException as exc:
        raise SourceError(f"could not fetch {what} from {url}: {exc}. {snapshot_hint(layout)}") from exc
    advance_job()  # a fetch rule's progress counts its requests
    return response


#: Yahoo Finance exchange suffixes (``SHOP.TO``, ``VOD.L``, ``7203.T``) and each exchange's
#: time zone (IANA name). A symbol without one of these suffixes is a US listing
#: (:data:`US_TIMEZONE`). Source: Yahoo's "exchanges and data providers" list, main venues.
EXCHANGE_TIMEZONES: dict[str, str] = {
    **dict.fromkeys(("TO", "V", "CN", "NE"), "America/Toronto"),
    **dict.fromkeys(("L", "IL"), "Europe/London"),
    "T": "Asia/Tokyo",
    "HK": "Asia/Hong_Kong",
    **dict.fromkeys(("SS", "SZ"), "Asia/Shanghai"),
    **dict.fromkeys(("KS", "KQ"), "Asia/Seoul"),
    **dict.fromkeys(("TW", "TWO"), "Asia/Taipei"),
    "AX": "Australia/Sydney",
    "NZ": "Pacific/Auckland",
    "SI": "Asia/Singapore",
    **dict.fromkeys(("NS", "BO"), "Asia/Kolkata"),
    **dict.fromkeys(("DE", "F", "BE", "DU", "HM", "HA", "MU", "SG"), "Europe/Berlin"),
    "PA": "Europe/Paris",
    "AS": "Europe/Amsterdam",
    "BR": "Europe/Brussels",
    "MI": "Europe/Rome",
    "MC": "Europe/Madrid",
    "LS": "Europe/Lisbon",
    "SW": "Europe/Zurich",
    "ST": "Europe/Stockholm",
    "OL": "Europe/Oslo",
    "CO": "Europe/Copenhagen",
    "HE": "Europe/Helsinki",
    "VI": "Europe/Vienna",
    "IR": "Europe/Dublin",
    "WA": "Europe/Warsaw",
    "PR": "Europe/Prague",
    "AT": "Europe/Athens",
    "IS": "Europe/Istanbul",
    "TA": "Asia/Jerusalem",
    "JO": "Africa/Johannesburg",
    "SA": "America/Sao_Paulo",
    "MX": "America/Mexico_City",
    "BA": "America/Argentina/Buenos_Aires",
    "SN": "America/Santiago",
    "JK": "Asia/Jakarta",
    "KL": "Asia/Kuala_Lumpur",
    "BK": "Asia/Bangkok",
    "SR": "Asia/Riyadh",
    "QA": "Asia/Qatar",
}
#: Time zone of a symbol without an exchange suffix (NYSE, Nasdaq).
US_TIMEZONE = "America/New_York"

#: Yahoo Finance index symbols (``^GDAXI``, ``^N225``), which carry no exchange suffix, and
#: for each ``(exchange or index provider, IANA time zone)``: the zone of the market the
#: index is computed on, in which Yahoo dates its daily bars. :func:`exchange_timezone`
#: looks a symbol up here before its suffix. US indices are listed too (New York) so that
#: the table says every index it knows; an index symbol not listed falls back to its
#: suffix, else to :data:`US_TIMEZONE`. Index symbols with a suffix (``000001.SS``,
#: ``^TA125.TA``) need no row. Source: Yahoo's quote pages ("exchange" of each index).
INDEX_EXCHANGES: dict[str, tuple[str, str]] = {
    # United States: New York time, like US listings (Cboe's VIX included, US session dates)
    "^GSPC": ("NYSE (S&P 500)", US_TIMEZONE),
    "^DJI": ("NYSE (Dow Jones Industrial Average)", US_TIMEZONE),
    "^NYA": ("NYSE (NYSE Composite)", US_TIMEZONE),
    "^IXIC": ("Nasdaq (Nasdaq Composite)", US_TIMEZONE),
    "^NDX": ("Nasdaq (Nasdaq-100)", US_TIMEZONE),
    "^RUT": ("NYSE/Nasdaq (Russell 2000)", US_TIMEZONE),
    "^VIX": ("Cboe (Volatility Index)", US_TIMEZONE),
    # Americas
    "^GSPTSE": ("Toronto Stock Exchange (S&P/TSX Composite)", "America/Toronto"),
    "^BVSP": ("B3, Sao Paulo (Ibovespa)", "America/Sao_Paulo"),
    "^MXX": ("Bolsa Mexicana de Valores (S&P/BMV IPC)", "America/Mexico_City"),
    "^MERV": ("Bolsas y Mercados Argentinos (MERVAL)", "America/Argentina/Buenos_Aires"),
    # Europe
    "^FTSE": ("London Stock Exchange (FTSE 100)", "Europe/London"),
    "^GDAXI": ("Deutsche Boerse Xetra, Frankfurt (DAX)", "Europe/Berlin"),
    "^FCHI": ("Euronext Paris (CAC 40)", "Europe/Paris"),
    "^N100": ("Euronext Paris (Euronext 100)", "Europe/Paris"),
    "^AEX": ("Euronext Amsterdam (AEX)", "Europe/Amsterdam"),
    "^BFX": ("Euronext Brussels (BEL 20)", "Europe/Brussels"),
    "^IBEX": ("Bolsa de Madrid (IBEX 35)", "Europe/Madrid"),
    "^SSMI": ("SIX Swiss Exchange, Zurich (SMI)", "Europe/Zurich"),
    "^STOXX50E": ("STOXX, Zurich (EURO STOXX 50)", "Europe/Zurich"),
    "^STOXX": ("STOXX, Zurich (STOXX Europe 600)", "Europe/Zurich"),
    "^ATX": ("Wiener Boerse (ATX)", "Europe/Vienna"),
    "^OMX": ("Nasdaq Stockholm (OMX Stockholm 30)", "Europe/Stockholm"),
    # Asia-Pacific
    "^N225": ("Tokyo Stock Exchange (Nikkei 225)", "Asia/Tokyo"),
    "^HSI": ("Hong Kong Stock Exchange (Hang Seng)", "Asia/Hong_Kong"),
    "^HSCE": ("Hong Kong Stock Exchange (Hang Seng China Enterprises)", "Asia/Hong_Kong"),
    "^KS11": ("Korea Exchange (KOSPI)", "Asia/Seoul"),
    "^TWII": ("Taiwan Stock Exchange (TAIEX)", "Asia/Taipei"),
    "^STI": ("Singapore Exchange (Straits Times)", "Asia/Singapore"),
    "^BSESN": ("BSE, Mumbai (S&P BSE Sensex)", "Asia/Kolkata"),
    "^NSEI": ("National Stock Exchange of India (Nifty 50)", "Asia/Kolkata"),
    "^JKSE": ("Indonesia Stock Exchange (IDX Composite)", "Asia/Jakarta"),
    "^KLSE": ("Bursa Malaysia (FTSE Bursa Malaysia KLCI)", "Asia/Kuala_Lumpur"),
    "^AXJO": ("ASX, Sydney (S&P/ASX 200)", "Australia/Sydney"),
    "^AORD": ("ASX, Sydney (All Ordinaries)", "Australia/Sydney"),
    "^NZ50": ("NZX, Wellington (S&P/NZX 50)", "Pacific/Auckland"),
}


def split_exchange_suffix(ticker: str) -> tuple[str, str]:
    """``(base, suffix)`` of a ticker: ``"SHOP.TO"`` -> ``("SHOP", "TO")``, ``"BRK.B"`` -> ``("BRK.B", "")``.

    The text after the last ``.`` is an exchange suffix only when it is a key of
    :data:`EXCHANGE_TIMEZONES`; anything else after a dot is a share class and stays in
    ``base``. The ticker is upper-cased and stripped, nothing else.
    """
    t = str(ticker).strip().upper()
    base, dot, suffix = t.rpartition(".")
    if dot and base and suffix in EXCHANGE_TIMEZONES:
        return base, suffix
    return t, ""


def normalize_ticker(ticker: str) -> str:
    """Canonical S&P-style ticker: stripped, upper case, share class with ``.`` (BRK-B -> BRK.B).

    Yahoo writes share classes with ``-``; S&P lists and Wikipedia use ``.``. The package
    keeps the S&P spelling everywhere and converts only at the Yahoo boundary
    (:func:`to_yahoo_symbol`). An exchange suffix (``SHOP.TO``) is kept as written.
    """
    return str(ticker).strip().upper().replace("-", ".")


def to_yahoo_symbol(ticker: str) -> str:
    """Yahoo Finance spelling of a ticker: share-class dots become dashes, exchange suffixes stay.

    The rule: split off an exchange suffix (:func:`split_exchange_suffix`, a key of
    :data:`EXCHANGE_TIMEZONES` after the last dot), write every remaining ``.`` as ``-``,
    and put the suffix back: ``BRK.B`` -> ``BRK-B``, ``SHOP.TO``, ``VOD.L`` and ``7203.T``
    unchanged, ``RDS.A.L`` -> ``RDS-A.L``. A share class whose letter is also a one-letter
    suffix (``L``, ``T``, ``F``, ``V``: e.g. ``MKC.V``) is read as the exchange.
    """
    base, suffix = split_exchange_suffix(normalize_ticker(ticker))
    symbol = base.replace(".", "-")
    return f"{symbol}.{suffix}" if suffix else symbol


def exchange_timezone(ticker: str) -> str:
    """IANA time zone (e.g. ``"Asia/Tokyo"``) of the exchange a ticker or index trades on.

    In order: an index symbol of :data:`INDEX_EXCHANGES` (``"^N225"`` -> ``"Asia/Tokyo"``,
    ``"^GDAXI"`` -> ``"Europe/Berlin"``, ``"^GSPC"`` -> ``"America/New_York"``); else the
    zone of its Yahoo exchange suffix (:data:`EXCHANGE_TIMEZONES`: ``"7203.T"`` ->
    ``"Asia/Tokyo"``, ``"000001.SS"`` -> ``"Asia/Shanghai"``); else :data:`US_TIMEZONE`.
    The fallback covers US listings (``"AAPL"``, ``"BRK.B"``) but also any index symbol
    not in the table (an unknown ``"^XYZ"`` is dated in New York time, possibly on the
    wrong calendar day: add its row to :data:`INDEX_EXCHANGES`). The ticker is matched
    stripped and upper-cased (:func:`normalize_ticker`). Never raises.
    """
    t = normalize_ticker(ticker)
    index = INDEX_EXCHANGES.get(t)
    if index is not None:
        return index[1]
    return EXCHANGE_TIMEZONES.get(split_exchange_suffix(t)[1], US_TIMEZONE)


class SourceReader:
    """Base of the reader classes: chooses snapshot or live, and builds the manifest.

    A subclass sets :attr:`source` (the name in its provenance records) and
    :attr:`snapshot_layout` (the snapshot path pattern named in "how to fix" messages),
    and implements :meth:`_read_snapshot` and :meth:`_read_live`; each returns the table
    and records what it read with :meth:`_record` / :meth:`_record_file` /
    :meth:`_record_bytes`, counting the rows it drops in :attr:`skipped_by_reason`
    (reason code -> count). :meth:`_manifest_extra` adds source-specific keys to the
    manifest of :meth:`fetch`.

    Parameters
    ----------
    session:
        HTTP session for live reads (tests inject one replaying recordings); ``None``:
        :func:`make_session` builds one when a live read needs it.
    snapshot_dir:
        Snapshot directory; ``None`` falls back to ``$ANACHRON_SNAPSHOT_DIR`` and then to
        live fetching (:func:`resolve_snapshot_dir`).
    """

    #: Source name written as ``source`` in each provenance record.
    source: str = ""
    #: Snapshot path pattern(s) the reader needs, relative to the snapshot directory.
    snapshot_layout: str = ""

    def __init__(self, *, session: Any = None, snapshot_dir: str | os.PathLike[str] | None = None) -> None:
        self.session = session
        self.snapshot_dir = snapshot_dir
        self._manifest: list[dict[str, Any]] = []
        self.skipped_by_reason: dict[str, int] = {}

    @property
    def manifest(self) -> list[dict[str, Any]]:
        """Provenance records of the last ``read()`` (empty before it)."""
        return list(self._manifest)

    def read(self) -> pd.DataFrame:
        """The table, from the snapshot directory if one is set, else live.

        The one place that chooses: :meth:`_read_snapshot` with the resolved directory,
        or :meth:`_read_live` with the injected session (or :meth:`_live_session`).

        Raises:
            SourceError: when the source cannot deliver data (the message says which
                source, and how to use a snapshot instead).
        """
        snap = resolve_snapshot_dir(self.snapshot_dir)
        self._manifest = []
        if snap is not None:
            return self._read_snapshot(snap)
        return self._read_live(self._live_session())

    def fetch(self) -> tuple[pd.DataFrame, dict[str, Any]]:
        """:meth:`read`, and the manifest the workflow writes beside the table.

        Returns:
            ``(table, {"sources": [records], "skipped_by_reason": {...}, **extra})`` with
            ``extra`` from :meth:`_manifest_extra`.
        """
        table = self.read()
        manifest = {"sources": self.manifest, "skipped_by_reason": dict(self.skipped_by_reason)}
        manifest.update(self._manifest_extra(table))
        return table, manifest

    # -- what a subclass provides ---------------------------------------------------------
    def _read_snapshot(self, snap: Path) -> pd.DataFrame:
        """The table from the snapshot directory ``snap`` (an existing directory)."""
        raise NotImplementedError

    def _read_live(self, session: Any) -> pd.DataFrame:
        """The table fetched live through ``session``."""
        raise NotImplementedError

    def _manifest_extra(self, table: pd.DataFrame) -> dict[str, Any]:
        """Source-specific manifest keys after ``sources`` and ``skipped_by_reason``."""
        return {}

    def _live_session(self) -> Any:
        """The session for a live read: the injected one, else :func:`make_session`."""
        return self.session if self.session is not None else make_session()

    # -- helpers --------------------------------------------------------------------------
    def _get(self, session: Any, url: str, *, what: str, **kwargs: Any) -> requests.Response:
        """:func:`http_get` with this reader's snapshot layout as the offline fix."""
        return http_get(session, url, what=what, layout=self.snapshot_layout, **kwargs)

    def _hint(self) -> str:
        """:func:`snapshot_hint` for this reader's snapshot layout."""
        return snapshot_hint(self.snapshot_layout)

    def _record(self, origin: str, sha256: str, rows: int, **extra: Any) -> None:
        """Append a provenance record (``source`` = :attr:`source`, then ``extra``)."""
        self._manifest.append(manifest_entry(origin, sha256, rows, source=self.source, **extra))

    def _record_file(self, path: Path, rows: int, **extra: Any) -> None:
        """Record a snapshot file read: origin ``snapshot:<path>``, the file's sha256."""
        self._record(f"snapshot:{path}", sha256_file(path), rows, **extra)

    def _record_bytes(self, origin: str, content: bytes, rows: int, **extra: Any) -> None:
        """Record a body fetched from ``origin`` (usually its URL) with its sha256."""
        self._record(origin, sha256_bytes(content), rows, **extra)
