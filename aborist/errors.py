"""The domain's error tree. The CLI maps every :class:`AboristError` to one line on
stderr and a non-zero exit.

::

    AboristError
     ├── InputError        a missing or unreadable file, an empty question, malformed JSON
     │    └── BundleFormatError  an export bundle not of the shape docs/ledger-format.md gives
     ├── CorpusError       ingest or shard problems
     ├── ModelError        the model server failed or answered something unusable
     ├── ProjectionError   a read model (the answer cache) disagrees with the ledger
     ├── RunGrammarError   an append that would break a run's grammar (nothing written)
     ├── RunDagError       stage hashes that are not the run DAG of their mode
     └── CacheKeyError     a cache-key dimension or question-hash mode that makes no key

``InputError``, ``RunGrammarError``, ``RunDagError`` and ``CacheKeyError`` are also
``ValueError``: a caller that caught the bare ``ValueError`` they replaced still does.
"""

from __future__ import annotations

from typing import TypeGuard

__all__ = [
    "AboristError",
    "BundleFormatError",
    "CacheKeyError",
    "CorpusError",
    "InputError",
    "ModelError",
    "ProjectionError",
    "RunDagError",
    "RunGrammarError",
    "has_question",
    "json_kind",
    "require_question",
]


class AboristError(Exception):
    """Root of every error the domain raises."""


class InputError(AboristError, ValueError):
    """User input that cannot be used as given."""


class BundleFormatError(InputError):
    """An export bundle that is not of the shape docs/ledger-format.md ("Export bundles")
    gives: :func:`aborist.audit.bundle.verify_bundle` reports it as its ``format`` check."""


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


class RunDagError(AboristError, ValueError):
    """Stage hashes that are not the run DAG of their mode (docs/pipeline.md, "The run
    DAG"): an unknown mode, a missing stage, or a stage the mode does not have."""


class CacheKeyError(AboristError, ValueError):
    """A cache-key dimension that is empty or holds the separator ``|``, or a question-hash
    mode other than ``strict`` and ``equivalence_class`` (docs/pipeline.md)."""


def has_question(question: object) -> TypeGuard[str]:
    """Whether ``question`` is a question at all: a string with something besides spaces."""
    return isinstance(question, str) and bool(question.strip())


def json_kind(value: object) -> str:
    """What a value read from JSON is, for a message: "a number", "an array", "null"."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, dict) else type(value).__name__


def require_question(question: object) -> str:
    """``question`` stripped, or :class:`InputError` "the question is empty": the one check
    every entry point (retrieval, the prompt, ``ask``, the run) makes of a question."""
    if not has_question(question):
        raise InputError("the question is empty")
    return question.strip()
