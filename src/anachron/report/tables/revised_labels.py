"""Report table ``revised_labels``: Perf and OLR with and without the labels resolved on a revised
series (docs/tasks.md#labels-as-first-published, docs/results.md#rendered-tables).

ForecastBench resolves data-series questions on the series as revised later; an instance whose
label comes from a revisable series and was not re-resolved on the first-published value carries
``revised_value`` in its label. Per task x method x model x split with any such instance: the
share of them, and Perf and OLR over every scored instance and over the others only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from anachron.report.render import TableData, as_count, fmt_ci
from anachron.report.tables.base import ReportTable, block_starts

if TYPE_CHECKING:
    import duckdb

REVISED_SQL = """
WITH s AS (
  SELECT s.task, s.method, s.model, s.split, s.perf, s.olr,
         coalesce(TRY_CAST(json_extract_string(i.label, '$.revised_value') AS BOOLEAN), false) AS revised
  FROM instance_scores s JOIN instances i ON i.instance_id = s.instance_id AND i.task = s.task
  WHERE s.perf IS NOT NULL
)
SELECT task, method, model, split, count(*) AS n, count(*) FILTER (WHERE revised) AS n_revised,
       avg(perf) AS perf_all, avg(perf) FILTER (WHERE NOT revised) AS perf_first_release,
       avg(olr) AS olr_all, avg(olr) FILTER (WHERE NOT revised) AS olr_first_release
FROM s
GROUP BY task, method, model, split
HAVING count(*) FILTER (WHERE revised) > 0
ORDER BY task, method, model, split
"""


def _format(rows: pd.DataFrame, con: duckdb.DuckDBPyConnection) -> TableData:
    out = [
        {
            "Task": r.task,
            "Method": r.method,
            "Model": r.model,
            "Split": r.split,
            "n": as_count(r.n),
            "revised labels": f"{as_count(r.n_revised)} ({100 * r.n_revised / max(1, r.n):.0f}%)",
            "Perf, all": fmt_ci(r.perf_all),
            "Perf, first-published only": fmt_ci(r.perf_first_release),
            "OLR %, all": fmt_ci(r.olr_all, pct=True),
            "OLR %, first-published only": fmt_ci(r.olr_first_release, pct=True),
        }
        for r in rows.itertuples(index=False)
    ]
    return TableData(frame=pd.DataFrame(out), n_keys=4, blocks=block_starts(rows, ["task"]))


TABLE = ReportTable(
    name="revised_labels",
    title="Perf and OLR with and without labels of revised series",
    note=(
        "ForecastBench resolves data-series questions on the series as revised later, not as first published "
        "(forecastbench issue #283). An instance whose label comes from a revisable series (FRED, DBnomics) and "
        "was not re-resolved on first-published values (ALFRED; snapshot runs, no key) carries `revised_value`. "
        "Per task × method × model × split with any such instance: n the scored instances, the revised share, "
        "and the mean Perf and OLR over all of them and over the first-published ones only (no CI)."
    ),
    sql=REVISED_SQL,
    requires={"instance_scores": ("task", "method", "model", "split", "instance_id", "perf", "olr"),
              "instances": ("instance_id", "task", "label")},
    empty="no scored instance has a label of a revised series (`revised_value`): every label is as first published",
    format=_format,
)
