"""Ingest and retrieval on the Rust book (../shared/data/rust-book, real text nobody here
wrote): shard contents, idempotent roots, and sensible answers to plain questions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from aborist.corpus.ingest import IngestReport, ingest
from aborist.retrieval.retriever import Retriever

RUST_BOOK = (Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "rust-book").resolve()


@pytest.fixture(scope="module")
def rust(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, IngestReport]]:
    if not (RUST_BOOK / "src").is_dir():
        pytest.skip(f"the Rust book is not at {RUST_BOOK} (shared data absent)")
    shards = tmp_path_factory.mktemp("rust") / "shards"
    yield shards, ingest([RUST_BOOK / "src"], "rust-book", shards_dir=shards)


def test_rust_book_shard(rust: tuple[Path, IngestReport]) -> None:
    _, report = rust
    assert len(report.documents) == 112 and not report.skipped
    titles = {d.title for d in report.documents}
    assert {"What Is Ownership?", "Understanding Ownership"} <= titles
    assert report.concepts > 0


@pytest.mark.slow
def test_rust_book_reingest_gives_the_same_root(rust: tuple[Path, IngestReport]) -> None:
    shards, report = rust
    again = ingest([RUST_BOOK / "src"], "rust-book-2", shards_dir=shards)
    assert again.source_root == report.source_root
    assert [d.doc_root for d in again.documents] == [d.doc_root for d in report.documents]


@pytest.mark.parametrize(
    ("question", "title"),
    [
        ("What is ownership?", "What Is Ownership?"),
        ("How do I read a file?", "Reading a File"),
        ("What is a RefCell?", "RefCell<T> and the Interior Mutability Pattern"),
    ],
)
def test_rust_book_retrieval(rust: tuple[Path, IngestReport], question: str, title: str) -> None:
    shards, _ = rust
    with Retriever(["rust-book"], shards_dir=shards) as retriever:
        result = retriever.retrieve(question)
    assert result.chunks[0].title == title
    assert 0 < result.used_bytes <= 60_000
