"""The legal dataset's exclusions: the table's columns and its reason codes (docs/tasks.md#legal).

Every case the builder leaves out is one row of :data:`EXCLUSION_COLUMNS` with one of the
``REASON_*`` codes below in its ``reason`` column.
"""

from __future__ import annotations

#: Columns of the exclusions table.
EXCLUSION_COLUMNS = ["source", "term", "docket", "case_name", "reason", "detail"]

#: Exclusion reasons (the ``reason`` column).
REASON_UNCLEAR = "unclear_outcome"  # SCDB partyWinning = 2
REASON_NO_OUTCOME = "no_outcome"  # no SCDB code and no Oyez decision
REASON_DISMISSED = "dismissed"  # Oyez: the case was dismissed, nobody won
REASON_UNMATCHED = "winner_unmatched"  # Oyez winning_party matches neither party
REASON_CONFLICT = "conflicting_decisions"  # Oyez decisions for both sides
REASON_NO_DATE = "no_decision_date"
REASON_NO_TEXT = "no_facts_or_question"
REASON_DUPLICATE = "duplicate_docket"
REASON_DUPLICATE_CASE = "duplicate_scdb_case"
REASON_OUTSIDE = "outside_terms"
REASON_NAME_OVERLAP = "name_overlap_with_eval"
REASON_PARTY_OVERLAP = "party_overlap_with_eval"
REASON_CONTROL_EARLY = "control_not_after_knowledge_cutoff"
REASON_TRAIN_CAP = "train_sample_cap"
REASON_NO_DISPOSITION = "no_disposition"
REASON_MIXED = "mixed_disposition"
REASON_APPELLATE_DISMISSED = "appellate_dismissed"
REASON_NO_FILED_DATE = "no_filed_date"
