"""Fixtures of the endpoint tests (probe, limits, failures): hand-written forecast instances and a
URL nothing listens on. The live endpoint of these tests is :class:`anachron.llm.testserver.TestServer`.
"""

from __future__ import annotations

import json
import socket

import pandas as pd

from anachron.tables import INSTANCE_COLUMNS


def forecast_instances(n: int, split: str = "eval") -> pd.DataFrame:
    """``n`` made-up forecast instances (the columns of a task dataset), ids ``fc-000``, ``fc-001``, ..."""
    rows = [
        {
            "instance_id": f"fc-{i:03d}", "task": "forecast", "split": split, "cutoff_date": "2023-03-01",
            "inputs": json.dumps({"question": f"Will the made-up index {i} close above 100 on 2023-06-30?",
                                  "resolution_criteria": "Resolves Yes if the index closes above 100.",
                                  "resolution_date": "2023-06-30"}),
            "label": json.dumps({"resolved_to": i % 2, "resolution_date": "2023-06-30"}),
            "provenance": json.dumps({"made_up": True}),
        }
        for i in range(n)
    ]
    return pd.DataFrame(rows, columns=INSTANCE_COLUMNS)


def closed_port_url() -> str:
    """A base URL on 127.0.0.1 whose port nothing listens on (connections are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
