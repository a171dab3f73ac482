"""NHL free-agent signings from Spotrac free-agent tables.

Source name ``nhl``. Two ways in, one output (the ``signings`` table of
:data:`anachron.sources.signings.SIGNING_COLUMNS`, ``league = "NHL"``):

* **live** (default): Spotrac's free-agent table for each year
  (``https://www.spotrac.com/nhl/free-agents/_/year/{year}/``), an HTML table with a
  player column and (by header name) position, type (UFA/RFA), from/previous team,
  to/signing team, years, total value and AAV, and sometimes a signing date;
* **snapshot**: ``nhl/spotrac_signed_free_agents_*.csv`` with columns ``player_name``
  (or ``player``), ``signing_team, previous_team, contract_value, aav, contract_years,
  spotrac_year`` and optionally ``position, ufa_rfa_type``.

Dates: the tables carry no signing date, so ``signing_date`` is the league's
free-agency opening day, July 1 of the year (``date_rule`` = "free-agency opening
fallback"), as the TEMPO paper does (App. D). Free agents cannot sign with a new club
before that day, so the fallback is never later than the real signing; in 2020–2022 the
market opened later (the fallback is then conservative: a cutoff before the real one).
Pass ``fa_opening_dates={year: "YYYY-MM-DD"}`` to use other days.

AAV checks (:func:`~anachron.sources.spotrac.aav.check_aav`): a listed AAV under $100,000 is not a salary (the snapshot
has values such as 206 or 705 where the real AAV was a round $2,000,000 or $700,000);
a listed AAV more than 5% away from value / years is inconsistent. With
``implausible_aav="recompute"`` (default) a garbled value under $100,000 is replaced by
value / years — AAV's definition — and counted as ``aav_recomputed``; with ``"drop"``
the row is dropped as ``implausible_aav``. Inconsistent values (both plausible) and rows
without a positive value or length are always dropped, with their reason.

Modules:

* :mod:`~anachron.sources.spotrac.reader`: the reader and :func:`fetch`;
* :mod:`~anachron.sources.spotrac.config`: the JSON Schema of the config block;
* :mod:`~anachron.sources.spotrac.layout`: the page URL, the snapshot files and their columns;
* :mod:`~anachron.sources.spotrac.skips`: skip and repair reasons;
* :mod:`~anachron.sources.spotrac.aav`: a signing's AAV from the listed AAV, value and years;
* :mod:`~anachron.sources.spotrac.contracts`: free-agent rows checked and de-duplicated into signings, dated by the opening day;
* :mod:`~anachron.sources.spotrac.pages`: live free-agent pages (HTML tables) read into rows;
* :mod:`~anachron.sources.spotrac.free_agent_csv`: the snapshot's free-agent CSV files read into rows.
"""

from __future__ import annotations

from anachron.sources.spotrac.config import CONFIG_SCHEMA
from anachron.sources.spotrac.reader import NHLSigningsReader, fetch

__all__ = ["CONFIG_SCHEMA", "NHLSigningsReader", "fetch"]
