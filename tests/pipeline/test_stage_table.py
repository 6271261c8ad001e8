"""The one vocabulary of a run's stages (docs/pipeline.md, "The stage table"): the table in
aborist/events.py, the docs that show it, the DAG and the grammar that read it, and the
typed reads of recorded events."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from aborist.errors import InputError
from aborist.events import (
    EVENT_TYPES,
    EVIDENCE_STAGE,
    MODES,
    STAGE_TABLE,
    AnswerLabelled,
    InvalidEventPayload,
    PromptBuilt,
    RunFailed,
    UnknownEventType,
    model_for,
    parse_event,
    stage_table_markdown,
)
from aborist.pipeline.dag import STAGE_EVENTS, STAGES, stages_for
from aborist.pipeline.history import RUN_EVENT_TYPES, RUN_GRAMMAR
from ledger.canonical import canonical_text
from ledger.envelope import RecordedEvent

ROOT = Path(__file__).resolve().parents[2]
_BLOCK = re.compile(r"<!-- stage-table: [^>]*-->\n(.*?)<!-- /stage-table -->", re.S)


@pytest.mark.parametrize("page", ["docs/pipeline.md", "docs/architecture.md"])
def test_the_docs_show_the_code_table(page: str) -> None:
    blocks = _BLOCK.findall((ROOT / page).read_text(encoding="utf-8"))
    assert blocks == [stage_table_markdown()], f"{page}'s stage table differs from the code's"


def test_the_markdown_has_one_row_per_table_row() -> None:
    rows = stage_table_markdown().splitlines()[2:]
    assert len(rows) == len(STAGE_TABLE)
    assert rows[6] == "| `qa.model_answered` | `answer` | `raw_answer` | `model` |"
    assert rows[1] == "| `qa.cache_checked` | — | — | `cache` |"


def test_the_dag_reads_the_table() -> None:
    for mode in MODES:
        want = [r.dag_stage(mode) for r in STAGE_TABLE if r.dag_stage(mode)]
        assert list(stages_for(mode, repaired=True)) == want
        assert "repair" not in STAGES[mode]
        for row in STAGE_TABLE:
            stage = row.dag_stage(mode)
            if stage is not None:
                assert STAGE_EVENTS[stage] == row.event.TYPE


def test_the_grammar_names_only_table_events() -> None:
    table_types = {r.event.TYPE for r in STAGE_TABLE}
    assert {s.type for s in RUN_GRAMMAR} == table_types
    assert table_types | {RunFailed.TYPE} == RUN_EVENT_TYPES


def test_evidence_stage_is_the_tables() -> None:
    assert EVIDENCE_STAGE == {
        "qa.evidence_mapped": "evidence_map",
        "qa.context_assembled": "context",
    }


def test_the_recorder_names_only_table_stages() -> None:
    """Every ``rec.stage = "…"`` the recorder (aborist/pipeline/) sets is a recorder stage
    of the table (the stage ``qa.run_failed`` records), and every table stage is one it
    sets."""
    set_ = set()
    for path in sorted((ROOT / "aborist" / "pipeline").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                for t in node.targets:
                    if isinstance(t, ast.Attribute) and t.attr == "stage":
                        set_.add(node.value.value)
    assert set_ == {r.recorder for r in STAGE_TABLE}


def _event(type_: str, payload: object, seq: int = 7) -> RecordedEvent:
    return RecordedEvent(seq, "e", "run:r", 1, type_, 1, "", canonical_text(payload), "", "", "")


def test_parse_event_reads_the_model_of_its_type() -> None:
    got = parse_event(_event(PromptBuilt.TYPE, {"prompt_blob": "ab", "prompt_version": "v1"}))
    assert isinstance(got, PromptBuilt)
    assert (got.prompt_blob, got.prompt_version) == ("ab", "v1")
    assert model_for("qa.answer_labelled") is AnswerLabelled
    assert set(EVENT_TYPES) >= {r.event.TYPE for r in STAGE_TABLE}


def test_parse_event_refuses_unknown_types_and_bad_payloads() -> None:
    with pytest.raises(UnknownEventType, match=r"unknown event type 'qa\.no_such'"):
        parse_event(_event("qa.no_such", {}))
    with pytest.raises(
        InvalidEventPayload, match=r"seq 7: qa\.prompt_built .*prompt_version: Field"
    ):
        parse_event(_event(PromptBuilt.TYPE, {"prompt_blob": "ab"}))
    with pytest.raises(InvalidEventPayload):
        parse_event(_event(PromptBuilt.TYPE, [1, 2]))
    assert issubclass(UnknownEventType, InputError) and issubclass(InvalidEventPayload, InputError)
