"""Cache key properties (docs/pipeline.md)."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from aborist.pipeline.keys import (
    KeyDimensions,
    cache_key,
    conversation_hash,
    governance_policy_hash,
    question_hash,
    source_root_of,
)

hexes = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
versions = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789.-", min_size=1, max_size=12)
dims = st.builds(
    KeyDimensions,
    source_root=hexes,
    question_hash=hexes,
    model_profile_hash=hexes,
    conversation_hash=hexes,
    governance_policy_hash=hexes,
    schema_version=versions,
    canonicalization_version=versions,
    chunking_version=versions,
    verifier_policy_hash=hexes,
)
FIELDS = [f.name for f in dataclasses.fields(KeyDimensions)]


@given(dims)
def test_equal_inputs_give_equal_keys(d: KeyDimensions) -> None:
    assert cache_key(d) == cache_key(dataclasses.replace(d))
    assert len(cache_key(d)) == 64


@given(dims, st.sampled_from(FIELDS), st.data())
def test_changing_any_one_dimension_changes_the_key(
    d: KeyDimensions, field: str, data: st.DataObject
) -> None:
    old = getattr(d, field)
    new = data.draw((hexes if len(old) == 64 else versions).filter(lambda v: v != old))
    assert cache_key(dataclasses.replace(d, **{field: new})) != cache_key(d)


def test_nine_dimensions() -> None:
    assert len(FIELDS) == 9 and FIELDS[-1] == "verifier_policy_hash"


words = st.lists(st.from_regex(r"[A-Za-z0-9]{1,8}", fullmatch=True), min_size=1, max_size=8)


@given(words, st.data())
def test_equivalence_class_ignores_case_punctuation_whitespace(
    ws: list[str], data: st.DataObject
) -> None:
    plain = " ".join(ws)
    seps = data.draw(st.lists(st.sampled_from([" ", "  ", "\t", ", ", " - ", "\n"]),
                              min_size=len(ws), max_size=len(ws)))  # fmt: skip
    cased = [w.upper() if i % 2 else w.lower() for i, w in enumerate(ws)]
    noisy = "".join(sep + w for sep, w in zip(seps, cased, strict=True)) + "?!"
    assert question_hash(noisy, "equivalence_class") == question_hash(plain, "equivalence_class")
    shuffled = " ".join(data.draw(st.permutations(ws)))
    assert question_hash(shuffled, "equivalence_class") == question_hash(plain, "equivalence_class")


def test_strict_mode_keeps_case_and_words_but_not_spacing() -> None:
    a = question_hash("What is the GIL?")
    assert a == question_hash("  What is   the GIL?\n")
    assert a != question_hash("what is the gil?")
    assert a != question_hash("What is the GIL")
    assert question_hash("What is the GIL?") != question_hash(
        "What is the GIL?", "equivalence_class"
    )
    assert question_hash("the dog bit the man", "equivalence_class") != question_hash(
        "the dog bit the dog", "equivalence_class"
    )


def test_repair_flag_enters_the_governance_hash() -> None:
    base = {"mode": "quote", "repair_enabled": False, "repair_max_reprompts": 0}
    assert governance_policy_hash(base) != governance_policy_hash({**base, "repair_enabled": True})
    assert governance_policy_hash(base) == governance_policy_hash(dict(reversed(base.items())))


def test_source_root_and_conversation() -> None:
    assert source_root_of({"a": "1" * 64, "b": "2" * 64}) == source_root_of(
        {"b": "2" * 64, "a": "1" * 64}
    )
    assert source_root_of({"a": "1" * 64}) != source_root_of({"a": "3" * 64})
    assert conversation_hash() != conversation_hash([{"role": "user", "content": "hi"}])
