"""Chunking rules (docs/corpus.md, "Chunking")."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from aborist.corpus.chunking import MAX_CHARS, TARGET_CHARS, chunk_blocks, chunk_hash
from aborist.corpus.readers import Block


def _para(n: int, word: str = "word") -> Block:
    text = " ".join([word] * n) + "."
    return Block(text=text, raw=text)


def test_heading_starts_a_chunk_and_names_the_section() -> None:
    blocks = [
        Block("Intro", "# Intro", 1),
        _para(5, "alpha"),
        Block("Details", "## Details", 2),
        Block("Sub", "### Sub", 3),
        _para(5, "beta"),
    ]
    chunks = chunk_blocks(blocks)
    assert [c.section for c in chunks] == ["Intro", "Sub"]
    assert chunks[0].text.startswith("Intro\n\nalpha")
    assert chunks[1].text.startswith("Details\n\nSub\n\nbeta")
    assert [c.index for c in chunks] == [0, 1]


def test_paragraphs_pack_up_to_target_then_split() -> None:
    blocks = [_para(60) for _ in range(10)]  # ~300 chars each
    chunks = chunk_blocks(blocks)
    assert len(chunks) > 1
    assert all(len(c.text) <= TARGET_CHARS for c in chunks)
    assert sum(c.text.count("word") for c in chunks) == 600


def test_long_paragraph_is_cut_at_sentences_within_max() -> None:
    sentence = "This sentence has a handful of words in it."
    long = " ".join([sentence] * 120)
    chunks = chunk_blocks([Block(long, long)])
    assert len(chunks) > 1
    assert all(len(c.text) <= MAX_CHARS for c in chunks)
    assert all(c.text.endswith(".") for c in chunks)
    assert " ".join(c.text for c in chunks) == long


def test_chunk_hash_is_sha256_of_text() -> None:
    (chunk,) = chunk_blocks([_para(3)])
    assert chunk.hash == hashlib.sha256(chunk.text.encode("utf-8")).hexdigest()
    assert chunk.hash == chunk_hash(chunk.text)


_words = st.text(alphabet="abcdefgh .", min_size=1, max_size=400).map(lambda s: " ".join(s.split()))


@given(st.lists(_words.filter(bool), min_size=1, max_size=30))
def test_chunking_keeps_every_word_in_order_and_bounds_size(texts: list[str]) -> None:
    blocks = [Block(t, t) for t in texts]
    chunks = chunk_blocks(blocks)
    assert all(len(c.text) <= MAX_CHARS for c in chunks)
    assert " ".join(" ".join(c.text.split()) for c in chunks).split() == " ".join(texts).split()
    assert chunk_blocks(blocks) == chunks


# --- hostile inputs: sizes that took seconds when chunking was quadratic ----------------


def test_a_long_line_without_sentence_ends_is_cut_in_one_pass() -> None:
    # 8 MB on one line: cutting by re-slicing the remainder copied ~16 GB; now linear.
    line = "abcdefghi " * 800_000
    chunks = chunk_blocks([Block(line, line)])
    assert len(chunks) == 4000
    assert all(len(c.text) <= MAX_CHARS for c in chunks)
    assert sum(c.text.count("abcdefghi") for c in chunks) == 800_000


def test_many_headings_in_a_row_are_chunked_in_linear_time() -> None:
    # 20,000 headings took 6 s when every piece recounted the chunk; a heading run is
    # also capped at MAX_CHARS now instead of growing into one huge chunk.
    chunks = chunk_blocks([Block(f"h{i}", f"# h{i}", 1) for i in range(20_000)])
    assert all(len(c.text) <= MAX_CHARS for c in chunks)
    assert [t for c in chunks for t in c.text.split("\n\n")] == [f"h{i}" for i in range(20_000)]
    assert chunks[-1].section == "h19999"
