"""A DOCX file's package (its ZIP) judged and unpacked before python-docx reads it, all of
it under the reader's time limit (docs/corpus.md, "DOCX").

The package is an OPC package (ECMA-376 Part 2): ZIP items named by their part names. A
file is refused, with one reason, when it is not a ZIP, when it holds more than
:data:`MAX_PARTS` items, when an item's name is not a part name (a ``..`` or ``.``
segment, a leading ``/``, a backslash, an empty segment) or names the same part as
another (part names compare case-insensitively, §9.1.1.1: a reader taking the first and
another the last would read two documents), when its parts declare more than
:data:`MAX_UNPACKED_BYTES` (:data:`MAX_XML_BYTES` for XML), when a part is compressed
other than stored or deflated, when it has no ``[Content_Types].xml`` (so no main
document part), or when it cannot be unpacked. Directory items (a name
ending in ``/``, which some ZIP tools add) hold no part and are left out.
"""

from __future__ import annotations

import io
import time
import zipfile
import zlib
from typing import Any

from aborist.corpus.readers.source import SourceFileSkipped

__all__ = [
    "DOCX_SECONDS",
    "MAX_PARTS",
    "MAX_UNPACKED_BYTES",
    "MAX_XML_BYTES",
    "TYPES_PART",
    "Clock",
    "repacked",
]

MAX_UNPACKED_BYTES = 256 * 1024 * 1024
"""Limit on the declared sizes of all parts together (images included)."""
MAX_XML_BYTES = 64 * 1024 * 1024
"""Limit on the XML parts together, as unpacked: the text a DOCX holds is read from its
XML, so this is the counterpart of the 64 MiB limit on a text file (a 180 KB file held
50 MB of XML: 1.4 million paragraphs, 1.7 GB of memory)."""
MAX_PARTS = 10_000
"""Limit on the items of one package. Word writes a dozen parts and one more per picture;
600,000 empty items (a 56 MB file) took 6 s for ``zipfile`` to list and 30 s to repack,
outside any limit, so the count is judged as soon as the list is read."""
DOCX_SECONDS = 60.0
"""Wall-clock limit on reading one DOCX: unpacking its parts (checked at every part and
every MiB inflated) and reading its text (at every paragraph, table row and note); a
real document takes well under a second."""
#: The part that gives every other part its content type: without it nothing is a document.
TYPES_PART = "[Content_Types].xml"
_CHUNK = 1024 * 1024
_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
_UNPACK_ERRORS = (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError, zlib.error)


class Clock:
    """The deadline of one DOCX, started when its bytes arrive."""

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = DOCX_SECONDS if seconds is None else seconds
        self._end = time.monotonic() + self.seconds

    def check(self) -> None:
        if time.monotonic() > self._end:
            raise SourceFileSkipped(f"DOCX whose text takes longer than {self.seconds:g} s to read")


def repacked(data: bytes, clock: Clock) -> bytes:
    """The package with every part read through once, as a new stored ZIP, or
    :class:`SourceFileSkipped` when it is not a ZIP or breaks a rule of the module doc.

    Why: Python's ``zipfile`` reading a part whole (as python-docx does) inflates *all*
    its compressed data in one call and only then cuts it at the declared size, so a part
    that declares 1,000 bytes and inflates to 500 MB took 990 MB before failing its CRC
    (a 64 MiB file could ask for 60 GB). Read in 1 MiB pieces, a part inflates to at most
    its declared size, checked against :data:`MAX_UNPACKED_BYTES` beforehand and its CRC
    at the end; python-docx then reads exactly those bytes. Parts are compressed only as
    Word writes them (stored or deflated): ``zipfile`` inflates bzip2 and LZMA without a
    bound on each piece."""
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        raise SourceFileSkipped(f"malformed DOCX: not a ZIP package ({e})"[:300]) from e
    out = io.BytesIO()
    try:
        with package, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as clean:
            infos = _parts(package.infolist())
            if not any(i.filename == TYPES_PART for i in infos):
                raise SourceFileSkipped(
                    f"malformed DOCX: no main document part (the package has no {TYPES_PART})"
                )
            _check_sizes(package, infos)
            for info in infos:
                clock.check()
                clean.writestr(info.filename, _read_part(package, info, clock))
    except _UNPACK_ERRORS as e:
        # a CRC that does not match, data that ends early, an encrypted part, bad deflate data
        raise SourceFileSkipped(f"malformed DOCX: a part cannot be unpacked ({e})"[:300]) from e
    return out.getvalue()


