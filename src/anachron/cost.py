"""Token prices and the cost of LLM calls (config key ``prices``; docs/results.md#cost).

A price is a pair ``(input, output)`` in US dollars per million tokens (:data:`TOKENS_PER_PRICE`):
the cost of one call is ``(prompt_tokens * input + completion_tokens * output) / 1e6`` USD. The
config states prices per model key (``prices.<model>.usd_per_million_input_tokens`` and
``..._output_tokens``); :func:`model_prices` adds the free providers (``local/`` and ``mock/``
models run on this machine or not at all, so nothing is billed) and leaves every other model out:
its cost is unknown, stored as NULL, never guessed as 0.

The database stores the cost of every call, cache hits included (what the call's tokens cost when
they were first bought); what a run *spent* is the sum over the calls that were not cache hits.
"""

from __future__ import annotations

from typing import Any, Mapping

#: Tokens a price is quoted for (USD per million tokens).
TOKENS_PER_PRICE = 1_000_000
#: Providers whose calls cost nothing unless ``prices`` says otherwise (in-process and mock models).
FREE_PROVIDERS = ("local", "mock")

#: ``(USD per million input tokens, USD per million output tokens)``.
Price = tuple[float, float]


def model_prices(config: Mapping[str, Any]) -> dict[str, Price]:
    """The price of every model of a validated config whose price is known, by model key.

    A ``prices`` entry wins; a model without one costs ``(0.0, 0.0)`` when its provider is in
    :data:`FREE_PROVIDERS` and is left out otherwise (unknown cost).
    """
    out: dict[str, Price] = {}
    for name, block in config["models"].items():
        given = config.get("prices", {}).get(name)
        if given is not None:
            out[name] = (float(given["usd_per_million_input_tokens"]), float(given["usd_per_million_output_tokens"]))
        elif str(block["model"]).split("/", 1)[0] in FREE_PROVIDERS:
            out[name] = (0.0, 0.0)
    return out


def call_cost(prompt_tokens: float | None, completion_tokens: float | None, price: Price | None) -> float | None:
    """USD of ``prompt_tokens`` and ``completion_tokens`` at ``price``; None when the price or a
    token count is unknown (None or NaN)."""
    if price is None or prompt_tokens is None or completion_tokens is None:
        return None
    if prompt_tokens != prompt_tokens or completion_tokens != completion_tokens:  # NaN
        return None
    return (prompt_tokens * price[0] + completion_tokens * price[1]) / TOKENS_PER_PRICE
