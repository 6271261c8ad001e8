"""Replay gives one report however its work is laid out: the chain and
projection checks in a forked process or in the replay's own, ``--deep`` runs re-executed
one at a time or in batches, on an honest ledger and on tampered ones, on SQLite and
PostgreSQL. And the report keeps the first divergence of each kind in ``seq`` order,
whatever order the checks found them in."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import aborist.audit.deep_batches  # noqa: F401 (BATCHES below)
from aborist.audit import ReplayReport, replay
from aborist.audit.findings import Divergence, NotReexecuted, VersionSkew
from tests.audit.builders import Built, add_repair_runs, build_ledger
from tests.ledger.tamper import tamper

REPLAY = sys.modules["aborist.audit.replay"]
BATCHES = sys.modules["aborist.audit.deep_batches"]


@pytest.fixture
def built(ledger_url: str, tmp_path: Path) -> Iterator[Built]:
    b = build_ledger(ledger_url, tmp_path)
    add_repair_runs(b)
    try:
        yield b
    finally:
        b.ledger.close()


def failing_after(n: int, real: Callable[..., Any]) -> Callable[..., Any]:
    """``real``, raising from its ``n + 1``-th call on (counted in the deep worker,
    which has its own copy of the count)."""
    calls: list[int] = []

    def flaky(*args: Any) -> Any:
        calls.append(1)
        if len(calls) > n:
            raise RuntimeError("simulated: the deep worker fails")
        return real(*args)

    return flaky


def layouts(b: Built, **kw: Any) -> list[dict[str, Any]]:
    """The report of each layout, as JSON: in-process, forked, and forked with the child
    failing (the parent then does the child's work itself); under ``--deep`` also with
    one run per batch (shared between the replay's process and the deep worker), with
    the deep worker failing at once, and failing after its first batch (the replay's
    process then re-executes what it held, and every later batch)."""
    out = [replay(b.ledger, parallel=False, **kw).to_dict(),
           replay(b.ledger, parallel=True, **kw).to_dict()]  # fmt: skip
    real = REPLAY._ledger_wide_forked

    def broken(*args: Any) -> Any:
        raise RuntimeError("simulated: the child cannot connect")

    REPLAY._ledger_wide_forked = broken
    try:
        out.append(replay(b.ledger, parallel=True, **kw).to_dict())
    finally:
        REPLAY._ledger_wide_forked = real
    if kw.get("deep"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(REPLAY, "_DEEP_BATCH", 1)
            out.append(replay(b.ledger, parallel=True, **kw).to_dict())
            real_runs = BATCHES._runs_of
            for fails_after in (0, 1):
                mp.setattr(BATCHES, "_runs_of", failing_after(fails_after, real_runs))
                out.append(replay(b.ledger, parallel=True, **kw).to_dict())
            mp.setattr(BATCHES, "_runs_of", real_runs)
    return out


def assert_same(reports: list[dict[str, Any]]) -> dict[str, Any]:
    first = reports[0]
    for other in reports[1:]:
        assert other == first
    return first


@pytest.mark.parametrize(
    "scope", [{}, {"deep": True}, {"since": 20}, {"since": 20, "deep": True}, {"run": "quote"}]
)
def test_honest_ledger_same_report(built: Built, scope: dict[str, Any]) -> None:
    kw = dict(scope)
    if "run" in kw:
        kw = {"run_id": built.quote, "deep": True}
    sent: list[int] = []
    real_send = BATCHES.DeepWorker.send

    def counted(self: Any, batch: Any) -> None:
        sent.append(len(batch))
        real_send(self, batch)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(BATCHES.DeepWorker, "send", counted)
        report = assert_same(layouts(built, **kw))
    assert bool(sent) == bool(kw.get("deep"))  # the deep worker did take batches
    assert report["ok"] is True
    assert report["summary"]["events_checked"] > 0


def test_tampered_ledgers_same_report(built: Built) -> None:
    verified = built.event(built.lattice, "qa.answer_verified")
    prompt = built.event(built.quote, "qa.prompt_built")
    blob = built.event(built.quote, "qa.model_answered").data["raw_answer_blob"]
    tamper(built.ledger,
           "UPDATE events SET payload = replace(payload, 'STRICT', 'STRICK') WHERE seq = :v",
           "DELETE FROM events WHERE seq = :p",
           "UPDATE providence_cache SET answer = 'Forty-two.' WHERE run_id = :r",
           "DELETE FROM blobs WHERE hash = :b",
           v=verified.seq, p=prompt.seq, r=built.lattice, b=blob)  # fmt: skip
    for deep in (False, True):
        report = assert_same(layouts(built, deep=deep))
        kinds = {d["kind"]: d for d in report["divergences"]}
        assert kinds["chain"]["seq"] == verified.seq
        assert kinds["dag"]["seq"] == built.event(built.lattice, "qa.answer_labelled").seq
        assert kinds["projection"]["detail"].endswith(".answer")
        # The deleted prompt breaks the quote run's grammar there: its later events (the
        # answer naming the deleted blob among them) are not part of its history.
        answered = built.event(built.quote, "qa.model_answered")
        assert (kinds["history"]["seq"], kinds["history"]["run"]) == (answered.seq, built.quote)


def test_deep_batches_do_not_change_the_report(
    built: Built, monkeypatch: pytest.MonkeyPatch
) -> None:
    blob = built.event(built.lattice, "qa.model_answered").data["raw_answer_blob"]
    tamper(built.ledger, "UPDATE blobs SET bytes = :x WHERE hash = :b", x=b"forged", b=blob)
    whole = replay(built.ledger, deep=True, parallel=False).to_dict()
    monkeypatch.setattr(REPLAY, "_DEEP_BATCH", 1)
    assert replay(built.ledger, deep=True, parallel=False).to_dict() == whole
    assert whole["divergences"][0]["kind"] == "blob"


# -- the first divergence of each kind ----------------------------------------------------


def d(seq: int | None, found: str) -> Divergence:
    return Divergence("dag", seq, "r", "s", "x", found)


def test_first_divergence_is_the_lowest_seq() -> None:
    report = ReplayReport()
    for div in (d(None, "none"), d(12, "twelve"), d(5, "five"), d(5, "five again"), d(9, "n")):
        report.diverge(div)
    first = report.first("dag")
    assert first is not None and first.found == "five"
    assert report.counts == {"dag": 5}


def test_absorb_merges_by_the_same_rule() -> None:
    mine, theirs = ReplayReport(), ReplayReport()
    mine.diverge(d(7, "seven"))
    theirs.diverge(d(3, "three"))
    theirs.diverge(Divergence("projection", None, None, "runs", "a", "b"))
    theirs.projection_rows["runs"] = 4
    mine.absorb(theirs)
    dag = mine.first("dag")
    assert dag is not None and dag.found == "three"
    assert mine.counts == {"dag": 2, "projection": 1}
    assert mine.projection_rows == {"runs": 4}


def test_merge_is_reporting_in_order() -> None:
    """Parts merged in order give what reporting everything into one report gives."""
    found: list[list[Any]] = [
        [d(None, "none"), d(8, "eight"), NotReexecuted("r", "s", "a")],
        [d(8, "eight again"), d(3, "three"), VersionSkew(1, "r", "verify", "k", "a", "b")],
        [d(None, "none again")] + [NotReexecuted("r", str(i), "b") for i in range(25)],
    ]
    whole, merged = ReplayReport(), ReplayReport()
    for items in found:
        part = ReplayReport()
        for target in (whole, part):
            target.runs["completed"] = target.runs.get("completed", 0) + 1
            target.deep_runs += 1
            for item in items:
                if isinstance(item, Divergence):
                    target.diverge(item)
                elif isinstance(item, VersionSkew):
                    target.skew(item)
                else:
                    target.skip(item)
        merged.merge(part)
    assert merged.to_dict() == whole.to_dict()
    dag = merged.first("dag")
    assert dag is not None and dag.found == "three"
    assert merged.not_reexecuted_count == 26 and len(merged.not_reexecuted) == 20
