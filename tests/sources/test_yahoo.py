"""YahooPriceReader: a yfinance download replayed from recorded responses, and snapshot reads.

The chart fixtures (tests/fixtures/yahoo/*.json) are in Yahoo's v8 chart shape with
invented prices; the snapshot fixture is a tiny invented CSV (PRICES_CSV below).
"""

from __future__ import annotations

import gzip
import json
import re

import pandas as pd
import pytest
import requests
import responses

from anachron.io import sha256_file
from anachron.sources.base import SNAPSHOT_ENV, SourceError
from anachron.sources.yahoo import PRICE_COLUMNS, YahooPriceReader, flatten_download

from conftest import TESTS

FIXTURES = TESTS / "fixtures"
SNAPSHOTS = FIXTURES / "snapshots"
CHART = "https://query2.finance.yahoo.com/v8/finance/chart/{}"

# Content of tests/fixtures/snapshots/yahoo/prices_daily_fixture.csv.gz (invented values).
PRICES_CSV = """\
ticker,date,open,high,low,close,adj_close,volume
AAA,2019-11-27,9.0,9.5,8.9,9.4,9.0,1000
AAA,2019-12-02,10.0,10.5,9.8,10.0,9.6,1100
AAA,2019-12-03,10.1,10.4,9.9,10.2,9.8,1200
AAA,2019-12-31,11.0,11.2,10.8,11.0,10.8,900
AAA,2020-01-02,11.1,11.3,11.0,11.2,11.0,950
BBB-B,2019-12-02,20.0,20.4,19.8,20.0,19.0,500
BBB-B,2019-12-03,20.2,20.6,20.0,20.4,19.4,520
BBB-B,2019-12-31,21.0,21.5,20.7,21.2,20.2,480
EEE,2019-12-02,30.0,30.5,29.5,30.0,30.0,700
EEE,2019-12-31,29.0,29.6,28.8,29.4,29.4,650
GGG,2019-12-03,40.0,40.8,39.6,40.5,40.5,300
GGG,2019-12-31,42.0,42.4,41.5,42.0,42.0,310
"""


@pytest.fixture(scope="module", autouse=True)
def _yf_cache_dir(tmp_path_factory):
    """Keep yfinance's sqlite caches (timezone, cookie) out of the user's home."""
    import yfinance as yf

    yf.set_tz_cache_location(str(tmp_path_factory.mktemp("yf-cache")))


@pytest.fixture(autouse=True)
def _fresh_yfinance(monkeypatch):
    """yfinance keeps a process-wide singleton (session, crumb) and an lru cache of chart
    responses for past date ranges; reset both so each test sees only its own recordings."""
    from yfinance.data import SingletonMeta, YfData

    monkeypatch.delenv(SNAPSHOT_ENV, raising=False)
    SingletonMeta._instances.pop(YfData, None)
    YfData.cache_get.cache_clear()
    yield
    SingletonMeta._instances.pop(YfData, None)
    YfData.cache_get.cache_clear()


def _chart(name: str) -> dict:
    return json.loads((FIXTURES / "yahoo" / name).read_text())


def _register_cookie_and_crumb(rsps: responses.RequestsMock) -> None:
    # yfinance 1.7 first gets a cookie (fc.yahoo.com), then a crumb; on an HTTP error it
    # retries with the consent ("csrf") strategy, which starts at guce.yahoo.com.
    rsps.add(responses.GET, "https://fc.yahoo.com", body="", status=404)
    rsps.add(responses.GET, "https://query1.finance.yahoo.com/v1/test/getcrumb", body="fixtureCrumb")
    rsps.add(responses.GET, "https://query2.finance.yahoo.com/v1/test/getcrumb", body="fixtureCrumb")
    rsps.add(responses.GET, "https://guce.yahoo.com/consent", body="<html></html>")


