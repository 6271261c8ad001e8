"""The domain's error tree. The CLI maps every :class:`AboristError` to one line on
stderr and a non-zero exit.

::

    AboristError
     ├── InputError        a missing or unreadable file, an empty question, malformed JSON
     ├── CorpusError       ingest or shard problems
     ├── ModelError        the model server failed or answered something unusable
     ├── ProjectionError   a read model (the answer cache) disagrees with the ledger
     └── RunGrammarError   an append that would break a run's grammar (nothing written)
"""

from __future__ import annotations

from typing import TypeGuard

__all__ = [
    "AboristError",
    "CorpusError",
    "InputError",
    "ModelError",
    "ProjectionError",
    "RunGrammarError",
    "has_question",
    "require_question",
]


class AboristError(Exception):
    """Root of every error the domain raises."""


class InputError(AboristError, ValueError):
    """User input that cannot be used as given."""


class CorpusError(AboristError):
    """A shard is missing, corrupt, or cannot be built."""


class ModelError(AboristError):
    """The model endpoint was unreachable, timed out, or answered unusably."""


class ProjectionError(AboristError):
    """A projection row disagrees with the events it was folded from: it was edited (or
    the database damaged) after the fact. Nothing is served from it; ``aborist-ledger
    replay`` shows the difference and ``aborist-ledger rebuild`` restores the table."""


class RunGrammarError(AboristError, ValueError):
    """An event that would break its run's grammar (docs/pipeline.md, "The run grammar"):
    a second stage event, a stage out of order, anything after ``qa.run_completed`` or
    ``qa.run_failed``. Raised by the projection fold inside the append's transaction, so
    nothing of the append is written."""


def has_question(question: object) -> TypeGuard[str]:
    """Whether ``question`` is a question at all: a string with something besides spaces."""
    return isinstance(question, str) and bool(question.strip())


def require_question(question: object) -> str:
    """``question`` stripped, or :class:`InputError` "the question is empty": the one check
    every entry point (retrieval, the prompt, ``ask``, the run) makes of a question."""
    if not has_question(question):
        raise InputError("the question is empty")
    return question.strip()
