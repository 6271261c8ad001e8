"""The re-prompt fallback in a run (docs/repair.md), driven by the extractive client: what the
mechanical repair cannot fix, a second ask of the model can, and both attempts are on
the record."""

from __future__ import annotations

from typing import Any

from aborist.audit.replay import replay
from aborist.clients.base import ChatClient, ChatResult, Messages
from aborist.clients.extractive import ExtractiveClient
from aborist.pipeline.query import query
from aborist.pipeline.recorded import load_run
from aborist.pipeline.run import Governance
from ledger.store import Ledger

Q = "How long is the Silverrun River?"
PARAPHRASE = 'The river "runs for roughly four hundred and twelve kilometres" overall.'


class FirstParaphraseThenExtract(ChatClient):
    """Answers the first prompt with an unverifiable paraphrase; answers every later one
    (the re-prompt) as the extractive client would."""

    kind = "scripted"

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0
        self.extractive = ExtractiveClient()

    def _complete(
        self, messages: Messages, *, temperature: float, max_tokens: int | None
    ) -> ChatResult:
        self.calls += 1
        if self.calls == 1:
            return ChatResult(text=PARAPHRASE, model="scripted")
        return self.extractive.complete(messages)

    def _profile(self) -> dict[str, Any]:
        return {"model": "scripted"}


def test_reprompt_fixes_what_mechanics_cannot(pipeline_ledger: Ledger, corpus: Any) -> None:
    client = FirstParaphraseThenExtract()
    gov = Governance(mode="quote", repair_enabled=True, repair_max_reprompts=2)
    result = query(Q, ledger=pipeline_ledger, client=client, shards_dir=corpus.shards_dir,
                   governance=gov)  # fmt: skip
    assert client.calls == 2  # the first prompt, then exactly one re-prompt
    assert result.audit_mode == "STRICT" and result.pre_repair_audit_mode != "STRICT"
    assert "412 kilometres" in result.answer and PARAPHRASE not in result.answer
    run = load_run(pipeline_ledger, result.run_id)
    types = [e.type for e in run.events]
    assert types.count("qa.reprompt_attempted") == 1
    attempt = run.payload("qa.reprompt_attempted")
    assert (
        attempt is not None and attempt["accepted"] and attempt["verdict"]["audit_mode"] == "STRICT"
    )
    repaired = run.payload("qa.answer_repaired")
    assert repaired is not None and repaired["method"] == "reprompt"
    assert repaired["outcome"]["original_text"] == PARAPHRASE
    assert repaired["outcome"]["pre_repair_audit_mode"] == result.pre_repair_audit_mode
    # The transition is reconstructable and replays clean, the reply taken as recorded.
    report = replay(pipeline_ledger, run_id=result.run_id, deep=True)
    assert report.ok, report.to_dict()


def test_reprompt_attempts_are_capped_and_recorded_when_rejected(
    pipeline_ledger: Ledger, corpus: Any
) -> None:
    from aborist.clients.base import StubClient

    client = StubClient(default=PARAPHRASE)  # the re-prompt gets the same paraphrase back
    gov = Governance(mode="quote", repair_enabled=True, repair_max_reprompts=2)
    result = query(Q, ledger=pipeline_ledger, client=client, shards_dir=corpus.shards_dir,
                   governance=gov)  # fmt: skip
    assert result.audit_mode == "UNGROUNDED" and result.pre_repair_audit_mode is None
    assert len(client.calls) == 3
    run = load_run(pipeline_ledger, result.run_id)
    attempts = [e.data for e in run.events if e.type == "qa.reprompt_attempted"]
    assert [a["attempt"] for a in attempts] == [1, 2]
    assert all(a["raw_answer_blob"] for a in attempts)
    assert run.first("qa.answer_repaired") is None