def test_live_download_replayed_keeps_raw_close_and_adj_close():
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        _register_cookie_and_crumb(rsps)
        rsps.add(responses.GET, CHART.format("AAA"), json=_chart("chart_AAA.json"))
        rsps.add(responses.GET, CHART.format("BBB-B"), json=_chart("chart_BBB-B.json"))
        reader = YahooPriceReader(["AAA", "BBB.B"], "2024-01-02", "2024-01-05", session=requests.Session())
        df = reader.read()
        chart_calls = [c for c in rsps.calls if "/v8/finance/chart/" in c.request.url]

    assert list(df.columns) == PRICE_COLUMNS
    assert df["date"].dtype == "datetime64[ns]"
    assert df["ticker"].tolist() == ["AAA"] * 3 + ["BBB.B"] * 3  # S&P spelling, sorted
    assert df["date"].dt.strftime("%Y-%m-%d").tolist()[:3] == ["2024-01-02", "2024-01-03", "2024-01-04"]
    aaa = df[df["ticker"] == "AAA"].set_index(df[df["ticker"] == "AAA"]["date"].dt.strftime("%Y-%m-%d"))
    assert aaa.loc["2024-01-03", "open"] == pytest.approx(10.5)
    assert aaa.loc["2024-01-03", "close"] == pytest.approx(10.2)
    assert aaa.loc["2024-01-03", "adj_close"] == pytest.approx(9.7)
    assert aaa.loc["2024-01-04", "volume"] == pytest.approx(900)
    # auto_adjust=False: the raw close survives next to the adjusted close
    assert (df["adj_close"] != df["close"]).all()

    # the daily chart endpoint was asked for a date range, daily bars, with Yahoo's symbol
    ranged = [c for c in chart_calls if "period1=" in c.request.url]
    assert ranged and all("interval=1d" in c.request.url for c in ranged)
    assert any(c.request.url.startswith(CHART.format("BBB-B")) for c in ranged)

    (entry,) = reader.manifest
    assert entry["origin"].startswith("https://query2.finance.yahoo.com/v8/finance/chart/")
    assert entry["rows"] == 6
    assert len(entry["sha256"]) == 64
    assert entry["tickers_requested"] == ["AAA", "BBB.B"]
    assert entry["tickers_returned"] == ["AAA", "BBB.B"]
    assert entry["tickers_missing"] == []
    assert entry["auto_adjust"] is False


def test_live_ticker_without_rows_is_recorded_as_missing():
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        _register_cookie_and_crumb(rsps)
        rsps.add(responses.GET, CHART.format("AAA"), json=_chart("chart_AAA.json"))
        rsps.add(responses.GET, CHART.format("GONE"), json=_chart("chart_not_found.json"), status=404)
        reader = YahooPriceReader(["AAA", "GONE"], "2024-01-02", "2024-01-05", session=requests.Session())
        df = reader.read()
    assert set(df["ticker"]) == {"AAA"}
    assert reader.manifest[0]["tickers_missing"] == ["GONE"]


def test_live_connection_error_raises_source_error_pointing_at_snapshot():
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        boom = requests.ConnectionError("network unreachable (test)")
        rsps.add(responses.GET, re.compile(r"https://.*"), body=boom)
        reader = YahooPriceReader(["AAA"], "2024-01-02", "2024-01-05", session=requests.Session())
        with pytest.raises(SourceError) as err:
            reader.read()
    msg = str(err.value)
    assert "Yahoo" in msg and "snapshot_dir" in msg and SNAPSHOT_ENV in msg
    assert "yahoo/prices_daily_*.csv.gz" in msg


def test_live_empty_result_raises_source_error():
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        _register_cookie_and_crumb(rsps)
        rsps.add(responses.GET, re.compile(r"https://query2\.finance\.yahoo\.com/v8/finance/chart/.*"),
                 json=_chart("chart_not_found.json"), status=404)
        reader = YahooPriceReader(["NOPE1", "NOPE2"], "2024-01-02", "2024-01-05", session=requests.Session())
        with pytest.raises(SourceError, match="no prices"):
            reader.read()
    assert reader.manifest == []


def test_live_exception_from_yfinance_becomes_source_error(monkeypatch):
    import yfinance as yf

    def fail(*args, **kwargs):
        raise RuntimeError("rate limited (test)")

    monkeypatch.setattr(yf, "download", fail)
    with pytest.raises(SourceError, match="rate limited"):
        YahooPriceReader(["AAA"], "2024-01-02", "2024-01-05").read()


