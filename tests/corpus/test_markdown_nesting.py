"""Markdown nested past markdown-it's limit (docs/corpus.md, "Markdown"): markdown-it skips
the rest of the enclosing block there, which for a list item was the rest of the
document; the reader keeps those lines as one literal paragraph."""

from __future__ import annotations

import re

from aborist.corpus.readers.markdown import MAX_NESTING, markdown_blocks


def _texts(source: str) -> list[str]:
    return [b.text for b in markdown_blocks(source)]


def test_the_limit_is_commonmark_presets() -> None:
    assert MAX_NESTING == 20


def test_a_block_quote_nested_past_the_limit_keeps_its_text() -> None:
    source = "> " * (MAX_NESTING + 5) + "The valve is never opened.\n\nAfter the quote.\n"
    texts = _texts(source)
    # the five quote markers markdown-it did not read are kept as text
    assert texts == ["> > > > > The valve is never opened.", "After the quote."]


def test_a_list_nested_past_the_limit_keeps_its_items_and_what_follows() -> None:
    items = "".join("  " * i + f"- item{i}\n" for i in range(15))
    source = f"Before.\n\n{items}\nAfter the list.\n\n# Next\n\nMore text.\n"
    texts = _texts(source)
    found = [int(n) for n in re.findall(r"item(\d+)", " ".join(texts))]
    assert found == list(range(15))
    # ten lists deep is the limit: items 0-8 are list items, the rest one literal paragraph
    assert texts[1:10] == [f"item{i}" for i in range(9)]
    assert texts[10] == "item9 - item10 - item11 - item12 - item13 - item14"
    assert texts[0] == "Before." and texts[-3:] == ["After the list.", "Next", "More text."]


def test_a_deep_block_keeps_its_source_lines_as_raw() -> None:
    source = "> " * (MAX_NESTING + 2) + "deep\n" + "> " * (MAX_NESTING + 2) + "deeper\n"
    (block,) = markdown_blocks(source)
    assert block.text == "> > deep > > deeper"
    assert block.raw == source.rstrip("\n")


def test_nesting_within_the_limit_reads_as_markdown_it_does() -> None:
    items = "".join("  " * i + f"- item{i}\n" for i in range(9))
    source = "> " * (MAX_NESTING - 1) + "quoted\n\n" + items
    assert _texts(source) == ["quoted"] + [f"item{i}" for i in range(9)]
