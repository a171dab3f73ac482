"""Model endpoints as the workflow sees them: how they are named in messages, the limits that the
jobs sharing one endpoint share, and the probe that runs before any job.

An *endpoint* is the server behind an ``openai/...`` model, identified by the **name** of the
environment variable that holds its base URL (``ModelSpec.base_url_env``, e.g.
``ANACHRON_BASE_URL``): models configured with the same variable share the endpoint. Messages
name it by that variable and the URL's ``scheme://host:port`` only (:func:`endpoint_address`),
so credentials, paths and query strings never reach a terminal or a log. ``local/`` and
``mock/`` models have no endpoint.

Shared limits (config key ``endpoints``; docs/running.md#endpoints): for each listed endpoint a
``concurrency`` (calls in flight over every job at once) and an optional ``requests_per_minute``,
shared call by call between the running jobs through lock files
(:class:`anachron.llm.slots.EndpointGate`); Snakemake also admits at most ``concurrency`` jobs of
one endpoint at a time (the global resource :func:`resource_name`, one unit per job).
"""

from __future__ import annotations

import dataclasses
import os
import re
import time
from typing import Any, Callable, Iterable, Mapping
from urllib.parse import urlsplit

from anachron.errors import EndpointError
from anachron.llm.types import ModelSpec

#: How to skip the probe, quoted in its error.
SKIP_PROBE_HINT = "to skip this check (e.g. for an offline dry run) pass --config probe_endpoints=False"


def endpoint_address(url: str) -> str:
    """``scheme://host:port`` of a base URL: no user name, password, path or query.

    The port is the URL's own or the scheme's default (80 / 443); ``"<not a URL>"`` when the
    value has no scheme or host. Example: ``https://user:pw@api.example.org/v1?key=x`` gives
    ``https://api.example.org:443``.
    """
    try:
        parts = urlsplit(url.strip())
        host, port = parts.hostname, parts.port
    except ValueError:
        return "<not a URL>"
    if not parts.scheme or not host:
        return "<not a URL>"
    if port is None:
        port = {"http": 80, "https": 443}.get(parts.scheme.lower())
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme.lower()}://{host}" + (f":{port}" if port is not None else "")


def endpoint_env(spec: ModelSpec) -> str | None:
    """The endpoint of ``spec``: the name of its base-URL variable for an ``openai/`` model, else None."""
    return spec.base_url_env if spec.provider == "openai" and spec.base_url_env else None


def endpoint_label(spec: ModelSpec, environ: Mapping[str, str] | None = None) -> str | None:
    """``"ENV (scheme://host:port)"`` for an ``openai/`` model (``"ENV (unset)"`` when the variable is
    not set), None for a model without an endpoint. Never contains credentials."""
    env = endpoint_env(spec)
    if env is None:
        return None
    url = (os.environ if environ is None else environ).get(env, "").strip()
    return f"{env} ({endpoint_address(url) if url else 'unset'})"


# --------------------------------------------------------------------------- shared limits


@dataclasses.dataclass(frozen=True)
class EndpointLimits:
    """The limits of one endpoint over every job using it (one entry of the config's ``endpoints``).

    Attributes:
        concurrency: calls in flight at once, all jobs together (>= 1).
        requests_per_minute: requests started per minute, all jobs together; None: no limit.
    """

    concurrency: int
    requests_per_minute: float | None = None


def endpoint_limits(block: Mapping[str, Mapping[str, Any]] | None) -> dict[str, EndpointLimits]:
    """The config's ``endpoints`` mapping (base-URL variable name -> ``{concurrency, requests_per_minute}``)
    as :class:`EndpointLimits` by variable name; ``None`` or ``{}`` gives ``{}``."""
    return {
        env: EndpointLimits(int(entry["concurrency"]), entry.get("requests_per_minute"))
        for env, entry in (block or {}).items()
    }


def resource_name(env: str) -> str:
    """The Snakemake global resource of the endpoint named by ``env``: ``endpoint_<env lowercased>``
    (characters other than letters, digits and ``_`` become ``_``)."""
    return "endpoint_" + re.sub(r"[^a-z0-9_]", "_", env.lower())


def job_endpoints(specs: Iterable[ModelSpec], limits: Mapping[str, EndpointLimits]) -> set[str]:
    """The limited endpoints (base-URL variable names in ``limits``) that a job's models call."""
    return {env for env in (endpoint_env(spec) for spec in specs) if env is not None and env in limits}


# --------------------------------------------------------------------------- the probe


@dataclasses.dataclass(frozen=True)
class ProbeOutcome:
    """What the probe of one endpoint found.

    Attributes:
        env: name of the base-URL variable.
        address: ``scheme://host:port`` of the base URL.
        models: keys of the models using the endpoint (with this key variable).
        api_key_env: name of the key variable sent.
        status: HTTP status of the last answer; None when nothing answered.
        problem: why the endpoint cannot be used (one line), or None when it answered.
    """

    env: str
    address: str
    models: tuple[str, ...]
    api_key_env: str | None
    status: int | None
    problem: str | None

    @property
    def ok(self) -> bool:
        """True when the endpoint answered acceptably (2xx, or 404 from a server without ``/models``)."""
        return self.problem is None