def test_download_call_passes_auto_adjust_false(monkeypatch):
    import yfinance as yf

    seen = {}

    def fake(tickers, **kwargs):
        seen.update(kwargs, tickers=tickers)
        idx = pd.DatetimeIndex(["2024-01-02"], name="Date")
        cols = pd.MultiIndex.from_product([["Adj Close", "Close", "High", "Low", "Open", "Volume"], ["BRK-B"]],
                                          names=["Price", "Ticker"])
        return pd.DataFrame([[1.0, 2.0, 3.0, 0.5, 1.5, 10.0]], index=idx, columns=cols)

    monkeypatch.setattr(yf, "download", fake)
    df = YahooPriceReader(["BRK.B"], "2024-01-02", "2024-01-03").read()
    assert seen["auto_adjust"] is False and seen["actions"] is False and seen["multi_level_index"] is True
    assert seen["tickers"] == ["BRK-B"]
    assert df.loc[0, "ticker"] == "BRK.B" and df.loc[0, "adj_close"] == 1.0 and df.loc[0, "close"] == 2.0


def test_flatten_download_handles_ticker_first_levels_and_nan_rows():
    idx = pd.DatetimeIndex(["2024-01-02", "2024-01-03"], name="Date")
    cols = pd.MultiIndex.from_product([["AAA", "BBB"], ["Open", "High", "Low", "Close", "Adj Close", "Volume"]],
                                      names=["Ticker", "Price"])
    data = pd.DataFrame([[1, 2, 0.5, 1.5, 1.4, 10, 5, 6, 4, 5.5, 5.0, 20],
                         [1, 2, 0.5, 1.6, 1.5, 11] + [float("nan")] * 6], index=idx, columns=cols, dtype="float64")
    df = flatten_download(data)
    assert df["ticker"].tolist() == ["AAA", "AAA", "BBB"]  # BBB's all-NaN day dropped
    assert df.loc[2, "close"] == 5.5


def test_fixture_snapshot_is_the_documented_csv():
    raw = gzip.decompress((SNAPSHOTS / "yahoo" / "prices_daily_fixture.csv.gz").read_bytes()).decode()
    assert raw == PRICES_CSV


def test_snapshot_read_filters_tickers_and_half_open_range():
    reader = YahooPriceReader(["AAA", "BBB.B", "EEE", "NOPE"], "2019-12-01", "2019-12-31", snapshot_dir=SNAPSHOTS)
    df = reader.read()
    assert list(df.columns) == PRICE_COLUMNS
    assert df["date"].dtype == "datetime64[ns]"
    # end is exclusive: 2019-12-31 is out; 2019-11-27 is before start
    assert df.groupby("ticker").size().to_dict() == {"AAA": 2, "BBB.B": 2, "EEE": 1}
    bbb = df[df["ticker"] == "BBB.B"].iloc[0]  # Yahoo's BBB-B mapped back to the S&P spelling
    assert (bbb["close"], bbb["adj_close"], bbb["volume"]) == (20.0, 19.0, 500.0)
    assert df.equals(df.sort_values(["ticker", "date"]).reset_index(drop=True))

    (entry,) = reader.manifest
    path = SNAPSHOTS / "yahoo" / "prices_daily_fixture.csv.gz"
    assert entry["origin"] == f"snapshot:{path}"
    assert entry["sha256"] == sha256_file(path)
    assert entry["rows"] == 5
    assert entry["source_rows"] == 12
    assert entry["tickers_requested"] == ["AAA", "BBB.B", "EEE", "NOPE"]
    assert entry["tickers_returned"] == ["AAA", "BBB.B", "EEE"]
    assert entry["tickers_missing"] == ["NOPE"]
    assert "fetched_at" in entry


def test_snapshot_from_environment_variable(monkeypatch):
    monkeypatch.setenv(SNAPSHOT_ENV, str(SNAPSHOTS))
    df = YahooPriceReader(["GGG"], "2019-12-01", "2020-01-01").read()
    assert df["adj_close"].tolist() == [40.5, 42.0]


def test_snapshot_all_missing_is_an_error():
    with pytest.raises(SourceError, match="none of the 1 requested tickers"):
        YahooPriceReader(["NOPE"], "2019-12-01", "2020-01-01", snapshot_dir=SNAPSHOTS).read()


