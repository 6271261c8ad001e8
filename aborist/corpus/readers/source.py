"""Reading a source file's bytes: the one place they are read (docs/corpus.md, "What is
read"). Only regular files (after following symlinks), at most :data:`MAX_FILE_BYTES`,
never blocking; a file found by walking a directory only through that directory, as it
was walked (:class:`TreeFile`)."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass

__all__ = [
    "DIRECTORY_FLAGS",
    "MAX_FILE_BYTES",
    "MAX_MARKDOWN_BYTES",
    "SourceFileSkipped",
    "TreeFile",
    "WalkedRoot",
    "fd_path",
    "read_source_bytes",
]

MAX_FILE_BYTES = 64 * 1024 * 1024
"""Source files larger than this are skipped. A file is held in memory several times over
(bytes, decoded text, canonical text, chunks) and its raw text is stored in the shard, so
an unbounded read lets one stray log file or ``/dev/zero`` exhaust the machine; 64 MiB is
far above any document a person writes (the longest COVID-QA paper is under 1 MiB)."""

MAX_MARKDOWN_BYTES = 2 * 1024 * 1024
"""Markdown files larger than this are skipped: markdown-it's tokens, the HTML they render
to and the HTML reader's tree take 100 to 750 times the file's size in memory (a 1 MB
table of narrow cells: 700 MB and 8 s; a 2.2 MB one of 100,000 rows: 590 MB), so a 64 MiB
file could take 40 GB. 2 MiB is fifty times the longest chapter of the shared Rust book (40 KB)."""

_KINDS = (
    (stat.S_ISDIR, "directory"),
    (stat.S_ISFIFO, "named pipe"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISSOCK, "socket"),
)


class SourceFileSkipped(Exception):
    """A file that cannot be read as a source; ``reason`` is its text in the skipped list."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _size_text(n: int) -> str:
    mib = 1024 * 1024
    return f"{n // mib} MiB" if n >= mib and n % mib == 0 else f"{n} bytes"


def _os_reason(e: OSError, path: str | os.PathLike[str]) -> str:
    if e.errno == errno.ELOOP:
        return "symlink loop"
    if e.errno == errno.ENOENT and os.path.islink(path):
        return "broken symlink (its target does not exist)"
    return f"unreadable: {e.strerror or e}"


def _not_regular(mode: int) -> str:
    kind = next((name for test, name in _KINDS if test(mode)), "special file")
    return f"not a regular file ({kind})"


DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""How a directory below a walked root is opened, walking and reading alike: never
through a symlink (``O_NOFOLLOW``): the walk does not follow a linked directory, so a
link met on the way to a file was put there after the walk looked."""
_FILE_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY


@dataclass(frozen=True)
class WalkedRoot:
    """A directory named to be walked: its real path (with a trailing separator) and the
    identity (device, inode) of the directory the walk opened there."""

    inside: str
    dev: int
    ino: int


@dataclass(frozen=True)
class TreeFile:
    """A file the walk found: its root and its names below it, the file's last."""

    root: WalkedRoot
    parts: tuple[str, ...]


def fd_path(fd: int, fallback: str | os.PathLike[str]) -> str:
    """The real path of what is open on ``fd`` (Linux's ``/proc``), else ``fallback``'s."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(fallback)


def read_source_bytes(
    path: str | os.PathLike[str],
    *,
    limit: int = MAX_FILE_BYTES,
    tree: TreeFile | None = None,
    kind: str = "file",
) -> bytes:
    """The bytes of the regular file at ``path`` (symlinks followed), or
    :class:`SourceFileSkipped` saying why not.

    Why each step: the type is checked *before* opening, because opening a FIFO blocks
    until a writer appears and opening a device can have side effects; the open itself is
    non-blocking and the type checked again on the open descriptor, in case the path was
    swapped in between; the read asks for at most ``limit + 1`` bytes, so a file that
    grows while read, or one whose size the kernel misreports (``/proc``), still cannot
    take more than the limit in memory.

    ``tree``: a file a walk found is opened through its root as walked (the same
    directory, by device and inode) and each directory below it without following a
    symlink (:data:`DIRECTORY_FLAGS`), so a parent directory swapped for a link out of
    the tree after the walk leads nowhere; and the file opened must lie in the root,
    judged on the open descriptor (``/proc/self/fd``), so a file swapped for such a link
    is not read either.

    ``kind`` names the file in the message of one too large ("Markdown file" for the
    limit of that format).
    """
    too_large = f"larger than the {_size_text(limit)} limit for one {kind}"
    fd = _open_file(path, tree)
    try:
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise SourceFileSkipped(_not_regular(info.st_mode))
            if tree is not None and not fd_path(fh.fileno(), path).startswith(tree.root.inside):
                raise SourceFileSkipped(_MOVED_OUT)
            if info.st_size > limit:
                raise SourceFileSkipped(f"{too_large} ({info.st_size} bytes)")
            data = fh.read(limit + 1)
    except OSError as e:
        raise SourceFileSkipped(_os_reason(e, path)) from e
    if len(data) > limit:
        raise SourceFileSkipped(f"{too_large} (it held more than its reported size)")
    return data


_MOVED_OUT = (
    "a file outside the directory (it became a symlink out of it after the directory was "
    "walked; not followed)"
)
_PARENT_MOVED = (
    "a directory on its path became a symlink or a file after the directory was walked "
    "(not followed)"
)
_ROOT_MOVED = "the directory walked was replaced before the file was read (not followed)"


def _open_file(path: str | os.PathLike[str], tree: TreeFile | None) -> int:
    """``path`` (or ``tree``'s file) opened for reading once its type is known regular.
    The type is judged *before* the open: opening a FIFO blocks until a writer comes, and
    opening a device can have side effects."""
    if tree is None:
        return _open_in(None, path, path)
    try:
        at = os.open(tree.root.inside, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise SourceFileSkipped(_os_reason(e, path)) from e
    try:
        info = os.fstat(at)
        if (info.st_dev, info.st_ino) != (tree.root.dev, tree.root.ino):
            raise SourceFileSkipped(_ROOT_MOVED)
        for name in tree.parts[:-1]:
            try:
                below = os.open(name, DIRECTORY_FLAGS, dir_fd=at)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise SourceFileSkipped(_PARENT_MOVED) from e
                raise SourceFileSkipped(_os_reason(e, path)) from e
            os.close(at)
            at = below
        return _open_in(at, tree.parts[-1], path)
    finally:
        os.close(at)


def _open_in(at: int | None, name: str | os.PathLike[str], path: str | os.PathLike[str]) -> int:
    try:
        mode = os.stat(name, dir_fd=at).st_mode
    except OSError as e:
        raise SourceFileSkipped(_os_reason(e, path)) from e
    if not stat.S_ISREG(mode):
        raise SourceFileSkipped(_not_regular(mode))
    try:
        return os.open(name, _FILE_FLAGS) if at is None else os.open(name, _FILE_FLAGS, dir_fd=at)
    except OSError as e:
        raise SourceFileSkipped(_os_reason(e, path)) from e