def _get_models(session: Any, url: str, key: str, timeout_s: float) -> Any:
    return session.get(url.rstrip("/") + "/models", headers={"Authorization": f"Bearer {key}"}, timeout=timeout_s)


def probe_endpoints(
    specs: Iterable[ModelSpec],
    *,
    session: Any = None,
    environ: Mapping[str, str] | None = None,
    timeout_s: float = 5.0,
    retries: int = 1,
    pause_s: float = 1.0,
    sleep: Callable[[float], None] = time.sleep,
) -> list[ProbeOutcome]:
    """``GET {base_url}/models`` once per distinct endpoint of the ``openai/`` models in ``specs``.

    Models are grouped by (base-URL variable, key variable); each group sends its key as
    ``Authorization: Bearer``. A connection error, a timeout or a 5xx answer is tried again
    ``retries`` times, ``pause_s`` seconds apart. Classification: 2xx fine; 404 fine (servers
    without a ``/models`` route); 401 / 403 the key was rejected; 5xx or no answer the endpoint is
    down; any other status fine (the server answered). Other models are ignored.

    Args:
        specs: the models the run uses.
        session: what sends the request: anything with ``get(url, headers=, timeout=)`` returning
            an object with ``status_code`` (a ``requests.Session`` by default, closed afterwards);
            tests inject a fake.
        environ: where the variables are read (default ``os.environ``).
        timeout_s: seconds per request.

    Returns:
        One :class:`ProbeOutcome` per endpoint, in the order first met. Never raises for a failed
        request (see :func:`check_endpoints`).
    """
    env_map = os.environ if environ is None else environ
    groups: dict[tuple[str, str | None], list[str]] = {}
    for spec in specs:
        env = endpoint_env(spec)
        if env is not None:
            groups.setdefault((env, spec.api_key_env), []).append(spec.name)
    if not groups:
        return []
    own = session is None
    if own:
        import requests

        session = requests.Session()
    try:
        return [
            _probe_one(session, env, key_env, tuple(dict.fromkeys(models)), env_map, timeout_s, retries, pause_s, sleep)
            for (env, key_env), models in groups.items()
        ]
    finally:
        if own:
            session.close()


def _probe_one(
    session: Any, env: str, key_env: str | None, models: tuple[str, ...], environ: Mapping[str, str],
    timeout_s: float, retries: int, pause_s: float, sleep: Callable[[float], None],
) -> ProbeOutcome:
    url = environ.get(env, "").strip()
    address = endpoint_address(url) if url else "unset"
    key = environ.get(key_env, "") if key_env else ""

    def outcome(status: int | None, problem: str | None) -> ProbeOutcome:
        return ProbeOutcome(env, address, models, key_env, status, problem)

    if not url:
        return outcome(None, f"environment variable {env} is not set")
    status: int | None = None
    reason = ""
    for attempt in range(retries + 1):
        if attempt:
            sleep(pause_s)
        try:
            response = _get_models(session, url, key, timeout_s)
        except Exception as exc:  # requests' ConnectionError, Timeout, ...: the endpoint did not answer
            status, reason = None, f"no answer ({type(exc).__name__})"
            continue
        status = int(response.status_code)
        if status in (401, 403):
            return outcome(status, f"the endpoint rejected the API key in {key_env} (HTTP {status})")
        if status >= 500:
            reason = f"HTTP {status}"
            continue
        return outcome(status, None)
    return outcome(status, f"not answering after {retries + 1} tries: {reason}")


def check_endpoints(specs: Iterable[ModelSpec], **probe_kwargs: Any) -> list[str]:
    """Probe the endpoints of ``specs`` (:func:`probe_endpoints`) and fail on the first sign of trouble.

    Returns:
        One line per endpoint that answered, for the log (``"ENV (address): HTTP 200 (models a, b)"``;
        a 404 says the server has no ``/models`` route).

    Raises:
        EndpointError: one line per endpoint that is down, unset or rejected its key, naming its
            models, variable and address, and how to skip the probe.
    """
    outcomes = probe_endpoints(specs, **probe_kwargs)
    bad = [o for o in outcomes if not o.ok]
    if bad:
        lines = [
            f"endpoint {o.env} ({o.address}) of model(s) {', '.join(o.models)}: {o.problem}" for o in bad
        ]
        raise EndpointError(
            "model endpoint check failed before any job started:\n  " + "\n  ".join(lines)
            + f"\nStart the server or correct the environment variable; {SKIP_PROBE_HINT}."
        )
    notes = []
    for o in outcomes:
        extra = " (no /models route; reachable)" if o.status == 404 else ""
        notes.append(f"endpoint {o.env} ({o.address}): HTTP {o.status}{extra} (model(s) {', '.join(o.models)})")
    return notes
