"""Text made safe to print on a terminal: the one place control characters are escaped.

Questions, model answers, document titles, file names and ledger payloads come from
people and programs aborist does not control. Printed raw, an ESC sequence can erase a
line and write another (``\\x1b[2K\\r\\x1b[32mSTRICT``), move the cursor, set the window
title or plant an OSC 8 hyperlink; a bidirectional override can reorder what is shown.
Every human-readable line both CLIs print goes through :func:`printable`, which shows
such characters as Python-style escapes (``\\x1b``, ``\\r``, ``\\u202e``) instead of
obeying them. ``--json`` output is left exact: JSON escapes control characters itself,
and a program reading it wants the text as it is.
"""

from __future__ import annotations

__all__ = ["printable"]


def _escape(code: int) -> str:
    if code == 0x0D:
        return "\\r"
    if code == 0x0A:
        return "\\n"
    if code == 0x09:
        return "\\t"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


#: C0 controls and DEL, C1 controls (0x9b is a one-byte CSI), the bidirectional
#: embeddings, overrides and isolates, and lone surrogates (undecodable file-name bytes).
_UNSAFE = [
    *range(0x00, 0x20),
    *range(0x7F, 0xA0),
    0x061C,
    0x200E,
    0x200F,
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
    *range(0xD800, 0xE000),
]
_TABLE = {code: _escape(code) for code in _UNSAFE}
_MULTILINE = {k: v for k, v in _TABLE.items() if k not in (0x0A, 0x09)}


def printable(text: object, *, multiline: bool = False) -> str:
    """``text`` with every control character escaped. ``multiline`` keeps newlines and
    tabs (an answer's lines; ``\\r\\n`` counts as a newline); otherwise they are escaped
    too, so one value stays on its line (a question in a table)."""
    s = text if isinstance(text, str) else str(text)
    if s.isascii() and s.isprintable():
        return s
    if multiline:  # a Windows line end is a line end, not a carriage return to show
        return s.replace("\r\n", "\n").translate(_MULTILINE)
    return s.translate(_TABLE)
