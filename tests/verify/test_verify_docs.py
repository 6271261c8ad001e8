"""Every worked example in docs/verifier.md runs against the code (so the spec cannot drift)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aborist.verify.evidence import build_evidence
from aborist.verify.inspect import classify_span
from aborist.verify.policy import VerifierPolicy
from aborist.verify.verify import verify_answer

DOC = Path(__file__).resolve().parents[2] / "docs" / "verifier.md"
BLOCK = re.compile(r"```(example|inspect)\n(.*?)```", re.DOTALL)
EVIDENCE = re.compile(r"^evidence (E\d+)(?: \[(\w+)\])?: (.*)$")


def _blocks(kind: str) -> list[str]:
    return [body for k, body in BLOCK.findall(DOC.read_text(encoding="utf-8")) if k == kind]


def _evidence(lines: list[str]) -> list[dict[str, str]]:
    items: list[dict[str, str]] = []
    for line in lines:
        m = EVIDENCE.match(line)
        if m:
            assert m.group(1) == f"E{len(items) + 1}", "number evidence E1, E2, ... in order"
            items.append({"text": m.group(3), "source_role": m.group(2) or "primary"})
    return items


def test_the_doc_has_examples() -> None:
    assert len(_blocks("example")) >= 20
    assert len(_blocks("inspect")) >= 1


@pytest.mark.parametrize("body", _blocks("example"))
def test_example(body: str) -> None:
    lines = body.strip().splitlines()
    fields: dict[str, list[str]] = {}
    for line in lines:
        if not line.startswith("evidence "):
            key, _, value = line.partition(": ")
            fields.setdefault(key, []).append(value)
    # ``policy: field=value`` lines set policy fields (booleans as true/false)
    overrides = dict(item.split("=", 1) for item in fields.get("policy", []))
    verdict = verify_answer(
        "\n".join(fields["answer"]),
        build_evidence(_evidence(lines)),
        VerifierPolicy(**overrides),  # type: ignore[arg-type]
        question=fields.get("question", [None])[0],
        mode=fields.get("mode", ["quote"])[0],
    )
    got_units = [f"{u.strategy}/{u.grade}" for u in verdict.units]
    assert got_units == [u.strip() for u in fields["units"][0].split(",")]
    assert f"{verdict.audit_mode} {verdict.label}" == fields["expect"][0]
    codes = {v.code for v in verdict.violations}
    for wanted in fields.get("violations", [""])[0].split(","):
        if wanted.strip():
            assert wanted.strip() in codes


@pytest.mark.parametrize("body", _blocks("inspect"))
def test_inspect_examples(body: str) -> None:
    lines = body.strip().splitlines()
    evidence = build_evidence(_evidence(lines))
    pending: tuple[str, bool] | None = None
    checked = 0
    for line in lines:
        key, _, value = line.partition(": ")
        if key in {"quote", "span"}:
            pending = (value, key == "quote")
        elif key == "kind":
            assert pending is not None
            assert classify_span(pending[0], evidence, is_quote=pending[1])[0] == value, pending
            checked += 1
    assert checked >= 8 or checked == sum(1 for line in lines if line.startswith("kind:"))