def test_snapshot_dir_without_prices_file(tmp_path):
    with pytest.raises(SourceError, match=r"yahoo/prices_daily_\*\.csv\.gz"):
        YahooPriceReader(["AAA"], "2019-12-01", "2020-01-01", snapshot_dir=tmp_path).read()
    with pytest.raises(SourceError, match="does not exist"):
        YahooPriceReader(["AAA"], "2019-12-01", "2020-01-01", snapshot_dir=tmp_path / "nope").read()


def test_snapshot_missing_column_names_file_and_column(tmp_path):
    (tmp_path / "yahoo").mkdir()
    bad = tmp_path / "yahoo" / "prices_daily_bad.csv.gz"
    bad.write_bytes(gzip.compress(b"ticker,date,open,high,low,close,volume\nAAA,2019-12-02,1,1,1,1,1\n"))
    with pytest.raises(SourceError) as err:
        YahooPriceReader(["AAA"], "2019-12-01", "2020-01-01", snapshot_dir=tmp_path).read()
    assert str(bad) in str(err.value) and "adj_close" in str(err.value) and "auto_adjust=False" in str(err.value)


def test_bad_arguments():
    with pytest.raises(ValueError):
        YahooPriceReader([], "2019-12-01", "2020-01-01")
    with pytest.raises(ValueError):
        YahooPriceReader(["AAA"], "2020-01-01", "2020-01-01")


# --- hardening: spelling, time zones, duplicate days, jumps, yfinance CSVs, Adj Close, end --


def _wide(index, tickers, rows, *, prices=("Adj Close", "Close", "High", "Low", "Open", "Volume")):
    """A yfinance-shaped frame: columns (Price, Ticker); ``rows``: one list of values per Price
    level entry and ticker (price-major), per index entry."""
    cols = pd.MultiIndex.from_product([list(prices), list(tickers)], names=["Price", "Ticker"])
    return pd.DataFrame(rows, index=index, columns=cols, dtype="float64")


@pytest.mark.parametrize("given, yahoo", [
    ("BRK.B", "BRK-B"), ("brk-b", "BRK-B"), ("BF.B", "BF-B"),
    ("SHOP.TO", "SHOP.TO"), ("VOD.L", "VOD.L"), ("7203.T", "7203.T"), ("0700.HK", "0700.HK"),
    ("RDS.A.L", "RDS-A.L"), ("AAPL", "AAPL"),
])
def test_yahoo_symbol_dashes_share_classes_keeps_exchange_suffixes(given, yahoo):
    from anachron.sources.base import to_yahoo_symbol

    assert to_yahoo_symbol(given) == yahoo


def test_exchange_timezone_from_suffix():
    from anachron.sources.base import exchange_timezone

    assert exchange_timezone("AAPL") == exchange_timezone("BRK.B") == "America/New_York"
    assert exchange_timezone("7203.T") == "Asia/Tokyo"
    assert exchange_timezone("SHOP.TO") == "America/Toronto"
    assert exchange_timezone("VOD.L") == "Europe/London"


def test_utc_timestamps_are_dated_in_the_exchange_time_zone():
    # 01:30 UTC on Jan 3 is 20:30 on Jan 2 in New York; 15:00 UTC on Jan 3 is midnight Jan 4 in Tokyo
    idx = pd.DatetimeIndex(["2024-01-03 01:30", "2024-01-03 15:00"], tz="UTC", name="Date")
    data = _wide(idx, ["AAPL", "7203.T"], [[1, 2] * 6, [3, 4] * 6])
    df = flatten_download(data)
    got = {(t, d.strftime("%Y-%m-%d")): c for t, d, c in zip(df["ticker"], df["date"], df["close"])}
    assert got == {("AAPL", "2024-01-02"): 1.0, ("AAPL", "2024-01-03"): 3.0,
                   ("7203.T", "2024-01-03"): 2.0, ("7203.T", "2024-01-04"): 4.0}
    assert df["date"].dtype == "datetime64[ns]"
    # an index already in the exchange's zone keeps its calendar date
    ny = pd.DatetimeIndex(["2024-01-02 00:00"], tz="America/New_York", name="Date")
    assert flatten_download(_wide(ny, ["AAPL"], [[1] * 6]))["date"].dt.strftime("%Y-%m-%d").tolist() == ["2024-01-02"]


