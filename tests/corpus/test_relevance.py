"""Lexical relevance features (docs/retrieval.md, "Rerank")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aborist.corpus.lexicon import sentence_keys
from aborist.retrieval.relevance import body_features, contains_phrase, heading_of, title_features


def _weights(pairs: dict[str, float]) -> list[tuple[str, str, float]]:
    return [(k, f" {k} ", w) for k, w in pairs.items()]


def test_coverage_and_density() -> None:
    keys = sentence_keys("The cat sat. A dog barked at the cat. Nothing else.")
    weights = _weights({"cat": 1.0, "dog": 2.0, "bird": 1.0})
    coverage, density = body_features(keys, weights, 4.0)
    assert coverage == pytest.approx(3.0 / 4.0)
    assert density == pytest.approx(3.0 / 4.0)  # "A dog barked at the cat." holds both
    keys = sentence_keys("The cat sat. A dog barked.")
    assert body_features(keys, weights, 4.0) == pytest.approx((0.75, 0.5))


def test_title_boost_and_purity() -> None:
    heading = heading_of("Backup Policy", "Retention")
    weights = _weights({"backup": 1.0, "kept": 3.0})
    boost, purity = title_features(heading, weights, 4.0)
    assert boost == pytest.approx(0.25)
    assert purity == pytest.approx(0.5)  # "backup" of {"backup", "policy"}


def test_contains_phrase() -> None:
    assert contains_phrase(("a", "b", "c"), ("b", "c"))
    assert not contains_phrase(("a", "b", "c"), ("c", "b"))
    assert not contains_phrase(("a",), ())


_words = st.lists(st.sampled_from(["cat", "dog", "bird", "fish", "sat", "ran"]), max_size=30)


@given(
    st.lists(_words, max_size=6),
    st.dictionaries(st.sampled_from(["cat", "dog", "bird", "owl"]), st.floats(0.1, 5.0)),
)
def test_density_never_exceeds_coverage(
    sentences: list[list[str]], pairs: dict[str, float]
) -> None:
    text = " ".join(" ".join(s) + "." for s in sentences if s)
    total = sum(pairs.values()) or 1.0
    coverage, density = body_features(sentence_keys(text), _weights(pairs), total)
    assert 0.0 <= density <= coverage <= 1.0 + 1e-9
