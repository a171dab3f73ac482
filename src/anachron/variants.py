"""The probe kinds and how a probe run is named: the method column of a run ``<method>@<probe>``.

A building block (it imports nothing of the package): the planner (:mod:`anachron.plan`), the
method runner, the probe datasets (:mod:`anachron.tasks.probes`) and the reports read a run's
method name through :func:`split_variant`. docs/metrics.md#probes.
"""

from __future__ import annotations

#: The counterfactual probes (docs/metrics.md#probes): entity neutering and a moved "today's date".
PROBES = ("neutered", "date_shift")
#: Separates a method from its probe in a variant's name (``temporal_hint@neutered``).
PROBE_SEP = "@"


def variant_name(method: str, probe: str) -> str:
    """The method name of ``method``'s run under ``probe`` (``temporal_hint@neutered``)."""
    return f"{method}{PROBE_SEP}{probe}"


def split_variant(name: str) -> tuple[str, str | None]:
    """``(method, probe)`` of a run's method name; ``probe`` is None for a plain method.

    Raises:
        ValueError: the part after ``@`` is not one of :data:`PROBES`.
    """
    method, sep, probe = str(name).partition(PROBE_SEP)
    if not sep:
        return method, None
    if probe not in PROBES:
        raise ValueError(f"unknown probe {probe!r} in method {name!r} (known: {', '.join(PROBES)})")
    return method, probe
