"""The bounded edit distance behind retrieval's spelling repair (docs/retrieval.md)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aborist.corpus.lexicon import edit_distance


def _reference(a: str, b: str) -> int:
    """Optimal string alignment distance, the textbook full table."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


@pytest.mark.parametrize(
    ("a", "b", "limit", "expected"),
    [
        ("influenza", "infleunza", 1, 1),  # a transposition is one edit
        ("carrageenan", "carageenan", 1, 1),
        ("immunoglobulin", "immunoglobin", 2, 2),
        ("kitten", "sitting", 3, 3),
        ("kitten", "sitting", 2, 3),  # over the limit: limit + 1
        ("same", "same", 0, 0),
        ("", "abc", 5, 3),
        ("abcdef", "a", 2, 3),
    ],
)
def test_edit_distance(a: str, b: str, limit: int, expected: int) -> None:
    assert edit_distance(a, b, limit) == expected


_short = st.text(alphabet="abcde", max_size=8)


@given(_short, _short, st.integers(min_value=0, max_value=4))
def test_edit_distance_is_the_bounded_reference(a: str, b: str, limit: int) -> None:
    assert edit_distance(a, b, limit) == min(_reference(a, b), limit + 1)
    assert edit_distance(a, b, limit) == edit_distance(b, a, limit)