def _parts(infos: list[zipfile.ZipInfo]) -> list[zipfile.ZipInfo]:
    """The items that are parts (directory items left out), judged by count and name."""
    if len(infos) > MAX_PARTS:
        raise SourceFileSkipped(
            f"DOCX with {len(infos)} ZIP items, more than the {MAX_PARTS} limit "
            "(Word writes a dozen and one a picture)"
        )
    parts = [i for i in infos if not i.filename.endswith("/")]
    seen: set[str] = set()
    for info in parts:
        name = info.filename
        segments = name.split("/")
        if name.startswith("/") or "\\" in name or any(s in ("", ".", "..") for s in segments):
            raise SourceFileSkipped(f"malformed DOCX: {name!r} is not a part name"[:300])
        if name.lower() in seen:
            raise SourceFileSkipped(f"malformed DOCX: two parts named {name!r}"[:300])
        seen.add(name.lower())
    return parts


def _check_sizes(package: zipfile.ZipFile, infos: Any) -> None:
    """The declared sizes against the limits (a part read in pieces never yields more than
    it declares, and one that yields less fails), and each part's compression (first:
    the types part is read to find the XML parts)."""
    for info in infos:
        if info.compress_type not in _METHODS:
            raise SourceFileSkipped(
                f"DOCX part {info.filename!r} compressed with method {info.compress_type} "
                "(Word writes parts stored or deflated)"[:300]
            )
    unpacked = sum(i.file_size for i in infos)
    if unpacked > MAX_UNPACKED_BYTES:
        raise SourceFileSkipped(
            f"DOCX whose parts unpack to {unpacked} bytes, more than the "
            f"{MAX_UNPACKED_BYTES // (1024 * 1024)} MiB limit"
        )
    xml_types = _xml_parts(package, infos)
    xml = sum(
        i.file_size
        for i in infos
        if i.filename.lower().endswith((".xml", ".rels")) or i.filename in xml_types
    )
    if xml > MAX_XML_BYTES:
        raise SourceFileSkipped(
            f"DOCX whose XML parts unpack to {xml} bytes, more than the "
            f"{MAX_XML_BYTES // (1024 * 1024)} MiB limit"
        )


def _xml_parts(package: zipfile.ZipFile, infos: Any) -> set[str]:
    """The parts ``[Content_Types].xml`` declares XML (a content type ending in ``xml``), by
    part name or by extension: python-docx parses a part by its declared type, whatever
    its name, so ``word/document.bin`` of type ``…document.main+xml`` counts to the XML
    limit too. A types part declaring more than 1 MiB (Word's are a few KB) is refused:
    skipping it would let the renamed part through again; one that cannot be parsed names
    none here (python-docx refuses the package itself)."""
    types = next((i for i in infos if i.filename == "[Content_Types].xml"), None)
    if types is None:
        return set()
    if types.file_size > _CHUNK:
        raise SourceFileSkipped(
            f"DOCX whose [Content_Types].xml unpacks to {types.file_size} bytes, more than "
            "1 MiB (Word writes a few KB)"
        )
    by_name: dict[str, str] = {}
    by_ext: dict[str, str] = {}
    try:
        from docx.oxml import parse_xml

        for el in parse_xml(_read_part(package, types, None)):
            tag = str(el.tag).rsplit("}", 1)[-1]
            if tag == "Override":
                by_name[str(el.get("PartName", "")).lower()] = str(el.get("ContentType", ""))
            elif tag == "Default":
                by_ext[str(el.get("Extension", "")).lower()] = str(el.get("ContentType", ""))
    except Exception:  # unreadable types: python-docx refuses the package itself
        return set()

    def declared(name: str) -> str:
        base = name.rsplit("/", 1)[-1]
        ext = base.rsplit(".", 1)[-1].lower() if "." in base else ""
        return by_name.get("/" + name.lower(), by_ext.get(ext, ""))

    return {i.filename for i in infos if declared(i.filename).lower().endswith("xml")}


def _read_part(package: zipfile.ZipFile, info: zipfile.ZipInfo, clock: Clock | None) -> bytes:
    """One part's bytes, inflated 1 MiB at a time (``zipfile`` stops at the declared size
    and checks the CRC), the clock read after each MiB."""
    pieces = []
    with package.open(info) as part:
        while piece := part.read(_CHUNK):
            pieces.append(piece)
            if clock is not None:
                clock.check()
    return b"".join(pieces)
