"""Decoding and canonical text (docs/corpus.md, "Canonicalization")."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aborist.corpus.canonicalize import (
    BinaryFileError,
    UnknownEncodingError,
    canonical_block,
    canonical_inline,
    decode_source,
)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"plain text", "plain text"),
        (codecs.BOM_UTF8 + b"with bom", "with bom"),
        ("caf\u00e9".encode("utf-16"), "caf\u00e9"),
        ("\u00fcber".encode("utf-32"), "\u00fcber"),
        ("na\u00efve".encode(), "na\u00efve"),
    ],
)
def test_decodes_utf8_and_bom_marked_unicode(data: bytes, expected: str) -> None:
    assert decode_source(data, name="f.txt") == expected


def test_nul_byte_without_bom_is_binary_and_named() -> None:
    with pytest.raises(BinaryFileError, match=r"img\.txt: binary file \(NUL byte at offset 3\)"):
        decode_source(b"GIF\x00\x01", name="img.txt")


def test_latin1_is_refused_with_offset_not_guessed() -> None:
    with pytest.raises(
        UnknownEncodingError, match=r"old\.txt: not UTF-8 \(byte 0xe9 at offset 3\)"
    ):
        decode_source("caf\u00e9".encode("latin-1"), name="old.txt")


def test_canonical_block_rules() -> None:
    raw = "Line one\r\nwraps\there\u00a0and\u200bthere.\r\n\r\n\r\n\r\n  Second   para \x07 "
    assert canonical_block(raw) == "Line one wraps here andthere.\n\nSecond para"


def test_nfc_normalization() -> None:
    assert canonical_inline("cafe\u0301") == "caf\u00e9"


@given(st.text())
def test_canonical_block_is_idempotent_and_clean(text: str) -> None:
    once = canonical_block(text)
    assert canonical_block(once) == once
    assert "\r" not in once and "\t" not in once and "  " not in once
    assert "\n\n\n" not in once
    assert once == once.strip()


@given(st.text())
def test_canonical_inline_is_one_line(text: str) -> None:
    out = canonical_inline(text)
    assert "\n" not in out
    assert canonical_inline(out) == out
