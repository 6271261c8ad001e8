"""Text columns that are not UTF-8: a row an insider wrote around the library.

SQLite stores whatever bytes a raw write gives a TEXT column (``CAST(X'FF' AS TEXT)``), and
its Python driver refuses to hand such a value back: the whole statement fails with
``OperationalError: Could not decode to UTF-8 column …``, so a scan of the ledger would end
in a driver error instead of a finding at the row. :func:`fetch_rows` runs a statement
the usual way and, only if that error comes up, once more with a decoder that keeps every
valid text as it is and gives each undecodable one as an :class:`UndecodableText`: the
text decoded with U+FFFD replacements (so every check can read it) that says it is not
what is stored. The envelope check names such a field (docs/ledger-format.md: every text
is UTF-8); hashes over its replacement text match no hash of the stored bytes.
PostgreSQL refuses invalid UTF-8 in a UTF8 database, so there the error cannot arise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = ["UndecodableText", "fetch_rows", "is_undecodable_error", "lenient_text"]


class UndecodableText(str):
    """A stored text that is not valid UTF-8, decoded with replacement characters;
    ``raw`` is the stored bytes and ``reason`` says where the first bad byte is."""

    raw: bytes
    reason: str

    def __new__(cls, raw: bytes) -> UndecodableText:
        obj = super().__new__(cls, raw.decode("utf-8", "replace"))
        obj.raw = raw
        try:
            raw.decode("utf-8")
            obj.reason = "valid UTF-8"
        except UnicodeDecodeError as e:
            obj.reason = f"not valid UTF-8 (byte 0x{raw[e.start]:02x} at offset {e.start})"
        return obj

    def __reduce__(self) -> tuple[Any, ...]:  # survives pickling (replay's second process)
        return (UndecodableText, (self.raw,))


def lenient_text(raw: bytes) -> str:
    """A SQLite ``text_factory``: the text, or an :class:`UndecodableText`."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return UndecodableText(raw)


def is_undecodable_error(e: BaseException) -> bool:
    """Whether ``e`` is the SQLite driver refusing a TEXT value that is not UTF-8."""
    return type(e).__module__ == "sqlite3" and "Could not decode to UTF-8" in str(e)


_READS = re.compile(r"\s*(?:SELECT|WITH)\b", re.IGNORECASE)


def fetch_rows(cursor: Any, sql: str, params: Sequence[Any] | dict[str, Any]) -> list[Any] | None:
    """``cursor.execute(sql, params)`` and its rows (None for a statement without any);
    a TEXT value that is not UTF-8 comes back as an :class:`UndecodableText`. Only a read is
    run again to get it: a statement that writes may have taken effect before its returned
    row failed to decode, and running it twice would write twice."""
    try:
        cursor.execute(sql, params)
        return None if cursor.description is None else cursor.fetchall()
    except Exception as e:
        if not is_undecodable_error(e) or not _READS.match(sql):
            raise
    conn = cursor.connection
    factory = conn.text_factory
    conn.text_factory = lenient_text
    try:
        cursor.execute(sql, params)
        return None if cursor.description is None else cursor.fetchall()
    finally:
        conn.text_factory = factory
