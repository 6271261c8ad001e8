"""The hold-out answer-pairs sets (bench/data/pairs_holdout*.jsonl), each held to the
checks of tests/pairs_checks.py: the file parses, its rows are well-formed pairs the batch
verifier accepts, every evidence excerpt is verbatim from its source (a paragraph of a
Rust book chapter, of a Python reference topic, a ClapNQ passage or a COVID-QA paper), a
later set shares no source with the earlier ones, and the file is what its builder writes.

No verifier figures are asserted here: bench/verifier_eval.py measures them."""

from __future__ import annotations

import json

import pytest

from tests.pairs_checks import (
    SETS,
    HoldoutSet,
    check_faithful_claims,
    check_no_earlier_source,
    check_pairs,
    check_rebuilt,
    check_verbatim,
    rows_of,
)


def _ids(s: HoldoutSet) -> str:
    return s.name


@pytest.mark.parametrize("s", SETS, ids=_ids)
def test_rows_are_well_formed_pairs(s: HoldoutSet) -> None:
    check_pairs(s, rows_of(s))


@pytest.mark.parametrize("s", SETS, ids=_ids)
def test_every_row_is_accepted_by_the_batch_reader(s: HoldoutSet) -> None:
    from cli.verify_cmd import verify_batch_line

    for r in rows_of(s):
        verify_batch_line(json.dumps(r, ensure_ascii=False), r["mode"])


@pytest.mark.parametrize(
    ("s", "corpus"),
    [pytest.param(s, c, id=f"{s.name}-{c}") for s in SETS for c in s.corpora],
)
def test_evidence_is_verbatim(s: HoldoutSet, corpus: str) -> None:
    check_verbatim(rows_of(s), corpus)


@pytest.mark.parametrize("s", [s for s in SETS if s.faithful_claims], ids=_ids)
def test_faithful_claims_are_in_the_evidence_they_cite(s: HoldoutSet) -> None:
    check_faithful_claims(rows_of(s))


@pytest.mark.parametrize(
    "s", [s for s in SETS if s.earlier_required or s.earlier_optional], ids=_ids
)
def test_sources_are_not_those_of_the_earlier_sets(s: HoldoutSet) -> None:
    check_no_earlier_source(s, rows_of(s))


@pytest.mark.parametrize("s", SETS, ids=_ids)
def test_the_file_is_what_the_builder_writes(s: HoldoutSet) -> None:
    check_rebuilt(s, rows_of(s))
