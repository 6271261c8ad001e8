"""A recorded run as one JSON object: what ``aborist show --json`` prints and what
``GET /api/v1/runs/{id}`` starts from, built in one place so the two cannot differ."""

from __future__ import annotations

from typing import Any

from aborist.events import AnswerLabelled
from aborist.pipeline.recorded import RecordedRun

__all__ = ["run_json"]


def run_json(run: RecordedRun) -> dict[str, Any]:
    """The run's id, status, question and mode, every event with its payload, and the run
    DAG recorded in ``qa.answer_labelled`` (None when the run was not labelled)."""
    label = run.get(AnswerLabelled)
    return {
        "run_id": run.run_id,
        "status": run.status,
        "question": run.question,
        "mode": run.mode,
        "events": [dict(e.to_dict(), payload=e.data) for e in run.events],
        "run_dag": label.run_dag if label else None,
    }
