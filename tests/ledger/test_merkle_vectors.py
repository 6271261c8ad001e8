"""ledger.tlog.merkle against the transparency-dev/merkle proof vectors (RFC 6962 / RFC 9162).

Every JSON file under ``../shared/data/merkle-vectors/{inclusion,consistency}`` is one
case: a happy path (``wantErr: false``) must verify and every deliberately broken probe
(``wantErr: true``: shifted index or size, flipped bit, truncated or padded proof, wrong or
empty root, ...) must be rejected. Hashes are base64; an absent proof is ``null``.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from ledger.tlog.merkle import verify_consistency, verify_inclusion

VECTORS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "merkle-vectors"

if not (VECTORS / "inclusion").is_dir() or not (VECTORS / "consistency").is_dir():
    pytest.skip(
        f"Merkle vectors not found at {VECTORS} (transparency-dev/merkle testdata)",
        allow_module_level=True,
    )


def _cases(kind: str) -> list[Any]:
    """One pytest param per vector file, with the file's path (under ``kind``) as its id."""
    return [
        pytest.param(json.loads(path.read_text()), id=path.relative_to(VECTORS).as_posix())
        for path in sorted((VECTORS / kind).rglob("*.json"))
    ]


INCLUSION = _cases("inclusion")
CONSISTENCY = _cases("consistency")


def _b64(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


def _proof(items: list[str] | None) -> list[bytes]:
    return [_b64(item) for item in items or []]


@pytest.mark.parametrize("vector", INCLUSION)
def test_inclusion_vector(vector: dict[str, Any]) -> None:
    verified = verify_inclusion(
        _b64(vector["leafHash"]),
        vector["leafIdx"],
        vector["treeSize"],
        _proof(vector["proof"]),
        _b64(vector["root"]),
    )
    assert verified is (not vector["wantErr"]), vector["desc"]


@pytest.mark.parametrize("vector", CONSISTENCY)
def test_consistency_vector(vector: dict[str, Any]) -> None:
    verified = verify_consistency(
        vector["size1"],
        vector["size2"],
        _proof(vector["proof"]),
        _b64(vector["root1"]),
        _b64(vector["root2"]),
    )
    assert verified is (not vector["wantErr"]), vector["desc"]


@pytest.mark.parametrize(
    ("kind", "cases"), [("inclusion", INCLUSION), ("consistency", CONSISTENCY)]
)
def test_vector_set_has_both_outcomes(kind: str, cases: list[Any]) -> None:
    """Guards against a glob that silently finds nothing, or only one kind of case."""
    outcomes = [case.values[0]["wantErr"] for case in cases]
    assert outcomes.count(False) >= 5, f"{kind}: too few happy paths"
    assert outcomes.count(True) >= 50, f"{kind}: too few broken probes"
