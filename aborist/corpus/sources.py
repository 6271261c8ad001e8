"""The walk/skip listing: which files an ingest reads, and each read and built into a
document (docs/corpus.md, "What is read"). Nothing here touches a shard or its lock.

Paths are files or directories (walked recursively, sorted; dot-files and dot-directories
skipped); a missing path or a symlink loop is an error before anything is read
(:func:`check_paths`). Supported files are read (:func:`.readers.read_source_bytes`),
decoded (:mod:`.canonicalize`) or, for PDF and DOCX, extracted
(:func:`.readers.extract_source`), parsed (:mod:`.readers`) and chunked (:mod:`.chunking`)
by :func:`read_and_build`. Every file that is not becomes a :class:`SkippedFile` naming
its path as given (bytes of a name that are not UTF-8 shown as ``\\xff``) and why.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import unicodedata
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from aborist.concepts.extract import Relation, extract_relations
from aborist.corpus.canonicalize import decode_source
from aborist.corpus.chunking import chunk_blocks
from aborist.corpus.readers import (
    BINARY_FORMATS,
    FORMATS,
    SourceFileSkipped,
    TreeFile,
    WalkedRoot,
    extract_source,
    format_for,
    pages_without_text,
    parse_document,
    read_source_bytes,
)
from aborist.corpus.readers.source import DIRECTORY_FLAGS, MAX_MARKDOWN_BYTES, fd_path
from aborist.corpus.shard_build import BuiltDocument
from aborist.errors import InputError

__all__ = [
    "IngestProgress",
    "SkippedFile",
    "Source",
    "build_document",
    "check_paths",
    "read_and_build",
    "still_there",
]

_ESCAPED = frozenset({"Cc", "Zl", "Zp"})
_KINDS = ", ".join(sorted(FORMATS))
_LINKED_DIR = "symlink to a directory (not followed inside a directory; name it directly)"
_LINKED_OUT = (
    "symlink to a file outside the directory (not followed inside a directory; name it directly)"
)
_SWAPPED_DIR = (
    "a directory that became a symlink or a file while the tree was walked (not followed)"
)


@dataclass(frozen=True)
class SkippedFile:
    path: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}


@dataclass(frozen=True)
class IngestProgress:
    """How far an ingest is: files and bytes read and built, of the totals found."""

    files: int
    total_files: int
    bytes: int
    total_bytes: int

    def advance(self, n_bytes: int) -> IngestProgress:
        return IngestProgress(self.files + 1, self.total_files, self.bytes + n_bytes,
                              self.total_bytes)  # fmt: skip


@dataclass(frozen=True)
class Source:
    """One source file as read: its identity, role, format and raw text."""

    source_uri: str
    file_name: str
    role: str
    fmt: str
    raw: str
    shown: str = ""


def _shown(path: str | os.PathLike[str]) -> str:
    """``path`` as text that is safe to print, store and hash: bytes of the name that are
    not UTF-8 (which Python carries as lone surrogates, unencodable as UTF-8) become
    ``\\xff`` escapes, and control characters (a newline in a name would break the
    one-line-per-file listing) become ``\\x0a`` style escapes."""
    text = os.fsencode(path).decode("utf-8", "backslashreplace")
    return "".join(ascii(c)[1:-1] if unicodedata.category(c) in _ESCAPED else c for c in text)


def _uri(path: Path) -> str:
    """The document identity: the absolute ``file://`` URI of the real path. ``as_uri``
    percent-encodes the file system bytes, so a name that is not UTF-8 stays lossless;
    ``os.path.realpath`` (unlike ``Path.resolve`` on 3.11) never raises on a loop."""
    return Path(os.path.realpath(path)).as_uri()


def _walk(root: Path, skipped: list[SkippedFile]) -> dict[Path, TreeFile]:
    """The files under ``root`` to read, each with the way to it from ``root``.

    The walk holds each directory open while it lists it and opens the next one below it
    from there, never through a symlink (:data:`.readers.DIRECTORY_FLAGS`): a directory
    swapped for a link while the tree is walked is named as skipped, not walked, so the
    walk never leaves the tree (a link to ``/`` would have walked the whole disk and put
    the names it found in the report). The read goes the same way
    (:func:`.readers.read_source_bytes`)."""
    try:
        top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        skipped.append(SkippedFile(_shown(root), f"unreadable directory: {e.strerror or e}"))
        return {}
    info = os.fstat(top)
    walked = WalkedRoot(os.path.join(fd_path(top, root), ""), info.st_dev, info.st_ino)
    found: dict[Path, TreeFile] = {}
    stack: list[tuple[int, Path, tuple[str, ...], Iterator[str]]] = []
    rel: tuple[str, ...] = ()
    at, where = top, root
    while True:
        below = _list(at, where, rel, walked, skipped, found)
        stack.append((at, where, rel, iter(below)))
        while stack:
            at, where, rel, names = stack[-1]
            name = next(names, None)
            if name is None:
                os.close(at)
                stack.pop()
                continue
            try:
                child = os.open(name, DIRECTORY_FLAGS, dir_fd=at)
            except OSError as e:
                swapped = e.errno in (errno.ELOOP, errno.ENOTDIR)
                reason = _SWAPPED_DIR if swapped else f"unreadable directory: {e.strerror or e}"
                skipped.append(SkippedFile(_shown(where / name), reason))
                continue
            at, where, rel = child, where / name, (*rel, name)
            break
        else:
            return found


def _list(
    at: int,
    where: Path,
    rel: tuple[str, ...],
    walked: WalkedRoot,
    skipped: list[SkippedFile],
    found: dict[Path, TreeFile],
) -> list[str]:
    """One directory (open on ``at``, found at ``where``): its files to read into
    ``found``, the others into ``skipped``; returns its directories to walk, sorted."""
    try:
        with os.scandir(at) as listing:  # closed also when reading it fails
            entries = sorted((e for e in listing if not e.name.startswith(".")),
                             key=lambda e: e.name)  # fmt: skip
    except OSError as e:
        skipped.append(SkippedFile(_shown(where), f"unreadable directory: {e.strerror or e}"))
        return []
    below: list[str] = []
    later: list[SkippedFile] = []  # a directory's file skips follow its directories'
    for entry in entries:
        path = where / entry.name
        is_link = entry.is_symlink()
        try:
            is_dir = entry.is_dir()
        except OSError:  # a link that loops
            is_dir = False
        if is_dir and not is_link:
            below.append(entry.name)
        elif is_dir:  # not followed (loops, trees outside the root); say so
            skipped.append(SkippedFile(_shown(path), _LINKED_DIR))
        elif is_link and _is_loop(at, entry.name):
            later.append(SkippedFile(_shown(path), "symlink loop"))
        elif is_link and _links_out(at, where, entry.name, walked.inside):
            later.append(SkippedFile(_shown(path), _LINKED_OUT))
        elif format_for(path) is None:
            later.append(SkippedFile(_shown(path), _unsupported(path)))
        else:
            found[path] = TreeFile(walked, (*rel, entry.name))
    skipped.extend(later)
    return below


def _links_out(at: int, where: Path, name: str, inside: str) -> bool:
    """A symlink to a regular file outside the walked directory (``inside``: its real
    path with a trailing separator): an untrusted tree's ``notes.txt -> ~/.ssh/id_rsa``
    is not read. Links to other kinds of file are left to :func:`read_source_bytes`,
    which names what they are. (The read judges the file it opens again.)"""
    try:
        if not stat.S_ISREG(os.stat(name, dir_fd=at).st_mode):
            return False
    except OSError:
        return False
    target = os.path.realpath(os.path.join(fd_path(at, where), name))
    return not target.startswith(inside)


def _is_loop(at: int, name: str) -> bool:
    """A symlink that never reaches a file (``ELOOP``)."""
    try:
        os.stat(name, dir_fd=at)
    except OSError as e:
        return e.errno == errno.ELOOP
    return False


def _unsupported(path: Path) -> str:
    suffix = path.suffix or "(no extension)"
    return f"unsupported file type {suffix}; supported: {_KINDS}"


def check_paths(paths: Iterable[Path | str]) -> list[Path]:
    """The paths as :class:`Path`; :class:`InputError` if there are none, any is empty
    text, or any is missing, a symlink loop, or cannot be looked at (one message naming
    each)."""
    given = list(paths)
    if not given:
        raise InputError("nothing to ingest: give at least one file or directory")
    if any(not str(p).strip() for p in given):  # Path("") is "." (an unset shell variable)
        raise InputError("an empty path was given; name a file or directory ('.' for here)")
    path_list = [Path(p) for p in given]
    problems: dict[str, list[str]] = {}
    for p in path_list:
        try:
            os.stat(p)
        except OSError as e:
            if e.errno == errno.ELOOP:
                kind = "symlink loop"
            elif e.errno in (errno.ENOENT, errno.ENOTDIR):
                kind = "no such file or directory"
            else:
                kind = f"cannot access ({e.strerror or e})"
            problems.setdefault(kind, []).append(_shown(p))
    if problems:
        raise InputError("; ".join(f"{k}: {', '.join(v)}" for k, v in problems.items()))
    return path_list


def _collect(
    paths: Sequence[Path], skipped: list[SkippedFile], walked: dict[Path, TreeFile]
) -> list[Path]:
    """The files to read, and in ``walked`` the way to each file a walk found, which the
    read takes again."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = _walk(path, skipped)
            walked.update(found)
            if not found and not any(s.path == _shown(path) for s in skipped):
                skipped.append(SkippedFile(_shown(path), f"directory holds no {_KINDS} files"))
            files.extend(found)
        elif format_for(path) is None:
            skipped.append(SkippedFile(_shown(path), _unsupported(path)))
        else:
            files.append(path)
    unique: dict[str, Path] = {}
    for f in files:
        unique.setdefault(_uri(f), f)
    return [unique[k] for k in sorted(unique)]