def test_two_rows_for_one_day_keep_the_later_one():
    # the same trading day at 00:00 and 16:00 New York time; the later row comes first in the input
    idx = pd.DatetimeIndex(["2024-01-02 21:00", "2024-01-02 05:00", "2024-01-03 05:00"], tz="UTC", name="Date")
    data = _wide(idx, ["AAA"], [[10.5] * 6, [10.0] * 6, [11.0] * 6])
    df = flatten_download(data)
    assert df["date"].dt.strftime("%Y-%m-%d").tolist() == ["2024-01-02", "2024-01-03"]
    assert df["close"].tolist() == [10.5, 11.0]  # the 16:00 row, not the larger or the first price


def test_snapshot_duplicate_day_keeps_the_later_row_and_counts_it(tmp_path):
    (tmp_path / "yahoo").mkdir()
    text = (
        "ticker,date,open,high,low,close,adj_close,volume\n"
        "AAA,2019-12-02,10,10,10,10.0,9.0,1\n"
        "AAA,2019-12-02,99,99,99,12.0,11.0,1\n"  # same day, later in the file: kept
        "AAA,2019-12-03,10,10,10,13.0,12.0,1\n"
        "BBB,2019-12-02,5,5,5,5.0,5.0,1\n"
        "BBB,2019-12-02,5,5,5,5.0,5.0,1\n"  # exact repeat: also one row
    )
    (tmp_path / "yahoo" / "prices_daily_dup.csv.gz").write_bytes(gzip.compress(text.encode()))
    reader = YahooPriceReader(["AAA", "BBB"], "2019-12-01", "2019-12-31", snapshot_dir=tmp_path)
    df, manifest = reader.fetch()
    assert df[df["ticker"] == "AAA"]["close"].tolist() == [12.0, 13.0]
    assert (df["ticker"] == "BBB").sum() == 1
    assert manifest["skipped_by_reason"] == {"duplicate_day": 2}
    assert manifest["sources"][0]["duplicate_days_dropped"] == 2


def test_snapshot_with_utc_offsets_is_dated_per_exchange(tmp_path):
    (tmp_path / "yahoo").mkdir()
    text = (
        "ticker,date,open,high,low,close,adj_close,volume\n"
        "AAA,2019-12-03T02:00:00+00:00,1,1,1,1.0,1.0,1\n"  # 21:00 Dec 2 in New York
        "7203.T,2019-12-02T15:00:00Z,1,1,1,2.0,2.0,1\n"  # midnight Dec 3 in Tokyo
        "AAA,2019-12-04,1,1,1,3.0,3.0,1\n"
    )
    (tmp_path / "yahoo" / "prices_daily_tz.csv.gz").write_bytes(gzip.compress(text.encode()))
    df = YahooPriceReader(["AAA", "7203.T"], "2019-12-01", "2019-12-31", snapshot_dir=tmp_path).read()
    got = dict(zip(df["ticker"] + " " + df["date"].dt.strftime("%Y-%m-%d"), df["close"]))
    assert got == {"7203.T 2019-12-03": 2.0, "AAA 2019-12-02": 1.0, "AAA 2019-12-04": 3.0}


# Index symbols carry no exchange suffix: their zone comes from INDEX_EXCHANGES. Offsets:
# Tokyo +9 (no DST); Berlin +1 (CET) until 2023-03-26, +2 (CEST) after; New York -5 (EST)
# until 2023-03-12, -4 (EDT) after. Each UTC time below falls on another day (or hour) in New York.
INDEX_UTC = [
    ("^N225", "2023-03-10T06:00:00Z", "2023-03-10 15:00"),  # Tokyo close (New York: 01:00)
    ("^N225", "2023-03-09T15:00:00Z", "2023-03-10 00:00"),  # Yahoo's midnight bar (New York: Mar 9)
    ("^GDAXI", "2023-03-09T22:30:00Z", "2023-03-09 23:30"),  # CET, before the DST change
    ("^GDAXI", "2023-03-09T23:00:00Z", "2023-03-10 00:00"),  # midnight CET (New York: Mar 9 18:00)
    ("^GDAXI", "2023-07-03T22:00:00Z", "2023-07-04 00:00"),  # midnight CEST (New York: Jul 3 18:00)
    ("^GSPC", "2023-03-10T21:00:00Z", "2023-03-10 16:00"),  # EST close
    ("^GSPC", "2023-03-14T02:00:00Z", "2023-03-13 22:00"),  # EDT: still Mar 13 in New York
]


