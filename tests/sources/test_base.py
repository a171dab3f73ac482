"""SourceReader: the snapshot-or-live choice, the manifest it builds, and the one HTTP
session factory (urllib3 ``Retry`` on an ``HTTPAdapter``, honouring ``Retry-After``)."""

from __future__ import annotations

import io
import threading
import types
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pandas as pd
import pytest
import requests
import responses
import urllib3.util.retry
from requests.adapters import HTTPAdapter

from anachron.io import sha256_bytes, sha256_file
from anachron.sources.base import (
    DEFAULT_USER_AGENT,
    RETRY_STATUSES,
    SNAPSHOT_ENV,
    SourceError,
    SourceReader,
    http_get,
    make_session,
)

URL = "https://example.org/data.csv"


class _Reader(SourceReader):
    """A minimal reader: one CSV file, from ``demo/data.csv`` or :data:`URL`."""

    source = "demo"
    snapshot_layout = "demo/data.csv"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.calls: list[tuple[str, object]] = []

    def _read_snapshot(self, snap: Path) -> pd.DataFrame:
        self.calls.append(("snapshot", snap))
        path = snap / self.snapshot_layout
        df = pd.read_csv(path)
        self._record_file(path, len(df), kind="table")
        self.skipped_by_reason = {"empty_row": 2}
        return df

    def _read_live(self, session) -> pd.DataFrame:
        self.calls.append(("live", session))
        resp = self._get(session, URL, what="the demo table")
        df = pd.read_csv(io.BytesIO(resp.content))
        self._record_bytes(URL, resp.content, len(df), kind="table")
        return df

    def _manifest_extra(self, table: pd.DataFrame) -> dict:
        return {"rows": len(table)}


@pytest.fixture
def snap(tmp_path, monkeypatch):
    monkeypatch.delenv(SNAPSHOT_ENV, raising=False)
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "data.csv").write_text("a,b\n1,2\n3,4\n")
    return tmp_path


# -- snapshot or live: chosen once, in the base --------------------------------------------


def test_snapshot_dir_argument_reads_the_snapshot_only(snap):
    reader = _Reader(snapshot_dir=snap, session=object())
    df = reader.read()
    assert reader.calls == [("snapshot", snap)]
    assert df["a"].tolist() == [1, 3]


def test_snapshot_env_variable_is_the_same_choice(snap, monkeypatch):
    monkeypatch.setenv(SNAPSHOT_ENV, str(snap))
    reader = _Reader()
    reader.read()
    assert [mode for mode, _ in reader.calls] == ["snapshot"]


def test_no_snapshot_reads_live_through_the_injected_session(snap):
    session = requests.Session()
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, URL, body="a,b\n5,6\n")
        reader = _Reader(session=session)
        df = reader.read()
    assert reader.calls == [("live", session)]
    assert df["a"].tolist() == [5]


def test_no_session_builds_one_with_the_retry_adapter(snap, monkeypatch):
    seen = {}

    def live(self, session):
        seen["session"] = session
        return pd.DataFrame()

    monkeypatch.setattr(_Reader, "_read_live", live)
    _Reader().read()
    adapter = seen["session"].get_adapter(URL)
    assert isinstance(adapter, HTTPAdapter) and adapter.max_retries.total == 3


def test_missing_snapshot_dir_is_an_error_before_any_read(tmp_path, monkeypatch):
    monkeypatch.delenv(SNAPSHOT_ENV, raising=False)
    reader = _Reader(snapshot_dir=tmp_path / "nope")
    with pytest.raises(SourceError, match="snapshot_dir"):
        reader.read()
    assert reader.calls == []


def test_live_failure_names_the_data_and_the_snapshot_fix(snap):
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, URL, status=404)
        with pytest.raises(SourceError) as err:
            _Reader(session=requests.Session()).read()
    msg = str(err.value)
    assert "the demo table" in msg and URL in msg and "404" in msg
    assert "snapshot_dir" in msg and SNAPSHOT_ENV in msg and "demo/data.csv" in msg


# -- the manifest ---------------------------------------------------------------------------