def _read(
    path: Path,
    role: str,
    skipped: list[SkippedFile],
    notes: list[SkippedFile],
    limit: int,
    tree: TreeFile | None = None,
) -> Source | None:
    fmt = format_for(path)
    assert fmt is not None
    name = _shown(path)
    try:
        if fmt == "markdown" and limit > MAX_MARKDOWN_BYTES:
            data = read_source_bytes(
                path, limit=MAX_MARKDOWN_BYTES, tree=tree, kind="Markdown file"
            )
        else:
            data = read_source_bytes(path, limit=limit, tree=tree)
    except SourceFileSkipped as e:
        skipped.append(SkippedFile(name, e.reason))
        return None
    if fmt in BINARY_FORMATS:
        try:
            raw = extract_source(data, fmt)
        except SourceFileSkipped as e:
            skipped.append(SkippedFile(name, e.reason))
            return None
        if fmt == "pdf" and (empty := pages_without_text(raw)):
            listed = ", ".join(map(str, empty[:10])) + (" …" if len(empty) > 10 else "")
            notes.append(
                SkippedFile(name, f"page(s) {listed} have no text layer (OCR is not offered)")
            )
        return Source(_uri(path), _shown(path.name), role, fmt, raw, name)
    try:
        raw = decode_source(data, name=name)
    except InputError as e:
        skipped.append(SkippedFile(name, str(e).removeprefix(f"{name}: ")))
        return None
    return Source(_uri(path), _shown(path.name), role, fmt, raw, name)