@pytest.mark.parametrize("symbol, zone", [
    ("^GDAXI", "Europe/Berlin"), ("^N225", "Asia/Tokyo"), ("^FTSE", "Europe/London"), ("^FCHI", "Europe/Paris"),
    ("^STOXX50E", "Europe/Zurich"), ("^HSI", "Asia/Hong_Kong"), ("^AXJO", "Australia/Sydney"),
    ("^KS11", "Asia/Seoul"), ("^BSESN", "Asia/Kolkata"), ("^NSEI", "Asia/Kolkata"), ("^GSPTSE", "America/Toronto"),
    ("^BVSP", "America/Sao_Paulo"), ("^MXX", "America/Mexico_City"), ("^SSMI", "Europe/Zurich"),
    ("^AEX", "Europe/Amsterdam"), ("^IBEX", "Europe/Madrid"), ("^TWII", "Asia/Taipei"), ("^STI", "Asia/Singapore"),
    (" ^n225 ", "Asia/Tokyo"),  # matched stripped and upper-cased
    # US indices stay in New York; suffixed index symbols go by their suffix
    ("^GSPC", "America/New_York"), ("^DJI", "America/New_York"), ("^IXIC", "America/New_York"),
    ("^VIX", "America/New_York"), ("^RUT", "America/New_York"),
    ("000001.SS", "Asia/Shanghai"), ("^TA125.TA", "Asia/Jerusalem"),
    ("^NOSUCHINDEX", "America/New_York"),  # unknown caret symbol: the documented fallback
])
def test_exchange_timezone_of_index_symbols(symbol, zone):
    from anachron.sources.base import exchange_timezone

    assert exchange_timezone(symbol) == zone


def test_index_table_names_exchange_and_a_valid_zone():
    from zoneinfo import ZoneInfo

    from anachron.sources.base import INDEX_EXCHANGES

    for symbol, (exchange, zone) in INDEX_EXCHANGES.items():
        assert symbol.startswith("^") and symbol == symbol.upper() and "." not in symbol
        assert exchange.strip() and ZoneInfo(zone)


def test_exchange_local_times_of_index_symbols_utc_and_offset_text():
    from anachron.sources.yahoo import exchange_local_times

    tickers = pd.Series([t for t, _, _ in INDEX_UTC])
    want = pd.to_datetime([w for _, _, w in INDEX_UTC]).tolist()
    aware = pd.Series(pd.to_datetime([u for _, u, _ in INDEX_UTC], utc=True))
    assert exchange_local_times(aware, tickers).tolist() == want
    # the same instants as ISO text with a UTC offset (as in a snapshot CSV)
    text = pd.Series([u for _, u, _ in INDEX_UTC])
    assert exchange_local_times(text, tickers).tolist() == want


def test_download_of_index_symbols_in_utc_is_dated_per_exchange():
    # one UTC index for all three, as yfinance gives when symbols of several zones are mixed:
    # 23:00Z on Mar 9 is midnight Mar 10 in Berlin (CET), 08:00 Mar 10 in Tokyo, 18:00 Mar 9 in
    # New York (EST); 22:00Z on Jul 3 is midnight Jul 4 in Berlin (CEST), 07:00 Jul 4 in Tokyo,
    # 18:00 Jul 3 in New York (EDT)
    idx = pd.DatetimeIndex(["2023-03-09 23:00", "2023-07-03 22:00"], tz="UTC", name="Date")
    data = _wide(idx, ["^GDAXI", "^GSPC", "^N225"], [[1, 2, 3] * 6, [4, 5, 6] * 6])
    df = flatten_download(data)
    got = {(t, d.strftime("%Y-%m-%d")): c for t, d, c in zip(df["ticker"], df["date"], df["close"])}
    assert got == {
        ("^GDAXI", "2023-03-10"): 1.0, ("^GDAXI", "2023-07-04"): 4.0,
        ("^GSPC", "2023-03-09"): 2.0, ("^GSPC", "2023-07-03"): 5.0,
        ("^N225", "2023-03-10"): 3.0, ("^N225", "2023-07-04"): 6.0,
    }