def test_fetch_builds_the_workflow_manifest(snap):
    table, manifest = _Reader(snapshot_dir=snap).fetch()
    assert list(manifest) == ["sources", "skipped_by_reason", "rows"]
    assert manifest["skipped_by_reason"] == {"empty_row": 2} and manifest["rows"] == 2 == len(table)
    (record,) = manifest["sources"]
    path = snap / "demo" / "data.csv"
    assert list(record) == ["origin", "sha256", "rows", "fetched_at", "source", "kind"]
    assert record["origin"] == f"snapshot:{path}" and record["sha256"] == sha256_file(path)
    assert record["rows"] == 2 and record["source"] == "demo" and record["kind"] == "table"


def test_live_record_hashes_the_body_and_each_read_starts_a_new_manifest(snap):
    body = "a,b\n5,6\n7,8\n"
    reader = _Reader(session=requests.Session())
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, URL, body=body)
        reader.read()
        reader.read()
    (record,) = reader.manifest
    assert record["origin"] == URL and record["sha256"] == sha256_bytes(body.encode()) and record["rows"] == 2
    reader.snapshot_dir = snap
    reader.read()
    assert [r["origin"] for r in reader.manifest] == [f"snapshot:{snap / 'demo' / 'data.csv'}"]


# -- the HTTP session factory ---------------------------------------------------------------


def test_make_session_mounts_a_retry_that_honours_retry_after():
    session = make_session()
    assert session.headers["User-Agent"] == DEFAULT_USER_AGENT
    for prefix in ("https://", "http://"):
        retry = session.adapters[prefix].max_retries
        assert retry.total == 3 and retry.backoff_factor == 1.0
        assert set(retry.status_forcelist) == set(RETRY_STATUSES) == {429, 500, 502, 503, 504}
        assert retry.respect_retry_after_header is True
        assert set(retry.allowed_methods) == {"GET"}
        assert retry.raise_on_status is False
    assert make_session(retries=0).adapters["https://"].max_retries.total == 0


def test_replayed_503_then_200_is_retried_by_the_adapter():
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, URL, status=503)
        rsps.add(responses.GET, URL, body="a\n1\n")
        resp = http_get(make_session(backoff=0), URL, what="the demo table", layout="demo/data.csv")
        assert len(rsps.calls) == 2
    assert resp.status_code == 200 and resp.text == "a\n1\n"


def test_persistent_503_gives_up_with_a_source_error():
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, URL, status=503)
        with pytest.raises(SourceError, match="503"):
            http_get(make_session(retries=2, backoff=0), URL, what="the demo table", layout="demo/data.csv")
        assert len(rsps.calls) == 3  # the first try and two retries


def test_allowed_status_is_returned_not_raised():
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, URL, status=404)
        resp = http_get(requests.Session(), URL, what="x", layout="demo/data.csv", allow_status=(404,))
    assert resp.status_code == 404


def test_429_waits_its_retry_after_then_succeeds(monkeypatch):
    """Through urllib3 for real (a loopback server answering 429 then 200): the wait is the
    answer's Retry-After, not the exponential back-off (which is 0 before a first retry)."""
    import time

    slept: list[float] = []
    fake_time = types.SimpleNamespace(**{k: getattr(time, k) for k in dir(time) if not k.startswith("_")})
    fake_time.sleep = slept.append
    monkeypatch.setattr(urllib3.util.retry, "time", fake_time)
    script = [(429, {"Retry-After": "7"}, b"slow down"), (200, {}, b"a\n1\n")]
    paths: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            paths.append(self.path)
            status, headers, body = script[len(paths) - 1]
            self.send_response(status)
            for k, v in {**headers, "content-length": str(len(body))}.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

    httpd = HTTPServer(("127.0.0.1", 0), Handler)
    serve = threading.Thread(target=lambda: [httpd.handle_request() for _ in script], daemon=True)
    serve.start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/data.csv"
        resp = http_get(make_session(backoff=0.5), url, what="the demo table", layout="demo/data.csv")
    finally:
        serve.join(timeout=10)
        httpd.server_close()
    assert resp.status_code == 200 and resp.text == "a\n1\n"
    assert paths == ["/data.csv", "/data.csv"]
    assert slept == [7.0]
