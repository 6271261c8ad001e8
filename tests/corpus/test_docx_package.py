"""A DOCX's package judged before python-docx reads it, under the reader's time limit
(docs/corpus.md, "DOCX"): too many ZIP items, names that are not part names, two items
naming one part, a ZIP bomb, unpacking past the limit. Each is one skipped file with one
reason; nothing is written to disk."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest

from aborist.corpus.readers import docx_package
from tests.corpus.test_hostile_files import (
    ROOT,
    _deflate_then_zeros,
    _docx_parts,
    _skip_reason,
    _texts,
    _zip,
    _zip_by_hand,
)


def _stored(parts: dict[str, bytes], extra: list[tuple[str, bytes]] = ()) -> bytes:  # type: ignore[assignment]
    """A ZIP of ``parts`` then ``extra`` items, stored; a name may repeat (``zipfile``
    warns and writes it)."""
    import warnings

    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name": the point of some tests
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as package:
            for name, body in [*parts.items(), *extra]:
                package.writestr(name, body)
    return out.getvalue()


def test_a_package_at_the_part_limit_is_read_and_one_past_it_is_refused() -> None:
    parts = _docx_parts()
    room = docx_package.MAX_PARTS - len(parts)
    at_limit = [(f"junk/{i}.bin", b"") for i in range(room)]
    assert _texts(_stored(parts, at_limit), "docx") == ["Hello docx."]
    over = _stored(parts, [*at_limit, ("junk/one-more.bin", b"")])
    assert _skip_reason(over, "docx") == (
        f"DOCX with {docx_package.MAX_PARTS + 1} ZIP items, more than the "
        f"{docx_package.MAX_PARTS} limit (Word writes a dozen and one a picture)"
    )


_CHILD = """
import sys, time
from pathlib import Path
from aborist.corpus.readers import SourceFileSkipped, extract_source
start = time.monotonic()
try:
    extract_source(Path(sys.argv[1]).read_bytes(), "docx")
    print("read", time.monotonic() - start)
except SourceFileSkipped as e:
    print(e.reason, "|", time.monotonic() - start)
"""


def test_six_hundred_thousand_parts_are_refused_before_any_is_unpacked(tmp_path: Path) -> None:
    """600,000 empty items (56 MB) took 30 s to repack, outside the 60 s limit, and were
    then read; now the count is judged as soon as ``zipfile`` has listed them."""
    path = tmp_path / "many.docx"
    parts = _docx_parts()
    members = [(n, b, 0, zlib.crc32(b), len(b)) for n, b in parts.items()]
    members.extend((f"j/{i}", b"", 0, 0, 0) for i in range(600_000))
    path.write_bytes(_zip_by_hand(members))
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True,
        timeout=120, check=False, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    reason, seconds = done.stdout.rsplit("|", 1)
    assert reason.strip() == (
        f"DOCX with {600_000 + len(parts)} ZIP items, more than the 10000 limit (Word "
        "writes a dozen and one a picture)"
    )
    assert float(seconds) < docx_package.DOCX_SECONDS


@pytest.mark.parametrize(
    "name", ["../../evil.txt", "word/../../x.xml", "/abs/evil.txt", "word\\evil.xml",
             "word//x.xml", "./word/x.xml"]
)  # fmt: skip
def test_an_item_whose_name_is_not_a_part_name_is_refused(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    data = _stored(_docx_parts(), [(name, b"<a/>")])
    assert _skip_reason(data, "docx") == f"malformed DOCX: {name!r} is not a part name"
    assert list(tmp_path.iterdir()) == []  # nothing extracted anywhere


@pytest.mark.parametrize("second", ["word/document.xml", "WORD/Document.XML"])
def test_two_items_naming_one_part_are_refused(second: str) -> None:
    """Part names compare case-insensitively (OPC); ``zipfile`` keeps the last of a name,
    another reader the first: two readers would read two documents."""
    hidden = b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
    hidden += b"<w:body><w:p><w:r><w:t>The other text.</w:t></w:r></w:p></w:body></w:document>"
    data = _stored(_docx_parts(), [(second, hidden)])
    assert _skip_reason(data, "docx") == f"malformed DOCX: two parts named {second!r}"


def test_directory_items_hold_no_part_and_are_left_out() -> None:
    """Some ZIP tools add ``word/``; it names no part, and the package reads as Word's."""
    data = _stored(_docx_parts(), [("word/", b""), ("customXml/", b"")])
    assert _texts(data, "docx") == ["Hello docx."]


def test_a_zip_bomb_xml_part_of_200_mb_is_refused_by_its_declared_size() -> None:
    """An XML part that truly inflates to 200 MB from 200 KB (ratio 1,000, its size and
    CRC honest): refused on the size it declares, before any of it is inflated."""
    parts = _docx_parts()
    document = parts.pop("word/document.xml")
    members = [(name, body, 0, zlib.crc32(body), len(body)) for name, body in parts.items()]
    crc, zero_mib = zlib.crc32(document), b"\0" * (1 << 20)
    for _ in range(200):
        crc = zlib.crc32(zero_mib, crc)
    size = len(document) + 200 * (1 << 20)
    bomb = _deflate_then_zeros(document, 200)
    members.append(("word/document.xml", bomb, 8, crc, size))
    data = _zip_by_hand(members)
    assert len(data) < 1024 * 1024 and size / len(data) > 200
    xml = size + sum(len(b) for n, b in parts.items() if n.endswith((".xml", ".rels")))
    assert _skip_reason(data, "docx") == (
        f"DOCX whose XML parts unpack to {xml} bytes, more than the 64 MiB limit"
    )


def test_a_part_that_lies_about_its_size_fails_its_crc_in_bounded_memory() -> None:
    parts = _docx_parts()
    members = []
    for name, body in parts.items():
        if name == "word/document.xml":
            packed = zlib.compressobj(9, zlib.DEFLATED, -15)
            bomb = packed.compress(b"\0" * (64 * 1024 * 1024)) + packed.flush()
            members.append((name, bomb, 8, zlib.crc32(body), len(body)))
        else:
            members.append((name, body, 0, zlib.crc32(body), len(body)))
    reason = _skip_reason(_zip_by_hand(members), "docx")
    assert reason.startswith("malformed DOCX: a part cannot be unpacked (Bad CRC-32"), reason


def test_unpacking_counts_to_the_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clock starts with the file, not after the repack: a package whose parts take
    long to unpack is stopped while they are unpacked, before python-docx sees it."""
    parts = _docx_parts()
    parts.update({f"word/media/p{i}.bin": os.urandom(64) for i in range(50)})
    data = _zip(parts)
    monkeypatch.setattr(docx_package, "DOCX_SECONDS", 0.0)
    opened: list[object] = []
    import docx

    monkeypatch.setattr(docx, "Document", lambda *a: opened.append(a))
    assert _skip_reason(data, "docx") == "DOCX whose text takes longer than 0 s to read"
    assert opened == []  # refused during the repack