def test_snapshot_of_index_symbols_with_utc_offsets_is_dated_per_exchange(tmp_path):
    (tmp_path / "yahoo").mkdir()
    rows = "".join(f"{t},{u},1,1,1,{i}.0,{i}.0,1\n" for i, (t, u, _) in enumerate(INDEX_UTC))
    text = "ticker,date,open,high,low,close,adj_close,volume\n" + rows
    (tmp_path / "yahoo" / "prices_daily_idx.csv.gz").write_bytes(gzip.compress(text.encode()))
    df = YahooPriceReader(["^N225", "^GDAXI", "^GSPC"], "2023-03-01", "2023-08-01", snapshot_dir=tmp_path).read()
    got = dict(zip(df["ticker"] + " " + df["date"].dt.strftime("%Y-%m-%d"), df["close"]))
    # of the two ^N225 rows on 2023-03-10 the later (15:00, close 0.0) is kept
    assert got == {
        "^GDAXI 2023-03-09": 2.0, "^GDAXI 2023-03-10": 3.0, "^GDAXI 2023-07-04": 4.0,
        "^GSPC 2023-03-10": 5.0, "^GSPC 2023-03-13": 6.0,
        "^N225 2023-03-10": 0.0,
    }


def _jump_prices(adj, close):
    days = pd.bdate_range("2024-01-01", periods=len(adj))
    return pd.DataFrame({"ticker": "AAA", "date": days, "adj_close": adj, "close": close})


def test_flag_price_jumps_tells_reuse_from_split_and_bad_adjustment():
    from anachron.sources.yahoo import JUMP_COLUMNS, JUMP_FACTOR, flag_price_jumps

    assert JUMP_FACTOR == 3.0
    # a 4:1 split: the raw close drops, the adjusted close does not -> not flagged
    split = flag_price_jumps(_jump_prices([100, 101, 102, 103], [400, 404, 102, 103]))
    assert split.empty and list(split.columns) == JUMP_COLUMNS
    # another company behind the symbol: both move x5 -> flagged once, on the day after the jump
    reuse = flag_price_jumps(_jump_prices([10, 10.5, 52, 53], [10, 10.5, 52, 53]))
    assert reuse["date"].dt.strftime("%Y-%m-%d").tolist() == ["2024-01-03"]
    assert reuse.loc[0, "prev_date"] == pd.Timestamp("2024-01-02")
    assert reuse.loc[0, "adj_ratio"] == pytest.approx(52 / 10.5)
    assert "another company" in reuse.loc[0, "detail"]
    # only the adjusted close falls x1/4: an adjustment without a price change -> flagged
    bad = flag_price_jumps(_jump_prices([100, 25, 25], [100, 100, 100]))
    assert len(bad) == 1 and "adjustment without a matching price change" in bad.loc[0, "detail"]
    # just inside the threshold, and a fall of the same size, are not flagged
    assert flag_price_jumps(_jump_prices([10, 29.9, 10], [10, 29.9, 10])).empty
    with pytest.raises(ValueError):
        flag_price_jumps(_jump_prices([1, 2], [1, 2]), factor=1.0)


def test_reader_lists_price_jumps_in_the_manifest(tmp_path):
    (tmp_path / "yahoo").mkdir()
    text = (
        "ticker,date,open,high,low,close,adj_close,volume\n"
        "AAA,2019-12-02,1,1,1,10.0,10.0,1\nAAA,2019-12-03,1,1,1,80.0,80.0,1\n"
        "BBB,2019-12-02,1,1,1,10.0,10.0,1\nBBB,2019-12-03,1,1,1,11.0,11.0,1\n"
    )
    (tmp_path / "yahoo" / "prices_daily_jump.csv.gz").write_bytes(gzip.compress(text.encode()))
    df, manifest = YahooPriceReader(["AAA", "BBB"], "2019-12-01", "2019-12-31", snapshot_dir=tmp_path).fetch()
    assert len(df) == 4  # flagged, not dropped: the stock task decides per window
    (jump,) = manifest["price_jumps"]
    assert (jump["ticker"], jump["date"], jump["prev_date"]) == ("AAA", "2019-12-03", "2019-12-02")
    assert jump["adj_ratio"] == pytest.approx(8.0)
    assert manifest["sources"][0]["price_jumps"] == 1