def build_document(source: Source) -> tuple[BuiltDocument, list[tuple[str, Relation]]] | None:
    """The document built from its raw text, or ``None`` when no text is left.
    Raises :class:`SourceFileSkipped` for a source the reader refuses."""
    parsed = parse_document(source.raw, source.fmt, file_name=source.file_name)
    chunks = tuple(chunk_blocks(parsed.blocks))
    if not chunks:
        return None
    relations = [(c.hash, r) for c in chunks for r in extract_relations(c.text)]
    doc = BuiltDocument(
        source_uri=source.source_uri,
        doc_id=hashlib.sha256(source.source_uri.encode("utf-8")).hexdigest()[:16],
        file_name=source.file_name,
        title=parsed.title,
        source_role=source.role,
        format=source.fmt,
        raw_sha256=hashlib.sha256(source.raw.encode("utf-8")).hexdigest(),
        raw_text=source.raw,
        canonical_text="\n\n".join(b.text for b in parsed.blocks),
        chunks=chunks,
    )
    return doc, relations


def _build_or_skip(
    source: Source, skipped: list[SkippedFile]
) -> tuple[BuiltDocument, list[tuple[str, Relation]]] | None:
    try:
        result = build_document(source)
    except SourceFileSkipped as e:
        skipped.append(SkippedFile(source.shown, e.reason))
        return None
    except (RecursionError, ValueError, KeyError, IndexError, TypeError) as e:
        # A reader's failure on a hostile file no rule above foresaw: one skipped file,
        # never a traceback that loses the rest of the ingest.
        reason = f"the {source.fmt} reader failed on this file ({type(e).__name__}: {e})"
        skipped.append(SkippedFile(source.shown, reason[:300]))
        return None
    if result is None:
        skipped.append(SkippedFile(source.shown, "no text after canonicalization"))
    return result


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def still_there(source_uri: str) -> bool:
    """Whether the file a ``file://`` source URI names still exists (bytes of the name
    that are not UTF-8 were percent-encoded; :func:`_uri`)."""
    parsed = urllib.parse.urlsplit(source_uri)
    if parsed.scheme != "file":
        return True  # not a file of this machine: never pruned
    path = os.fsdecode(urllib.parse.unquote_to_bytes(parsed.path))
    return os.path.lexists(path)


def read_and_build(
    path_list: list[Path],
    role: str,
    skipped: list[SkippedFile],
    notes: list[SkippedFile],
    max_file_bytes: int,
    progress: Callable[[IngestProgress], None] | None,
) -> tuple[dict[str, Source], list[BuiltDocument], list[tuple[str, Relation]], list[str]]:
    """Read every file under ``path_list`` and build each document (no shard lock yet):
    the sources by URI, the built documents, their relations and the URIs ingested;
    refused files go to ``skipped``, warnings to ``notes``."""
    walked: dict[Path, TreeFile] = {}
    files = _collect(path_list, skipped, walked)
    sizes = [_size(f) for f in files]
    state = IngestProgress(files=0, total_files=len(files), bytes=0, total_bytes=sum(sizes))
    sources: dict[str, Source] = {}
    source_bytes: dict[str, int] = {}
    for f, size in zip(files, sizes, strict=True):
        source = _read(f, role, skipped, notes, max_file_bytes, walked.get(f))
        if source is not None:
            sources[source.source_uri] = source
            source_bytes[source.source_uri] = size
        else:
            state = state.advance(size)
    if progress is not None and state.files:
        progress(state)

    built: list[BuiltDocument] = []
    relations: list[tuple[str, Relation]] = []
    ingested: list[str] = []
    for source in sources.values():
        result = _build_or_skip(source, skipped)
        state = state.advance(source_bytes[source.source_uri])
        if progress is not None:
            progress(state)
        if result is None:
            continue
        built.append(result[0])
        relations.extend(result[1])
        ingested.append(source.source_uri)
    return sources, built, relations, ingested
