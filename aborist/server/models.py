"""Request and response bodies of the JSON API (pydantic; the OpenAPI schema at
``/openapi.json`` is generated from these). Responses that mirror a CLI ``--json`` output
are documented by their keys here and returned exactly as the CLI prints them."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from aborist.events import Mode

__all__ = [
    "ErrorBody",
    "EvidenceItem",
    "HealthBody",
    "QueryRequest",
    "RunList",
    "VerifyRequest",
]

SHARD_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
MAX_QUESTION_CHARS = 4000
MAX_ANSWER_CHARS = 200_000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class QueryRequest(_Strict):
    """What ``aborist query QUESTION`` takes (the answerer is the server's, not the
    caller's: a request cannot point the server at another model endpoint)."""

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    #: shard names only (a path is refused: a request must not open files by path)
    shards: list[Annotated[str, Field(pattern=SHARD_NAME)]] | None = Field(
        default=None, max_length=64
    )
    mode: Mode = "claim-lattice"
    repair: bool = False
    reprompts: int = Field(default=0, ge=0, le=5)
    use_cache: bool = True


class EvidenceItem(_Strict):
    text: str = Field(max_length=MAX_ANSWER_CHARS)
    source_uri: str | None = None
    title: str | None = None


class VerifyRequest(_Strict):
    """One line of ``aborist verify --batch`` (without its ``id``): the answer, the
    evidence as texts or objects (E1, E2 … in order), the question, the mode."""

    answer: str = Field(max_length=MAX_ANSWER_CHARS)
    evidence: list[str | EvidenceItem] = Field(min_length=1, max_length=200)
    question: str | None = Field(default=None, max_length=MAX_QUESTION_CHARS)
    mode: Mode = "quote"
    inspect: bool = False


class ErrorBody(BaseModel):
    """Every error: a short machine-readable ``error``, a one-line ``detail``, and the
    ``run_id`` when a run was recorded before it failed."""

    error: str
    detail: Any
    run_id: str | None = None


class HealthBody(BaseModel):
    status: Literal["ok"]
    version: str
    backend: str
    head_seq: int


class RunList(BaseModel):
    runs: list[dict[str, Any]]
    next_cursor: str | None
