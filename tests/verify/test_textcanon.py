"""Canonicalization on both sides of the verifier: NFC, whitespace, quotes, dashes."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aborist.verify.text.textcanon import (
    canonical_lines,
    canonical_tokens,
    canonicalize,
    content_tokens,
    match_form,
    token_spans,
    tokens,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("“curly” and ‘single’", "\"curly\" and 'single'"),
        ("«guillemets» „low“", '"guillemets" "low"'),
        ("1844–1846 — em ― bar − minus", "1844-1846 - em - bar - minus"),
        ("wait…", "wait..."),
        ("  a\t\tb\n\nc\u00a0d  ", "a b c d"),
        ("zero\u200bwidth\ufeff", "zerowidth"),
        ("ASCII stays", "ASCII stays"),
    ],
)
def test_canonicalize_maps_typography_and_whitespace(raw: str, expected: str) -> None:
    assert canonicalize(raw) == expected


def test_canonicalize_applies_nfc() -> None:
    decomposed = unicodedata.normalize("NFD", "Café Zürich")
    assert decomposed != "Café Zürich"
    assert canonicalize(decomposed) == "Café Zürich"


def test_canonicalize_is_idempotent_on_long_text() -> None:
    text = "“Quoted” — text… " * 400
    once = canonicalize(text)
    assert len(text) > 2000
    assert canonicalize(once) == once


def test_tokens_keep_numbers_and_fold_case() -> None:
    assert tokens("Revenue rose 3.5% to $1,200 in Q4.") == [
        "revenue",
        "rose",
        "3.5",
        "to",
        "1,200",
        "in",
        "q4",
    ]
    assert tokens("Arthur’s Magazine") == ["arthur", "s", "magazine"]
    assert tokens("snake_case") == ["snake", "case"]


def test_long_and_short_paths_tokenize_alike() -> None:
    short = "Straße “X” 12"
    long_text = (short + " ") * 300
    assert tokens(long_text)[:3] == tokens(short)
    assert canonical_tokens(canonicalize(short)) == tokens(short)


def test_match_form_is_a_token_boundary_match() -> None:
    hay = match_form(tokens("The cathedral of Ely"))
    assert match_form(tokens("cathedral of")) in hay
    assert match_form(tokens("cat")) not in hay
    assert match_form([]) == " "


def test_content_tokens_drop_stopwords_keep_numbers() -> None:
    assert content_tokens(tokens("It is not in the 1990s or 2001")) == ["1990s", "2001"]


def test_token_spans_point_into_the_text() -> None:
    text = canonicalize("Hello, “World”")
    spans = token_spans(text)
    assert [(t, text[s:e]) for t, s, e in spans] == [("hello", "Hello"), ("world", "World")]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # a tokenized corpus's quotation (ClapNQ, the Penn Treebank) is a quotation
        (
            "the song `` Girl You Know It 's True '' jammed",
            'the song "Girl You Know It \'s True" jammed',
        ),
        ("(`` a '' , `` b '')", '("a" , "b")'),
        ("a ``\u00a0b ''.", 'a "b".'),
        ("one `` a\n b '' end", 'one "a b" end'),
        # neither a Markdown fence, a Python empty string nor an unclosed pair is one
        ("```rust\nfn main() {}\n```", "```rust fn main() {} ```"),
        ("split('', 2) and '' is empty", "split('', 2) and '' is empty"),
        ("x `` never closed", "x `` never closed"),
        # nested ones are read from the inside out (one pass read only the inner pair)
        ("`` `` a '' ''", '""a""'),
        ("inside``word'' stays", "inside``word'' stays"),
    ],
)
def test_backquote_quotations_read_as_quotations(raw: str, expected: str) -> None:
    assert canonicalize(raw) == expected
    assert canonicalize(canonicalize(raw)) == canonicalize(raw)


@given(
    st.lists(
        st.sampled_from(["``", "''", "a", "It", "'s", "(", ")", ",", ".", " ", "\n", "\u00a0"]),
        max_size=30,
    )
)
def test_backquote_quotations_keep_canonical_form_stable(parts: list[str]) -> None:
    raw = " ".join(parts)
    once = canonicalize(raw)
    assert canonicalize(once) == once
    assert canonicalize(canonical_lines(raw)) == once
