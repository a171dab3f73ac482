"""What an entity-neutered instance is, and the name rules every task's anonymiser shares.

The entity-neutered probe (docs/metrics.md#probes; entity anonymisation after Glasserman & Lin,
arXiv 2309.17322, §3, and "entity neutering", SSRN 5182756) asks a model the same question with the
instance's entities replaced by neutral names ("Company A", "the player", "Petitioner"). Each task
owns its anonymiser (:meth:`anachron.tasks.base.Task.neuter`), which returns a :class:`Neutering`:
the new inputs (and label, where the label names the entities), the *forms* by which an answer
would still name the real entity, and the neutral names put in their place. The generic probe code
(:mod:`anachron.tasks.probes`) checks that no form is left in the neutered prompt and reads
re-identification from the forms (:func:`reidentifies`).

A form is matched case-sensitively as a whole word (:func:`anachron.names.has_symbol`), after the
neutral names are removed from the text ("Company A" must not count as ticker "A"). A name that is
also a common word ("ALL", "ON", "IT"; a surname such as "Will") is not a form: the anonymiser still
replaces it in the structured fields, but an answer using the word does not count as naming the
entity (:func:`distinctive`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from anachron.names import MIN_SURNAME_CHARS, has_symbol
from anachron.words import IRREGULAR_PAST, MONTH_WORDS, QUESTION_STOP_WORDS, STOP_WORDS, WEEKDAY_NAMES

#: Words an answer writes for what they mean, not as a name: the project's function words (claims
#: and questions), irregular past tenses, months and weekdays ("ALL", "ON", "Will", "May", "Lost").
COMMON_WORDS = STOP_WORDS | QUESTION_STOP_WORDS | IRREGULAR_PAST | frozenset(MONTH_WORDS) | frozenset(WEEKDAY_NAMES)


class ProbeSkip(Exception):
    """An instance a probe cannot be built for; ``reason`` is the recorded reason code
    (``no_anonymiser``, ``no_named_entity``, ``names_are_common_words``, ``name_left_in_prompt``,
    ``shift_before_data``, ``prompt_differs_beyond_date``), ``detail`` says what was found."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason, self.detail = reason, detail


@dataclass(frozen=True)
class Neutering:
    """An instance's anonymisation (one task's :meth:`~anachron.tasks.base.Task.neuter`).

    Attributes:
        inputs: the neutered ``inputs`` (every key kept; entity names replaced).
        label: the neutered ``label`` where the label names the entities (stock: the ranking of the
            neutral tickers), else None (the label stays as it is).
        forms: the words by which a text names the real entities (:func:`reidentifies`), each
            distinctive (:func:`distinctive`); never empty.
        placeholders: the neutral names put in their place.
    """

    inputs: Mapping[str, Any]
    label: Mapping[str, Any] | None
    forms: tuple[str, ...]
    placeholders: tuple[str, ...] = field(default_factory=tuple)


def distinctive(word: str) -> bool:
    """Whether ``word`` can identify an entity on its own: 2+ characters and, lower-cased, none of
    :data:`COMMON_WORDS` ("ALL", "IT" and "ON" are words first)."""
    w = str(word or "").strip()
    return len(w) >= 2 and w.lower() not in COMMON_WORDS


def person_forms(name: str) -> list[str]:
    """A person's forms: the full name, and the surname alone when it has
    :data:`~anachron.names.MIN_SURNAME_CHARS`+ letters and is :func:`distinctive`."""
    from anachron.names import surname

    name = str(name or "").strip()
    if not name:
        return []
    last = surname(name).strip(".,")
    forms = [name]
    if last != name and len(last) >= MIN_SURNAME_CHARS and distinctive(last):
        forms.append(last)
    return forms


def without(text: str, placeholders: Iterable[str]) -> str:
    """``text`` with every placeholder removed (longest first), so its letters match no form."""
    for p in sorted({p for p in placeholders if p}, key=len, reverse=True):
        text = text.replace(p, " ")
    return text


def reidentifies(text: str, forms: Iterable[str], placeholders: Iterable[str] = ()) -> list[str]:
    """The forms that ``text`` names (case-sensitive whole words, neutral names removed first).

    Args:
        text: an answer (or a prompt) to read.
        forms: the real entities' forms (:attr:`Neutering.forms`).
        placeholders: the neutral names (:attr:`Neutering.placeholders`).

    Returns:
        The forms found, in the order given; empty when the text names none.
    """
    plain = without(str(text or ""), placeholders)
    return [f for f in dict.fromkeys(forms) if f and has_symbol(plain, f)]


def replace_names(text: Any, mapping: Mapping[str, str]) -> Any:
    """``text`` with each name of ``mapping`` replaced by its neutral name, longest name first, as a
    case-sensitive whole word (no letter or digit on either side); a non-string is returned as is."""
    if not isinstance(text, str) or not text:
        return text
    for name in sorted((n for n in mapping if n), key=len, reverse=True):
        text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", lambda _m, n=name: mapping[n], text)
    return text
