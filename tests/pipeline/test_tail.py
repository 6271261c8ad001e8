"""The deterministic tail (``aborist/pipeline/tail.py``): the pipeline records what its
functions return, the claims are parsed once per run, and the rung shown for a run (fresh,
a cache hit, ``aborist show``) is the one its recorded label names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import aborist.pipeline.tail as tail_mod
import aborist.verify.verify as verify_mod
from aborist.clients.base import StubClient
from aborist.events import AnswerLabelled, AnswerVerified
from aborist.pipeline import tail
from aborist.pipeline.query import query
from aborist.pipeline.recorded import load_run
from aborist.pipeline.run import Governance, RunResult
from aborist.pipeline.tail import TailInputs
from aborist.verify.claims import parse_claims
from aborist.verify.evidence import build_evidence
from aborist.verify.ladder import LADDER
from aborist.verify.verify import verify_answer
from cli.query_view import print_outcome as _print_outcome
from cli.query_view import print_result, rung_line
from ledger.canonical import canonical_json
from ledger.store import Ledger

Q = "How long is the Silverrun River?"
FACT = "The Silverrun River is 412 kilometres long."
#: Answers that land on different rungs over the corpus's rivers shard.
ANSWERS = {
    "verbatim": f"{FACT} [E1]",
    "one line unsupported": f"{FACT} [E1]\nIt is wet.",
    "made up": "The Silverrun River is 9 kilometres wide and full of gold. [E1]",
}


def run(ledger: Ledger, corpus: Any, answer: str, **kw: Any) -> RunResult:
    return query(Q, ledger=ledger, shards_dir=corpus.shards_dir, shards=["geo"],
                 client=StubClient(default=answer), **kw)  # fmt: skip


def _counting(fn: Callable[..., Any], calls: list[str]) -> Callable[..., Any]:
    def wrapped(text: str) -> Any:
        calls.append(text)
        return fn(text)

    return wrapped


@pytest.mark.parametrize("mode", ["claim-lattice", "quote"])
def test_a_run_parses_its_answer_once(
    pipeline_ledger: Ledger, corpus: Any, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(tail_mod, "parse_claims", _counting(parse_claims, calls))
    monkeypatch.setattr(verify_mod, "parse_claims", _counting(parse_claims, calls))
    result = run(pipeline_ledger, corpus, ANSWERS["one line unsupported"],
                 governance=Governance(mode=mode))  # fmt: skip
    assert calls == ([ANSWERS["one line unsupported"]] if mode == "claim-lattice" else [])
    assert result.verdict is not None and result.verdict["n_units"] == 2


def test_verify_with_parsed_claims_is_verify_without() -> None:
    evidence = build_evidence([FACT, "The Glass Lake is cold."])
    for answer in [*ANSWERS.values(), "", "[E1, see above] The lake.", '[{"claim": "x"}]']:
        plain = verify_answer(answer, evidence, question=Q, mode="claim-lattice")
        parsed = verify_answer(answer, evidence, question=Q, mode="claim-lattice",
                               claims=parse_claims(answer))  # fmt: skip
        assert canonical_json(parsed.to_dict()) == canonical_json(plain.to_dict()), answer


@pytest.mark.parametrize("mode", ["claim-lattice", "quote"])
def test_recorded_payloads_are_the_tails_from_the_recorded_inputs(
    pipeline_ledger: Ledger, corpus: Any, mode: str
) -> None:
    """What the pipeline appended for parse, verify, render and label is, byte for byte,
    what the tail's functions give on the inputs read back from the ledger."""
    for answer in ANSWERS.values():
        result = run(pipeline_ledger, corpus, answer, governance=Governance(mode=mode))
        recorded = load_run(pipeline_ledger, result.run_id)
        raw = recorded.raw_answer(pipeline_ledger)
        assert raw == answer
        inputs = TailInputs(Q, mode, raw, recorded.evidence(pipeline_ledger))
        claims, parsed = tail.parse(inputs)
        verdict, verified = tail.verify(inputs, claims)
        expected = [
            *([parsed] if parsed is not None else []),
            verified,
            tail.render(raw, verified.verdict, inputs.evidence),
        ]
        by_type = {e.type: e for e in recorded.events}
        for payload in expected:
            assert by_type[payload.TYPE].payload == canonical_json(
                payload.model_dump(mode="json")
            ).decode("utf-8"), (answer, payload.TYPE)
        labelled = by_type[AnswerLabelled.TYPE].data
        assert {k: labelled[k] for k in ("audit_mode", "label", "answer_hash")} == (
            tail.label_fields(raw, verified.verdict)
        )
        assert verdict.rung == tail.label_rung(labelled["label"])


def test_label_rung_is_the_ladder_read_backwards() -> None:
    for rung, name, _ in LADDER:
        assert tail.label_rung(name) == rung
    for other in ("verified", "", None, 3, "STRICT"):
        assert tail.label_rung(other) is None


def _rung_line_of(out: str) -> str:
    lines = [line for line in out.splitlines() if " · rung " in line]
    assert len(lines) == 1, out
    return lines[0]


def test_a_cache_hit_shows_the_rung_its_answer_was_given(
    pipeline_ledger: Ledger, corpus: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hit has no verdict of its own: its rung is the one the recorded label names,
    the same the fresh run showed from its verdict, for every rung."""
    rungs = set()
    for answer in ANSWERS.values():
        fresh = run(pipeline_ledger, corpus, answer)
        hit = run(pipeline_ledger, corpus, answer)
        assert hit.cache_hit and hit.verdict is None and fresh.verdict is not None
        print_result(fresh, as_json=False)
        fresh_line = _rung_line_of(capsys.readouterr().out)
        print_result(hit, as_json=False)
        hit_line = _rung_line_of(capsys.readouterr().out)
        rung = fresh.verdict["rung"]
        assert hit_line == fresh_line == rung_line(fresh.audit_mode, fresh.label)
        assert f" · rung {rung}/4 {LADDER[rung - 1][1]}: " in hit_line
        rungs.add(rung)
    assert len(rungs) >= 2 and 3 in rungs, rungs  # PARTIAL is the rung the old fake kept


def test_show_of_a_repaired_run_shows_the_repaired_rung(
    pipeline_ledger: Ledger, corpus: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The rung is the final label's, not one recomputed from the first verdict's
    violations (which the repair removed)."""
    result = run(pipeline_ledger, corpus, ANSWERS["one line unsupported"],
                 governance=Governance(repair_enabled=True))  # fmt: skip
    assert result.pre_repair_audit_mode is not None and result.verdict is not None
    recorded = load_run(pipeline_ledger, result.run_id)
    first = recorded.payload(AnswerVerified.TYPE)
    assert first is not None and first["verdict"]["rung"] != result.verdict["rung"]
    _print_outcome(recorded)
    line = _rung_line_of(capsys.readouterr().out)
    assert line == rung_line(result.audit_mode, result.label)
    assert f"rung {result.verdict['rung']}/4 {result.label}:" in line


def test_an_unknown_recorded_label_is_shown_as_recorded() -> None:
    assert rung_line("HYBRID", "\x1b[31mODD") == "HYBRID · \\x1b[31mODD"
