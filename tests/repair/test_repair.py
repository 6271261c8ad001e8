"""The repair stage : mechanical repair, the accept rule, the re-prompt."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.clients.base import StubClient
from aborist.errors import InputError
from aborist.prompts import CANNOT_ANSWER, parse_messages
from aborist.repair import repair as repair_mod
from aborist.repair.repair import (
    REPROMPT_VERSION,
    RepairChange,
    RepairResult,
    accept_reprompt,
    apply_changes,
    build_reprompt_messages,
    dropped_contradicted,
    mechanical_repair,
    not_worse,
    repair_answer,
    reprompt_template_sha256,
)
from aborist.verify.evidence import build_evidence, spotlight
from aborist.verify.inspect import SpanDiagnosis, inspect_answer
from aborist.verify.verify import verify_answer
from ledger.canonical import canonical_json

SOURCE = (
    "The committee approved the budget (after a long debate) on Friday. Revenue grew by ten "
    "percent in 2020, the report said. The plan covers all regional offices."
)
EV = build_evidence([SOURCE])
QUESTION = "What did the committee approve?"


def _diagnose(answer: str, mode: str = "quote") -> tuple[SpanDiagnosis, ...]:
    verdict = verify_answer(answer, EV, mode=mode)
    return inspect_answer(answer, EV, verdict).diagnoses


def _repair(answer: str, mode: str = "quote") -> RepairResult:
    return mechanical_repair(answer, _diagnose(answer, mode), EV, mode=mode)


def test_synthetic_elision_is_split_into_two_verbatim_quotations() -> None:
    answer = "The report notes “The committee approved the budget […] on Friday.” [E1]"
    result = _repair(answer)
    assert result.text == (
        "The report notes “The committee approved the budget” ... “on Friday.” [E1]"
    )
    [change] = result.changes
    assert (change.kind, change.action, change.line_no) == (
        "synthetic_elision_inside_quote",
        "split_elision",
        1,
    )
    assert change.before == "“The committee approved the budget […] on Friday.”"
    assert verify_answer(result.text, EV).audit_mode == "STRICT"


def test_trailing_artifact_inside_a_quote_and_on_a_plain_line() -> None:
    answer = (
        '"Revenue grew by ten percent in 2020. (Source: annual report)"\n'
        "Revenue grew by ten percent in 2020 (Source: annual report) [E1]"
    )
    result = _repair(answer)
    assert result.text == (
        '"Revenue grew by ten percent in 2020."\nRevenue grew by ten percent in 2020 [E1]'
    )
    assert [(c.kind, c.line_no) for c in result.changes] == [
        ("trailing_artifact", 1),
        ("trailing_artifact", 2),
    ]
    assert result.changes[1].before == " (Source: annual report)"
    assert verify_answer(result.text, EV).audit_mode == "STRICT"


def test_trailing_artifact_keeps_the_full_stop_between_sentences() -> None:
    answer = (
        "Revenue grew by ten percent in 2020 (Source: annual report). "
        "The plan covers all regional offices."
    )
    result = _repair(answer)
    assert result.text == (
        "Revenue grew by ten percent in 2020. The plan covers all regional offices."
    )
    assert verify_answer(result.text, EV).n_verified == 2


def test_no_overlap_drops_the_line_or_only_the_failing_sentence() -> None:
    answer = (
        '"The plan covers all regional offices." [E1]\n'
        '- "Bananas are yellow," the report said. [E1]\n'
        "Bananas are yellow. The plan covers all regional offices.\n"
    )
    result = _repair(answer)
    assert result.text == (
        '"The plan covers all regional offices." [E1]\nThe plan covers all regional offices.\n'
    )
    assert [(c.action, c.line_no, c.before) for c in result.changes] == [
        ("drop_line", 2, '- "Bananas are yellow," the report said. [E1]'),
        ("drop_line", 3, "Bananas are yellow. "),
    ]


def test_claim_lattice_line_drop_and_trailing_tail() -> None:
    answer = (
        "The plan covers all regional offices. [E1]\n"
        "Revenue grew by ten percent in 2020 (Source: annual report) [E1]\n"
        "Bananas are yellow and tasty fruit. [E1]"
    )
    result = _repair(answer, "claim-lattice")
    assert result.text == (
        "The plan covers all regional offices. [E1]\nRevenue grew by ten percent in 2020 [E1]"
    )
    assert verify_answer(result.text, EV, mode="claim-lattice").audit_mode == "STRICT"


def test_an_answer_is_never_emptied() -> None:
    answer = "Bananas are yellow and tasty fruit.\nApples are red."
    result = _repair(answer)
    assert result.text == answer
    assert not result.changes
    assert {s.reason for s in result.skipped} == {"would_empty_answer"}


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        ('"The committee approved the budget on Friday"', "include_aside_for_verbatim"),
        ("Revenue in 2020 grew by ten percent.", "paraphrase"),
        ("Revenue grew strongly across Europe in 2020.", "partial_paraphrase"),
    ],
)
def test_non_mechanical_kinds_are_skipped_untouched(answer: str, kind: str) -> None:
    diagnoses = _diagnose(answer)
    assert [d.kind for d in diagnoses] == [kind]
    result = mechanical_repair(answer, diagnoses, EV)
    assert result.text == answer
    assert not result.changes
    assert [(s.kind, s.reason) for s in result.skipped] == [(kind, "not_mechanical")]


def test_idempotent_on_clean_text_and_on_repaired_text() -> None:
    clean = '"The plan covers all regional offices." [E1]'
    assert _repair(clean).text == clean and not _repair(clean).changes
    damaged = (
        'It says "The committee approved the budget [...] on Friday."\n'
        '"Revenue grew by ten percent in 2020. (Source: annual report)"\n'
        "Bananas are yellow and tasty fruit."
    )
    diagnoses = _diagnose(damaged)
    once = mechanical_repair(damaged, diagnoses, EV)
    assert len(once.changes) == 3
    # fresh diagnoses of the repaired text: nothing left to do
    twice = _repair(once.text)
    assert twice.text == once.text and not twice.changes
    # the old diagnoses applied again: all stale, nothing changes
    stale = mechanical_repair(once.text, diagnoses, EV)
    assert stale.text == once.text and not stale.changes
    assert {s.reason for s in stale.skipped} == {"stale_diagnosis"}


def test_repair_answer_promotes_hybrid_quote_elision_to_strict() -> None:
    answer = (
        'The report notes "The committee approved the budget [...] on Friday." [E1]\n'
        '"The plan covers all regional offices." [E1]'
    )
    pre = verify_answer(answer, EV, question=QUESTION)
    assert pre.audit_mode == "HYBRID"
    outcome = repair_answer(answer, EV, pre, question=QUESTION)
    assert outcome.accepted and outcome.reason == "accepted"
    assert outcome.verdict.audit_mode == "STRICT"
    assert outcome.text == outcome.repaired_text != answer
    body = outcome.to_dict()
    assert body["pre_repair_audit_mode"] == "HYBRID"
    assert body["post_repair_audit_mode"] == "STRICT"
    assert body["pre_verdict"] == pre.to_dict()
    assert body["changes"][0]["kind"] == "synthetic_elision_inside_quote"
    assert body["original_text"] == answer
    again = repair_answer(outcome.text, EV, outcome.verdict, question=QUESTION)
    assert again.reason == "already_strict" and again.text == outcome.text


def test_the_change_log_replays_and_refuses_a_mismatch() -> None:
    answer = (
        "The report notes “The committee approved the budget […] on Friday.” [E1]\n"
        "Bananas are yellow and tasty fruit."
    )
    outcome = repair_answer(answer, EV, verify_answer(answer, EV))
    record = json.loads(canonical_json(outcome.to_dict()))
    assert [c["scope"] for c in record["changes"]] == ["text", "line"]
    assert apply_changes(answer, record["changes"]) == outcome.repaired_text
    assert outcome.repaired_text == (
        "The report notes “The committee approved the budget” ... “on Friday.” [E1]"
    )
    with pytest.raises(InputError):
        apply_changes(answer.replace("committee", "council"), record["changes"])
    with pytest.raises(InputError):
        apply_changes("one line", record["changes"])


def test_repair_answer_leaves_strict_and_unrepairable_answers_alone() -> None:
    strict = '"The plan covers all regional offices."'
    out = repair_answer(strict, EV, verify_answer(strict, EV))
    assert (out.accepted, out.reason, out.post_verdict) == (False, "already_strict", None)
    para = "Revenue in 2020 grew by ten percent."
    out = repair_answer(para, EV, verify_answer(para, EV))
    assert (out.accepted, out.reason, out.text) == (False, "no_mechanical_change", para)


def test_repair_answer_checks_the_verdict_matches() -> None:
    answer = "Bananas are yellow."
    with pytest.raises(InputError):
        repair_answer(answer, EV, verify_answer(answer, EV), mode="claim-lattice")


def test_a_repair_that_lowers_n_verified_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    answer = '"The plan covers all regional offices."\n"Bananas are yellow fruit."'
    pre = verify_answer(answer, EV)
    assert (pre.audit_mode, pre.n_verified) == ("HYBRID", 1)

    def harmful(
        text: str, diagnoses: Sequence[SpanDiagnosis], evidence: object, **_: object
    ) -> RepairResult:
        # drops the verified line instead of the bad one
        first, second = text.splitlines()
        change = RepairChange("no_overlap", "drop_line", 1, "x", first, "")
        return RepairResult(second, (change,), ())

    monkeypatch.setattr(repair_mod, "mechanical_repair", harmful)
    outcome = repair_answer(answer, EV, pre)
    assert not outcome.accepted and outcome.reason == "rejected_worse"
    assert outcome.text == answer and outcome.verdict is pre
    assert outcome.post_verdict is not None and outcome.post_verdict.n_verified == 0


def test_not_worse_rule() -> None:
    one = verify_answer('"The plan covers all regional offices." Bananas.', EV)
    two = verify_answer('"The plan covers all regional offices."', EV)
    empty = verify_answer("", EV)
    assert not_worse(one, two) and not not_worse(two, empty)
    assert not_worse(one.to_dict(), two.to_dict())
    zero = verify_answer("Bananas are yellow.", EV)
    assert not not_worse(two, zero) and not_worse(zero, two)


_WORDS = SOURCE.replace(",", "").replace(".", "").replace("(", "").replace(")", "").split()
_pieces = st.lists(
    st.sampled_from([*_WORDS, "bananas", "(Source: x)", "[...]", "…", "."]), min_size=1, max_size=10
).map(" ".join)
_line = st.one_of(_pieces, _pieces.map(lambda s: f'"{s}"'), _pieces.map(lambda s: f"“{s}” [E1]"))


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(_line, min_size=1, max_size=4), mode=st.sampled_from(["quote", "claim-lattice"])
)
def test_repair_is_pure_deterministic_and_idempotent(lines: list[str], mode: str) -> None:
    answer = "\n".join(lines)
    pre = verify_answer(answer, EV, mode=mode)
    first = repair_answer(answer, EV, pre, mode=mode)
    second = repair_answer(answer, EV, pre, mode=mode)
    assert canonical_json(first.to_dict()) == canonical_json(second.to_dict())
    # a unit dropped as contradicted was never support: it does not count as a loss
    discounted = dropped_contradicted(pre, first.result, first.diagnoses)
    assert first.verdict.n_verified >= pre.n_verified - discounted
    assert first.accepted == (
        first.post_verdict is not None and not_worse(pre, first.post_verdict, discounted=discounted)
    )
    record = json.loads(canonical_json(first.to_dict()))
    assert apply_changes(record["original_text"], record["changes"]) == record["repaired_text"]
    if first.accepted:
        settled = repair_answer(first.text, EV, first.verdict, mode=mode)
        assert settled.text == first.text
        assert not settled.result.changes


def _failing_answer() -> tuple[str, tuple[SpanDiagnosis, ...]]:
    answer = (
        '"The committee approved the budget on Friday" [E1]\n'
        '"Revenue in 2020 grew by ten percent." [E1]'
    )
    return answer, _diagnose(answer)


def test_reprompt_messages_carry_each_failing_quote_and_its_spotlight() -> None:
    answer, diagnoses = _failing_answer()
    messages = build_reprompt_messages(QUESTION, answer, diagnoses, EV, "quote")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert parse_messages(messages[:2]).question == QUESTION
    assert messages[2]["content"] == answer
    request = messages[3]["content"]
    for d in diagnoses:
        assert f'"{d.span}"' in request
        assert d.kind in request
        assert spotlight(SOURCE, d.span, 400) in request
    assert "The committee approved the budget (after a long debate) on Friday" in request
    assert CANNOT_ANSWER in request and "verbatim quotation" in request
    again = build_reprompt_messages(QUESTION, answer, diagnoses, EV, "quote")
    assert again == messages
    assert REPROMPT_VERSION == "reprompt/2" and len(reprompt_template_sha256()) == 64
    lattice = build_reprompt_messages(QUESTION, answer, diagnoses, EV, "claim-lattice")
    assert "one claim per line" in lattice[3]["content"]


def test_reprompt_rejects_empty_input() -> None:
    with pytest.raises(InputError):
        build_reprompt_messages(QUESTION, "x", (), EV, "quote")
    answer, diagnoses = _failing_answer()
    with pytest.raises(InputError):
        build_reprompt_messages(QUESTION, answer, diagnoses, EV, "prose")


def test_reprompt_with_stub_client_is_accepted_when_not_worse() -> None:
    answer, diagnoses = _failing_answer()
    pre = verify_answer(answer, EV, question=QUESTION)
    messages = build_reprompt_messages(QUESTION, answer, diagnoses, EV, "quote")
    corrected = (
        '"The committee approved the budget (after a long debate) on Friday." [E1]\n'
        '"Revenue grew by ten percent in 2020" [E1]'
    )
    client = StubClient({messages[-1]["content"]: corrected})
    reply = client.complete(messages)
    post = verify_answer(reply.text, EV, question=QUESTION)
    assert (pre.audit_mode, post.audit_mode) == ("UNGROUNDED", "STRICT")
    assert accept_reprompt(pre, post)
    assert client.calls == [messages]
    # a reply that loses a verified unit is refused
    strict = verify_answer(corrected, EV)
    worse = StubClient(default='"Bananas are yellow."').complete(messages)
    assert not accept_reprompt(strict, verify_answer(worse.text, EV))
    assert not accept_reprompt(pre, verify_answer("", EV))


DOC = Path(__file__).resolve().parents[2] / "docs" / "repair.md"
_BLOCK = re.compile(r"```repair\n(.*?)```", re.DOTALL)


def _doc_blocks() -> list[str]:
    return _BLOCK.findall(DOC.read_text(encoding="utf-8"))


def test_the_doc_has_an_example_per_mechanical_kind() -> None:
    assert len(_doc_blocks()) >= 5


@pytest.mark.parametrize("body", _doc_blocks())
def test_doc_example(body: str) -> None:
    fields: dict[str, list[str]] = {}
    for line in body.strip().splitlines():
        key, _, value = line.partition(": ")
        fields.setdefault(key, []).append(value)
    names = sorted((k for k in fields if k.startswith("evidence E")), key=lambda k: int(k[10:]))
    evidence = build_evidence([text for k in names for text in fields[k]])
    mode = fields.get("mode", ["quote"])[0]
    answer = "\n".join(fields["answer"])
    pre = verify_answer(answer, evidence, mode=mode)
    outcome = repair_answer(answer, evidence, pre, mode=mode)
    assert outcome.text == "\n".join(fields["repaired"])
    got = f"{pre.audit_mode} -> {outcome.verdict.audit_mode} {outcome.reason}"
    assert got == fields["expect"][0]


def test_reprompt_spotlight_is_an_excerpt_of_long_evidence() -> None:
    filler = " ".join(f"Unrelated sentence number {n} about harbour tides." for n in range(40))
    long_ev = build_evidence([filler, filler + " " + SOURCE + " " + filler])
    answer = '"Revenue in 2020 grew by ten percent." [E2]'
    diagnoses = inspect_answer(answer, long_ev, verify_answer(answer, long_ev)).diagnoses
    assert [d.kind for d in diagnoses] == ["paraphrase"]
    request = build_reprompt_messages(QUESTION, answer, diagnoses, long_ev, "quote")[3]["content"]
    excerpt = spotlight(long_ev[1].text, diagnoses[0].span, 400)
    assert "Revenue grew by ten percent in 2020" in excerpt
    assert len(excerpt) < len(long_ev[1].text) // 4
    assert f"Evidence [E2], excerpt: {excerpt}" in request


def test_unlocatable_spans_are_skipped_not_guessed() -> None:
    # a JSON claim list has claim numbers, not text lines
    claims = (
        '[{"claim": "Bananas are yellow and tasty fruit.", "evidence": ["E1"]},'
        ' {"claim": "The plan covers all regional offices.", "evidence": ["E1"]}]'
    )
    result = _repair(claims, "claim-lattice")
    assert result.text == claims and not result.changes
    assert [s.reason for s in result.skipped] == ["json_claim_list"]
    # a decomposed accent (NFC would compose it) cannot be mapped char by char
    ev = build_evidence(["The café approved the budget (after a long debate) on Friday."])
    answer = '"The cafe\u0301 approved the budget [...] on Friday."'
    diagnoses = inspect_answer(answer, ev, verify_answer(answer, ev)).diagnoses
    assert [d.kind for d in diagnoses] == ["synthetic_elision_inside_quote"]
    result = mechanical_repair(answer, diagnoses, ev)
    assert result.text == answer
    assert [s.reason for s in result.skipped] == ["span_not_located"]
