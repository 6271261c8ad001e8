"""A tree changed under the walk by someone who can write to it (docs/corpus.md, "What is
read"): a directory swapped for a symlink out of the tree while it is walked, or after,
before its files are read; the walked directory itself replaced. None leads out of the
tree: the walk and the read go down from the directory walked, never through a link."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from aborist.corpus import sources
from aborist.corpus.ingest import ingest
from aborist.errors import CorpusError


def _trees(tmp_path: Path) -> tuple[Path, Path]:
    """``docs/`` (``a.txt``, ``sub/z.txt``) and, outside it, ``private/`` holding a file
    of the same name and a directory below."""
    private = tmp_path / "private"
    (private / "deeper").mkdir(parents=True)
    (private / "z.txt").write_text("SECRET key material\n")
    (private / "deeper" / "leak-name.txt").write_text("SECRET too\n")
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.txt").write_text("The first file.\n")
    (docs / "sub" / "z.txt").write_text("A plain file when walked.\n")
    return docs, private


def _swap(directory: Path, target: Path, keep: Path) -> None:
    os.rename(directory, keep)
    directory.symlink_to(target, target_is_directory=True)


def _everything(report: Any) -> str:
    return repr(report.to_dict())


def test_a_directory_swapped_for_a_link_out_while_the_tree_is_walked_is_not_walked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs, private = _trees(tmp_path)
    listed = sources._list

    def list_then_swap(at: int, where: Path, *rest: Any) -> list[str]:
        below = listed(at, where, *rest)
        if where == docs:  # ``sub`` was seen as a directory; now it is a link out
            _swap(docs / "sub", private, tmp_path / "old-sub")
        return below

    monkeypatch.setattr(sources, "_list", list_then_swap)
    report = ingest([docs], "h", shards_dir=tmp_path / "shards")
    assert report.ingested == ((docs / "a.txt").as_uri(),)
    assert [s.to_dict() for s in report.skipped] == [
        {"path": str(docs / "sub"), "reason": sources._SWAPPED_DIR}
    ]
    assert "SECRET" not in _everything(report) and "leak-name" not in _everything(report)


def test_a_parent_swapped_for_a_link_out_after_the_walk_is_not_read_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file opened through the link would lie outside the tree, but so would one
    reached through a link to elsewhere *inside* it: neither is the directory walked."""
    docs, private = _trees(tmp_path)
    (docs / "other").mkdir()
    (docs / "other" / "z.txt").write_text("Another file of the tree.\n")
    walk = sources._walk

    def walk_then_swap(root: Path, skipped: list[Any]) -> dict[Path, Any]:
        found = walk(root, skipped)
        _swap(docs / "sub", private, tmp_path / "old-sub")
        return found

    monkeypatch.setattr(sources, "_walk", walk_then_swap)
    report = ingest([docs], "h", shards_dir=tmp_path / "shards")
    [skip] = [s for s in report.skipped if s.path == str(docs / "sub" / "z.txt")]
    assert skip.reason.startswith("a directory on its path became a symlink")
    assert (private / "z.txt").as_uri() not in report.ingested
    assert "SECRET" not in repr([d.title for d in report.documents])


def test_the_walked_directory_replaced_before_the_read_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs, private = _trees(tmp_path)
    (private / "a.txt").write_text("SECRET in a.txt\n")
    walk = sources._walk

    def walk_then_replace(root: Path, skipped: list[Any]) -> dict[Path, Any]:
        found = walk(root, skipped)
        os.rename(docs, tmp_path / "old-docs")
        os.rename(private, docs)  # a real directory, same path, another inode
        return found

    monkeypatch.setattr(sources, "_walk", walk_then_replace)
    with pytest.raises(CorpusError) as caught:
        ingest([docs], "h", shards_dir=tmp_path / "shards")
    assert "the directory walked was replaced before the file was read" in str(caught.value)
    assert "SECRET" not in str(caught.value)


def test_an_untouched_tree_reads_as_before_links_inside_it_too(tmp_path: Path) -> None:
    docs, _ = _trees(tmp_path)
    (docs / "sub" / "link.txt").symlink_to(docs / "a.txt")  # read once, by its real path
    (docs / "deep" / "er").mkdir(parents=True)
    (docs / "deep" / "er" / "c.md").write_text("# C\n\nDeep.\n")
    report = ingest([docs], "h", shards_dir=tmp_path / "shards")
    assert report.ingested == tuple(sorted(
        p.as_uri() for p in (docs / "a.txt", docs / "sub" / "z.txt", docs / "deep" / "er" / "c.md")
    ))  # fmt: skip
    assert report.skipped == ()


def test_a_tree_1500_directories_deep_is_walked_and_read(tmp_path: Path) -> None:
    """``os.walk`` recursed once a level: 1,500 levels ended the ingest in a
    RecursionError traceback; the path is also longer than the kernel takes whole
    (PATH_MAX), so the file is opened name by name from its directory."""
    import resource

    # the walk keeps one directory open per level: 1,500 levels need that many descriptors
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2000:
        if hard != resource.RLIM_INFINITY and hard < 2000:
            pytest.skip(f"the open-file limit ({hard}) is below 1,500 levels' directories")
        resource.setrlimit(resource.RLIMIT_NOFILE, (2000, hard))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "top.txt").write_text("The top file.\n")
    try:
        at = os.open(docs, os.O_RDONLY | os.O_DIRECTORY)
        for _ in range(1500):
            os.mkdir("d", dir_fd=at)
            below = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=at)
            os.close(at)
            at = below
        fd = os.open("x.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=at)
        os.write(fd, b"The deepest file.\n")
        os.close(fd)
        os.close(at)
        report = ingest([docs], "h", shards_dir=tmp_path / "shards")
        assert sorted(d.title for d in report.documents) == ["top", "x"]
        assert max(len(u) for u in report.ingested) > 3000 and report.skipped == ()
    finally:
        _remove_chain(docs)


def _remove_chain(docs: Path) -> None:
    """Remove the chain of ``d`` directories below ``docs`` from the bottom up, by
    descriptor. ``shutil.rmtree`` recurses once a level: left in place, the tree ended a
    later pytest session's clean-up of old temporary directories in a RecursionError."""
    fds = [os.open(docs, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        while "d" in os.listdir(fds[-1]):
            fds.append(os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
        while len(fds) > 1:
            for name in os.listdir(fds[-1]):
                os.unlink(name, dir_fd=fds[-1])
            os.close(fds.pop())
            os.rmdir("d", dir_fd=fds[-1])
    finally:
        for fd in fds:
            os.close(fd)
