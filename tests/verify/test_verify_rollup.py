"""Roll-up into audit_mode, the serialized verdict, policy hash and version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aborist.errors import InputError
from aborist.verify.evidence import build_evidence
from aborist.verify.verify import (
    VERIFIER_VERSION,
    VerifierPolicy,
    policy_hash,
    verify_answer,
)
from ledger.canonical import canonical_json, sha256_hex

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
EV = build_evidence(["The museum opened in 1902 in Bergen. Its founder was Anna Holm."])


def test_strict_requires_every_unit_verbatim() -> None:
    v = verify_answer("The museum opened in 1902 in Bergen. Its founder was Anna Holm.", EV)
    assert (v.audit_mode, v.label, v.n_units, v.n_verified, v.n_verbatim) == (
        "STRICT",
        "VERIFIED",
        2,
        2,
        2,
    )


def test_partial_support_alone_is_hybrid_supported() -> None:
    v = verify_answer("The museum in Bergen opened in 1902.", EV)
    assert v.units[0].grade == "partial"
    assert (v.audit_mode, v.label, v.rung) == ("HYBRID", "SUPPORTED", 2)


def test_names_scattered_over_two_sentences_are_only_partial() -> None:
    # before 2.0 a bag of words over the whole object made this SUPPORTED
    v = verify_answer("Anna Holm founded it in Bergen in 1902, the museum.", EV)
    assert (v.audit_mode, v.label, v.rung) == ("HYBRID", "PARTIAL", 3)
    assert "ENTITY_ONLY" in {x.code for x in v.violations}


def test_nothing_verified_and_empty_answer_are_ungrounded() -> None:
    assert verify_answer("Oslo has many fjords.", EV).audit_mode == "UNGROUNDED"
    empty = verify_answer("  \n--\n", EV)
    assert (empty.audit_mode, empty.label, empty.n_units) == ("UNGROUNDED", "UNSUPPORTED", 0)
    assert [x.code for x in empty.violations] == ["NO_UNITS"]


def test_no_evidence_at_all() -> None:
    v = verify_answer("The museum opened in 1902.", [])
    assert v.audit_mode == "UNGROUNDED"
    lattice = verify_answer("The museum opened in 1902. [E1]", [], mode="claim-lattice")
    assert lattice.violations[0].code == "POINTER_UNRESOLVED"


def test_unknown_mode_is_an_input_error() -> None:
    with pytest.raises(InputError, match="mode must be one of"):
        verify_answer("x", EV, mode="vibes")


def test_to_dict_is_canonical_json_with_version_and_policy_hash() -> None:
    v = verify_answer("The museum opened in 1902 in Bergen. Oslo is big.", EV, question="When?")
    d = v.to_dict()
    raw = canonical_json(d)
    assert json.loads(raw) == d
    assert d["verifier_version"] == VERIFIER_VERSION
    assert d["verifier_policy_hash"] == policy_hash(VerifierPolicy())
    assert {"audit_mode", "label", "units", "violations", "n_verified", "n_units"} <= set(d)
    unit = d["units"][0]
    assert {"text", "strategy", "verified", "evidence_ids", "reasons"} <= set(unit)
    again = verify_answer("The museum opened in 1902 in Bergen. Oslo is big.", EV, question="When?")
    assert canonical_json(again.to_dict()) == raw


def test_policy_hash_is_sha256_of_canonical_policy_and_changes_with_thresholds() -> None:
    p = VerifierPolicy()
    assert policy_hash(p) == sha256_hex(canonical_json(p.model_dump(mode="json")))
    assert policy_hash(VerifierPolicy(paraphrase_min_coverage=0.9)) != policy_hash(p)
    v = verify_answer("x y z", EV, VerifierPolicy(max_pointers_per_claim=5))
    assert v.verifier_policy_hash == policy_hash(VerifierPolicy(max_pointers_per_claim=5))


def test_policy_rejects_unknown_fields_and_bad_values() -> None:
    with pytest.raises(ValueError):
        VerifierPolicy(paraphrase_min_coverage=1.5)
    with pytest.raises(ValueError):
        VerifierPolicy(bogus=1)  # type: ignore[call-arg]


@pytest.mark.skipif(not (DATA / "halueval").is_dir(), reason="../shared/data/halueval not present")
def test_halueval_regression() -> None:
    """HaluEval QA: right non-polar answers STRICT, hallucinations rarely STRICT (see bench)."""
    path = DATA / "halueval" / "qa_one-turn_data.json"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()][:200]
    right = halluc = vouched = polar = 0
    for row in rows:
        ev = build_evidence([row["knowledge"]])
        if row["right_answer"].strip().lower() in {"yes", "no"}:
            polar += 1
            assert verify_answer(row["right_answer"], ev).audit_mode == "UNGROUNDED"
            continue
        right += (
            verify_answer(row["right_answer"], ev, question=row["question"]).audit_mode == "STRICT"
        )
        wrong = verify_answer(row["hallucinated_answer"], ev, question=row["question"])
        halluc += wrong.audit_mode == "STRICT"
        vouched += wrong.rung <= 2
    # 2.0: a bare span whose sentence shares no term with the question is no longer STRICT
    # (comparison questions, multi-hop bridges), which costs right answers: bench/README.md
    assert right >= 0.88 * (len(rows) - polar)
    assert halluc <= 0.015 * len(rows)
    assert vouched <= 0.08 * len(rows)


@pytest.mark.skipif(not (DATA / "wice").is_dir(), reason="../shared/data/wice not present")
def test_wice_not_supported_claims_are_not_strict() -> None:
    for line in (DATA / "wice" / "claim_dev.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["label"] != "not_supported":
            continue
        ev = build_evidence([s for s in row["evidence"] if s.strip()])
        assert verify_answer(row["claim"], ev).audit_mode != "STRICT", row["claim"]
