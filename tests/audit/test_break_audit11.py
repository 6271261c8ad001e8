"""Break the audit, then mend it (session 11), on SQLite and PostgreSQL, on a real ledger
built by running queries (:func:`tests.audit.conftest.build_audited`).

- A bundle's consistency proof whose size is a JSON string, a float or ``true``, or whose
  roots or hashes are upper-case hex, and an inclusion proof written in upper-case hex:
  ``int()`` and ``bytes.fromhex`` read them as the numbers and hashes they resemble, so
  ``verify-bundle`` said "everything held" of a bundle in a form export never writes.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from aborist.audit.bundle import export_run, verify_bundle
from tests.audit.conftest import Audited


def _with_consistency(audited: Audited) -> dict[str, Any]:
    bundle = json.loads(json.dumps(export_run(audited.built.ledger, audited.built.quote,
                                              extra_sizes=[3])))  # fmt: skip
    assert verify_bundle(bundle).ok
    [proof] = [p for p in bundle["consistency_proofs"] if p["size1"] == 3]
    assert proof["proof"], "a proof with hashes to rewrite"
    return bundle


def _spaced(hex_: str) -> str:
    return " ".join(hex_[i : i + 2] for i in range(0, len(hex_), 2))  # fromhex reads it


def _proof_of_3(bundle: dict[str, Any]) -> dict[str, Any]:
    return next(p for p in bundle["consistency_proofs"] if p["size1"] == 3)


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda p: p.update(size1="3"), id="size-as-string"),
        pytest.param(lambda p: p.update(size1=3.0), id="size-as-float"),
        pytest.param(lambda p: p.update(size2=str(p["size2"])), id="bundle-size-as-string"),
        pytest.param(lambda p: p.update(root1=p["root1"].upper()), id="root-upper-case"),
        pytest.param(lambda p: p.update(root2=_spaced(p["root2"])), id="root-with-spaces"),
        pytest.param(lambda p: p.update(proof=[h.upper() for h in p["proof"]]), id="hash-upper"),
    ],
)
def test_a_consistency_proof_in_another_form_is_a_failure(audited: Audited, edit: Any) -> None:
    bundle = _with_consistency(audited)
    edit(_proof_of_3(bundle))
    report = verify_bundle(bundle)
    assert not report.ok  # before: int() and bytes.fromhex read it, and everything held
    assert report.first is not None and report.first.kind == "checkpoint"
    assert report.checks["checkpoint"] == "diverged"


def test_a_consistency_proof_size_true_is_not_size_1(audited: Audited) -> None:
    lg = audited.built.ledger
    bundle = json.loads(json.dumps(export_run(lg, audited.built.quote, extra_sizes=[1])))
    assert verify_bundle(bundle).ok
    next(p for p in bundle["consistency_proofs"] if p["size1"] == 1)["size1"] = True
    report = verify_bundle(bundle)
    assert not report.ok and report.first is not None and report.first.kind == "checkpoint"


def test_an_inclusion_proof_in_upper_case_hex_is_a_failure(audited: Audited) -> None:
    bundle = json.loads(json.dumps(export_run(audited.built.ledger, audited.built.quote)))
    edited = copy.deepcopy(bundle)
    for p in edited["inclusion_proofs"]:
        p["proof"] = [h.upper() for h in p["proof"]]
    assert any(p["proof"] for p in edited["inclusion_proofs"])
    report = verify_bundle(edited)
    assert not report.ok and report.first is not None and report.first.kind == "inclusion"
    assert verify_bundle(bundle).ok  # the honest one still holds
