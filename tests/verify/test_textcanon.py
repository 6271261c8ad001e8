"""Canonicalization on both sides of the verifier: NFC, whitespace, quotes, dashes."""

from __future__ import annotations

import unicodedata

import pytest

from aborist.verify.text.textcanon import (
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