@pytest.mark.parametrize("ticker_first", [False, True])
def test_snapshot_saved_by_yfinance_with_multi_row_header(tmp_path, ticker_first):
    idx = pd.DatetimeIndex(["2019-12-02 05:00", "2019-12-03 05:00", "2019-12-31 05:00"], tz="UTC", name="Date")
    data = _wide(idx, ["AAA", "BBB-B"], [[1.0, 2.0, 1.1, 2.1, 1.2, 2.2, 0.9, 1.9, 1.0, 2.0, 10, 20],
                                         [1.5, 2.5, 1.6, 2.6, 1.7, 2.7, 1.4, 2.4, 1.5, 2.5, 11, 21],
                                         [9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9]])
    if ticker_first:
        data = data.swaplevel(axis=1).sort_index(axis=1)
    (tmp_path / "yahoo").mkdir()
    path = tmp_path / "yahoo" / "prices_daily_yf.csv.gz"
    data.to_csv(path)
    assert gzip.decompress(path.read_bytes()).decode().splitlines()[2].startswith("Date,")
    reader = YahooPriceReader(["AAA", "BBB.B"], "2019-12-01", "2019-12-31", snapshot_dir=tmp_path)
    df = reader.read()
    assert list(df.columns) == PRICE_COLUMNS
    assert df["ticker"].tolist() == ["AAA", "AAA", "BBB.B", "BBB.B"]  # Dec 31 outside [start, end)
    assert df["date"].dt.strftime("%Y-%m-%d").tolist() == ["2019-12-02", "2019-12-03"] * 2
    aaa = df.iloc[0]
    assert (aaa["adj_close"], aaa["close"], aaa["open"], aaa["volume"]) == (1.0, 1.1, 1.0, 10.0)
    assert reader.manifest[0]["source_rows"] == 6


def test_data_without_adj_close_is_refused_naming_the_fix(tmp_path):
    idx = pd.DatetimeIndex(["2024-01-02"], name="Date")
    auto = _wide(idx, ["AAA", "BBB"], [[1, 2, 1, 2, 1, 2, 1, 2, 5, 6]], prices=("Close", "High", "Low", "Open", "Volume"))
    with pytest.raises(SourceError, match=r"auto_adjust=False"):
        flatten_download(auto)
    # a yfinance CSV saved with auto_adjust=True
    (tmp_path / "yahoo").mkdir()
    auto.to_csv(tmp_path / "yahoo" / "prices_daily_auto.csv.gz")
    with pytest.raises(SourceError, match=r"auto_adjust=False"):
        YahooPriceReader(["AAA"], "2024-01-01", "2024-01-05", snapshot_dir=tmp_path).read()
    # the column exists but one ticker has closes and no adjusted close: named, not dropped
    partial = _wide(idx, ["AAA", "BBB"], [[1, float("nan"), 1, 2, 1, 2, 1, 2, 1, 2, 5, 6]])
    with pytest.raises(SourceError, match=r"no adjusted close for BBB.*auto_adjust=False"):
        flatten_download(partial)


def test_fetch_window_prices_end_is_last_wanted_day_plus_one(monkeypatch):
    import yfinance as yf

    from anachron.sources.yahoo import fetch_window_prices

    seen = []

    def fake(tickers, **kwargs):
        seen.append(kwargs)
        idx = pd.DatetimeIndex(["2024-01-31"], name="Date")
        return _wide(idx, tickers, [[1.0] * 6 * len(tickers)])

    monkeypatch.setattr(yf, "download", fake)
    spells = pd.DataFrame({"ticker": ["AAA"], "start_date": pd.to_datetime(["2010-01-04"]), "end_date": pd.NaT})
    windows = [{"start": "2024-01-02", "end": "2024-01-31"}, {"start": "2023-06-01", "end": "2023-06-30"}]
    for margin, start, end in [(0, "2023-06-01", "2024-02-01"), (10, "2023-05-22", "2024-02-11")]:
        prices, manifest = fetch_window_prices(spells, windows, margin_days=margin)
        assert (seen[-1]["start"], seen[-1]["end"]) == (start, end)
        assert manifest["sources"][0]["end_exclusive"] == end
    assert prices["date"].dt.strftime("%Y-%m-%d").tolist() == ["2024-01-31"]  # the last day is read
    with pytest.raises(ValueError):
        fetch_window_prices(spells, windows, margin_days=-1)
