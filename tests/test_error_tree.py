"""Refusals of the pipeline's and the verifier's pure functions are classes of the domain
error tree (:mod:`aborist.errors`), so the CLI's one translation turns each into one line;
each is still a ``ValueError`` for callers that caught that before."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from aborist.errors import AboristError, CacheKeyError, InputError, RunDagError
from aborist.pipeline.dag import build_dag, stages_for
from aborist.pipeline.keys import KeyDimensions, cache_key, question_hash
from aborist.verify.ladder import ladder_rung

_QUOTE = {s: "0" * 64 for s in stages_for("quote")}
_DIMS = {name: "x" for name in KeyDimensions.__dataclass_fields__}


@pytest.mark.parametrize(
    ("call", "cls", "words"),
    [
        (lambda: build_dag("prose", {}), RunDagError, "unknown mode 'prose'"),
        (
            lambda: build_dag("quote", {**_QUOTE, "evidence_map": "1" * 64}),
            RunDagError,
            "not in a quote",
        ),
        (
            lambda: build_dag("quote", {k: v for k, v in _QUOTE.items() if k != "prompt"}),
            RunDagError,
            "missing stage(s): prompt",
        ),
        (lambda: question_hash("q", "loose"), CacheKeyError, "strict or equivalence_class"),  # type: ignore[arg-type]
        (lambda: cache_key(KeyDimensions(**{**_DIMS, "schema_version": ""})), CacheKeyError,
         "schema_version"),
        (lambda: cache_key(KeyDimensions(**{**_DIMS, "source_root": "a|b"})), CacheKeyError,
         "source_root"),
        (lambda: ladder_rung("MAYBE", []), InputError, "found 'MAYBE'"),
    ],
)  # fmt: skip
def test_refusals_are_domain_errors(
    call: Callable[[], object], cls: type[AboristError], words: str
) -> None:
    with pytest.raises(cls) as caught:
        call()
    assert type(caught.value) is cls
    assert isinstance(caught.value, AboristError) and isinstance(caught.value, ValueError)
    assert words in str(caught.value)
