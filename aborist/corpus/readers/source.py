"""Reading a source file's bytes: the one place they are read (docs/corpus.md, "What is
read"). Only regular files (after following symlinks), at most :data:`MAX_FILE_BYTES`,
never blocking."""

from __future__ import annotations

import errno
import os
import stat

__all__ = ["MAX_FILE_BYTES", "SourceFileSkipped", "read_source_bytes"]

MAX_FILE_BYTES = 64 * 1024 * 1024
"""Source files larger than this are skipped. A file is held in memory several times over
(bytes, decoded text, canonical text, chunks) and its raw text is stored in the shard, so
an unbounded read lets one stray log file or ``/dev/zero`` exhaust the machine; 64 MiB is
far above any document a person writes (the longest COVID-QA paper is under 1 MiB)."""

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


def read_source_bytes(
    path: str | os.PathLike[str], *, limit: int = MAX_FILE_BYTES, inside: str | None = None
) -> bytes:
    """The bytes of the regular file at ``path`` (symlinks followed), or
    :class:`SourceFileSkipped` saying why not.

    Why each step: the type is checked *before* opening, because opening a FIFO blocks
    until a writer appears and opening a device can have side effects; the open itself is
    non-blocking and the type checked again on the open descriptor, in case the path was
    swapped in between; the read asks for at most ``limit + 1`` bytes, so a file that
    grows while read, or one whose size the kernel misreports (``/proc``), still cannot
    take more than the limit in memory. ``inside`` (a directory's real path with a
    trailing separator): the file opened must lie in it, judged on the open descriptor
    (``/proc/self/fd``), so a file of a walked directory swapped for a symlink out of it
    after the walk is not read.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise SourceFileSkipped(_os_reason(e, path)) from e
    if not stat.S_ISREG(mode):
        raise SourceFileSkipped(_not_regular(mode))
    too_large = f"larger than the {_size_text(limit)} limit for one file"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as e:
        raise SourceFileSkipped(_os_reason(e, path)) from e
    try:
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise SourceFileSkipped(_not_regular(info.st_mode))
            if inside is not None and not _opened_path(fh.fileno(), path).startswith(inside):
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


def _opened_path(fd: int, path: str | os.PathLike[str]) -> str:
    """The real path of the file open on ``fd`` (Linux's ``/proc``), else of ``path``."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(path)
