"""Stock: the calibration planter (claims of known truth on stock instances)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd

from anachron.verify.calibration.market import MarketFamilies
from anachron.verify.calibration.planting import Plant, PlantInstance, join_fact, long_date, short_name
from anachron.words import MONTH_NAMES


class StockPlanter(MarketFamilies):
    """Stock calibration claims: closing prices and moves on other days (post- or pre-cutoff,
    including the last close before the cutoff), EDGAR figures and index changes; outcomes:
    the realised return over the window and the close at its end."""

    def __init__(self, *a: Any, **k: Any):
        super().__init__(*a, **k)
        p = self.data["prices"][["ticker", "date", "close"]].copy()
        p["date"] = pd.to_datetime(p["date"]).dt.date
        self._px = {str(t): g.sort_values("date").reset_index(drop=True) for t, g in p.groupby("ticker")}

    def families(self, kind):
        """Outcome: return and end price; otherwise prices (twice as often), index changes, EDGAR."""
        if kind == "outcome":
            return [self.outcome_return, self.outcome_price]
        fams = [self.price, self.price, self.index_change]
        if self._edgar is not None:
            fams.append(self.edgar)
        return fams

    def _company(self, inst: PlantInstance) -> tuple[str, str]:
        comps = [c for c in inst.inputs["companies"] if c["ticker"] in self._px]
        c = self.pick(comps)
        return c["ticker"], c["name"]

    def _who(self, ticker: str, name: str) -> tuple[str, str]:
        form = self.pick(["name", "short", "ticker"])
        return form, {"name": name, "short": short_name(name), "ticker": ticker}[form]

    def price(self, inst: PlantInstance, kind: str) -> Plant | None:
        """A close (or a daily move, a month's average) of one of the instance's companies."""
        ticker, name = self._company(inst)
        px = self._px[ticker]
        c = inst.cutoff
        if kind == "post_cutoff":
            pool = px[px["date"] > c]
        else:
            pool = px[px["date"] <= c]
        if len(pool) < 2:
            return None
        cutoff_day = kind == "pre_cutoff" and self.rng.random() < 0.3
        i = len(pool) - 1 if cutoff_day else int(self.rng.integers(1, len(pool)))
        row = pool.iloc[i]
        d, close = row["date"], float(row["close"])
        j = px.index[px["date"] == d][0]
        prev = float(px.loc[j - 1, "close"]) if j > 0 else None
        form, who = self._who(ticker, name)
        if cutoff_day:
            # tricky clean: the last close on or before the cutoff, dated by the cutoff day itself
            body = f"As of {long_date(c)}, {who}'s most recent closing price was ${close:.2f}"
            declared = self.pick([c.isoformat(), None])
            return Plant(join_fact("", body, ""), declared, f"price:cutoff_day_{form}:in_body:declared={'honest' if declared else 'missing'}", d)
        wording = self.pick(["close_active", "close_passive", "move_pct", "month_avg"])
        if wording == "move_pct" and prev:
            chg = 100.0 * (close / prev - 1.0)
            verb = "rose" if chg >= 0 else "fell"
            body = f"{who} shares {verb} {abs(chg):.1f}%"
            return self.finish("price", f"{wording}_{form}", body, d, inst, kind, allowed=("on_day", "iso", "on_day"))
        if wording == "month_avg":
            start = dt.date(d.year, d.month, 1)
            if kind == "post_cutoff" and start <= c:
                wording = "close_active"
            else:
                month = px[(px["date"] >= start) & (px["date"] <= d)]
                avg = float(month["close"].mean())
                body = f"{who} stock traded around ${avg:.0f} in {MONTH_NAMES[d.month - 1]} {d.year}"
                return self.finish("price", f"{wording}_{form}", body, d, inst, kind, date_in_body=True)
        if wording == "close_passive":
            body = f"Shares of {who} were priced at ${close:.2f} at the close"
        else:
            body = f"{who} closed at ${close:.2f}"
        return self.finish("price", f"{wording}_{form}", body, d, inst, kind)

    def outcome_return(self, inst: PlantInstance, kind: str) -> Plant | None:
        """The realised return of one company over the window (A4)."""
        ticker, name = self._company(inst)
        r = float(inst.label["returns"][ticker])
        first, last = dt.date.fromisoformat(inst.label["first_day"]), dt.date.fromisoformat(inst.label["last_day"])
        form, who = self._who(ticker, name)
        wording = self.pick(["between_days", "signed_window", "over_months", "lost_gained"])
        if wording == "between_days":
            verb = "rose" if r >= 0 else "fell"
            body = f"{who} {verb} {abs(r) * 100:.1f}% between {long_date(first)} and {long_date(last)}"
        elif wording == "signed_window":
            body = f"{who} returned {r * 100:+.1f}% over the window"
        elif wording == "over_months":
            verb = "gained" if r >= 0 else "lost"
            body = f"Over the six months to {MONTH_NAMES[last.month - 1]} {last.year}, {who} stock {verb} about {abs(r) * 100:.0f}%"
        else:
            verb = "increase" if r >= 0 else "decline"
            body = f"A {abs(r) * 100:.1f}% {verb} was recorded for {who} from {first.isoformat()} to {last.isoformat()}"
        return self.finish("return", f"{wording}_{form}", body, last, inst, kind, date_in_body=True)

    def outcome_price(self, inst: PlantInstance, kind: str) -> Plant | None:
        """One company's close on the window's last day (A4)."""
        ticker, name = self._company(inst)
        last = dt.date.fromisoformat(inst.label["last_day"])
        px = self._px[ticker]
        hit = px[px["date"] == last]
        if hit.empty:
            return None
        close = float(hit["close"].iloc[0])
        form, who = self._who(ticker, name)
        wording = self.pick(["end_close", "ended_window", "had_dropped"])
        if wording == "end_close":
            body = f"{who} closed at ${close:.2f}"
            return self.finish("end_price", f"{wording}_{form}", body, last, inst, kind, allowed=("on_day", "iso", "none"))
        if wording == "ended_window":
            body = f"{who} ended the period at ${close:.2f} a share"
            return self.finish("end_price", f"{wording}_{form}", body, last, inst, kind, date_in_body=True)
        body = f"By {long_date(last)}, {who} stock was trading at ${close:.2f}"
        return self.finish("end_price", f"{wording}_{form}", body, last, inst, kind, date_in_body=True)
