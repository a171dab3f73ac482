"""The config block ``tasks.legal`` (JSON Schema with defaults; docs/tasks.md#legal).

Read by :func:`anachron.config.load_schema` through the task registry (the package re-exports
:data:`CONFIG_SCHEMA`); :func:`resolve_config` fills in the defaults for the dataset builder.
"""

from __future__ import annotations

from typing import Any, Mapping

#: JSON Schema of the ``tasks.legal`` config block (draft 2020-12).
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "default": {},
    "description": "Legal task (docs/tasks.md#legal): probability that the petitioner prevails; SCOTUS (Oyez + SCDB) and federal appellate cases.",
    "properties": {
        "seed": {"description": "Seed for the eval draw and any train cap.", "type": "integer", "default": 42},
        "first_term": {"description": "First October Term of the SCOTUS pool.", "type": "integer", "minimum": 1946, "default": 2014},
        "last_term": {"description": "Last October Term of the SCOTUS pool.", "type": "integer", "minimum": 1946, "default": 2023},
        "eval_size": {
            "description": "SCOTUS eval cases, spread evenly over decision years (about 10 per year) and outcome-balanced within each year.",
            "type": "integer",
            "minimum": 0,
            "default": 100,
        },
        "train_size": {
            "description": "Most SCOTUS train cases (a seeded sample); null keeps every remaining case.",
            "type": ["integer", "null"],
            "minimum": 0,
            "default": None,
        },
        "facts_max_chars": {
            "description": "Characters of the Oyez facts kept in the prompt (cut at a sentence end); small local models have a 4k context.",
            "type": "integer",
            "minimum": 100,
            "default": 1500,
        },
        "question_max_chars": {
            "description": "Characters of the question presented kept in the prompt.",
            "type": "integer",
            "minimum": 50,
            "default": 600,
        },
        "oyez_fallback": {
            "description": "Label a case by the Oyez winning_party (matched to the parties) when SCDB has no row or no partyWinning code.",
            "type": "boolean",
            "default": True,
        },
        "drop_party_overlap": {
            "description": "Drop train cases that share a distinctive party name with an eval case (as the TEMPO paper removed 3).",
            "type": "boolean",
            "default": True,
        },
        "party_overlap_max_cases": {
            "description": (
                "A party counts as distinctive when it names at most this many cases of the whole pool; "
                "frequent litigants (the United States, states, agencies) identify nothing and are ignored."
            ),
            "type": "integer",
            "minimum": 1,
            "default": 3,
        },
        "include_appellate": {
            "description": "Add federal appellate cases with a disposition (CourtListener, live with a token) to train.",
            "type": "boolean",
            "default": True,
        },
        "appellate_max_train": {
            "description": "Most appellate train cases (seeded sample); null keeps all.",
            "type": ["integer", "null"],
            "minimum": 0,
            "default": None,
        },
        "appellate_facts": {
            "description": (
                "Facts shown for an appellate case: 'redacted_opening' = the opinion's opening with every sentence "
                "about the outcome removed; 'none' = no facts (the opinion text states the disposition)."
            ),
            "type": "string",
            "enum": ["redacted_opening", "none"],
            "default": "redacted_opening",
        },
        "control_terms": {
            "description": (
                "October Terms whose labelled cases decided after every configured model's knowledge cutoff form the "
                "control split (Oyez labels; SCDB 2024_01 ends with Term 2023). Empty = no control split."
            ),
            "type": "array",
            "items": {"type": "integer", "minimum": 1946},
            "default": [2024],
        },
    },
}

_DEFAULTS = {k: v["default"] for k, v in CONFIG_SCHEMA["properties"].items()}


def resolve_config(task_config: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``tasks.legal`` block with every missing key at its default (:data:`CONFIG_SCHEMA`).

    Raises:
        ValueError: an unknown key, or ``last_term`` before ``first_term``.
    """
    cfg = dict(_DEFAULTS)
    unknown = sorted(set(task_config or {}) - set(cfg))
    if unknown:
        raise ValueError(f"tasks.legal: unknown key(s) {unknown}; known: {sorted(cfg)}")
    cfg.update(task_config or {})
    if cfg["last_term"] < cfg["first_term"]:
        raise ValueError(f"tasks.legal: last_term {cfg['last_term']} is before first_term {cfg['first_term']}")
    return cfg
