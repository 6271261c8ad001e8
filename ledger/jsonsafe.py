"""The one JSON parse for everything read back from a ledger or a bundle: bounded in size
and depth, strict about duplicate keys, and (for payloads) exact about RFC 8785 form.

A ledger is append-only, so a row written by raw SQL stays for good: whatever it holds,
reading it must end in a finding, never a ``RecursionError`` or an unbounded allocation.
Every reader therefore goes through this module (docs/ledger-format.md, "Payload"):

* :func:`parse_json` for files a user hands in (bundles, checkpoints): at most
  ``max_bytes`` of UTF-8, nested at most :data:`MAX_DEPTH` levels, no duplicate object
  keys, no ``NaN`` / ``Infinity`` (not JSON, RFC 8259 §6);
* :func:`parse_canonical` for event payloads: the same bounds, and the text must be its
  own RFC 8785 serialization (``payload == JCS(parse(payload))``). Duplicate keys fail
  that test too (two parsers may keep different members), and are named as such.

The depth is checked *before* the stdlib's recursive C scanner sees the text: a text with
no more than :data:`MAX_DEPTH` brackets cannot nest deeper (the common case, two
``str.count`` calls); otherwise the brackets outside strings are counted. Every refusal is
one :class:`JSONRefusedError` (a :class:`~ledger.errors.PayloadError`, hence a
``ValueError``) whose ``reason`` is the finding's text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any, BinaryIO

import orjson
import rfc8785

from ledger.canonical import _dumps, canonical_text
from ledger.errors import PayloadError

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_PAYLOAD_BYTES",
    "CanonicalMemo",
    "JSONRefusedError",
    "check_bounds",
    "parse_canonical",
    "parse_json",
    "read_bounded",
]

#: Deepest nesting of arrays and objects accepted anywhere (pipeline payloads nest < 10).
MAX_DEPTH = 64
#: Largest payload, in UTF-8 bytes (large texts go to blobs; payloads hold their hashes).
MAX_PAYLOAD_BYTES = 8 * 1024 * 1024
#: Largest JSON file read (a bundle carries its run's blobs, base64-encoded).
MAX_FILE_BYTES = 1024 * 1024 * 1024


def read_bounded(f: BinaryIO, limit: int) -> bytes | None:
    """At most ``limit`` bytes of the open binary file ``f``, or ``None`` when it holds
    more. A pipe or a device (``/dev/zero``) has no size to check before reading, so a
    file named on a command line is read this way, never whole."""
    data = f.read(limit + 1)
    return None if len(data) > limit else data


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DELTA = {"[": 1, "{": 1, "]": -1, "}": -1}
_HIGH = re.compile("[\ud800-\U0010ffff]")
_MAX_SAFE_INT = 2**53 - 1
#: A number kept as its token by :func:`_exact`, as the stdlib's encoder writes it.
_PLACEHOLDER = re.compile(r'"\\u0000(\d+)\\u0000"')


class JSONRefusedError(PayloadError):
    """A text the bounded parse refuses; ``reason`` says why, for a finding."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _depth(text: str) -> int:
    """The deepest nesting of ``[`` / ``{`` outside strings (an upper bound for a text
    that is not JSON, which the parse then refuses anyway)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_DELTA.__getitem__, brackets)), default=0)


def check_bounds(text: str, *, max_bytes: int = MAX_PAYLOAD_BYTES, what: str = "payload") -> None:
    """Refuse ``text`` if it is not a ``str``, is longer than ``max_bytes`` in UTF-8 or
    nests deeper than :data:`MAX_DEPTH`; cheap for the texts the ledger writes."""
    _check_size(text, max_bytes, what)
    if _may_nest_deep(text):
        _check_depth(text, what)


def _may_nest_deep(text: str) -> bool:
    """Whether ``text`` has more brackets than :data:`MAX_DEPTH` (else it cannot nest
    deeper)."""
    return text.count("[") + text.count("{") > MAX_DEPTH


def _check_depth(text: str, what: str) -> None:
    depth = _depth(text)
    if depth > MAX_DEPTH:
        raise JSONRefusedError(f"{what} nests {depth} levels deep; at most {MAX_DEPTH}")


def _nesting(value: Any) -> int:
    """How deep ``value`` (a parsed JSON value) nests: the depth :func:`_depth` finds in
    its text, counted level by level without recursion."""
    depth, level = 0, [value] if type(value) in (dict, list) else []
    while level:
        depth += 1
        below: list[Any] = []
        for v in level:
            below.extend(v.values() if type(v) is dict else v)
        level = [v for v in below if type(v) is dict or type(v) is list]
    return depth


_DEEPER_LINE = b"\n" + b" " * (2 * MAX_DEPTH)


def _beyond_max_depth(value: Any) -> bool:
    """Whether ``value`` nests deeper than :data:`MAX_DEPTH`, read off orjson's indented
    serialization (in C): each container's members sit two spaces further in, so the
    deepest container, at depth ``d``, starts a line indented ``2 * (d - 1)`` spaces (a
    string's newlines are escaped; only indentation starts a line). Past orjson's own
    limit (255 levels) it refuses to serialize: deeper still.

    No line indented ``2 * MAX_DEPTH`` spaces shows that nothing nests deeper. Such a line
    does not show the converse: the scalar members of a container at exactly
    ``MAX_DEPTH`` sit there too, so then the levels are counted (:func:`_nesting`)."""
    try:
        indented = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except TypeError:  # orjson.JSONEncodeError: recursion limit reached
        return True
    return _DEEPER_LINE in indented and _nesting(value) > MAX_DEPTH


def _check_size(text: str, max_bytes: int, what: str) -> None:
    if not isinstance(text, str):
        raise JSONRefusedError(f"{what} is {type(text).__name__}, not text")
    if len(text) * 4 > max_bytes:
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError:
            raise JSONRefusedError(f"{what} is not valid UTF-8 (a lone surrogate)") from None
        if size > max_bytes:
            raise JSONRefusedError(f"{what} is {size:,} bytes; at most {max_bytes:,}")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key!r}")
            seen.add(key)
    return out


_STRICT = json.JSONDecoder(object_pairs_hook=_unique, parse_constant=_no_constant)


def _jcs_int(s: str) -> int | float:
    """An integer as JCS reads it: beyond the I-JSON range (|n| <= 2**53 - 1), a double
    (which JCS then writes back as the text, or not)."""
    if len(s) < 16:
        return int(s)
    n = int(s)
    return n if -_MAX_SAFE_INT <= n <= _MAX_SAFE_INT else float(s)


_PLAIN = json.JSONDecoder(parse_int=_jcs_int, parse_constant=_no_constant)
# The C scanner behind ``JSONDecoder.raw_decode`` (``scan_once(text, index)``).
_scan_once = _PLAIN.scan_once  # type: ignore[attr-defined]


def _decode(decoder: json.JSONDecoder, text: str, what: str, *, exact: bool = True) -> Any:
    """``text`` decoded; with ``exact`` the value must span it all (no whitespace)."""
    try:
        if not exact:
            return decoder.decode(text)
        value, end = decoder.raw_decode(text)
        if end != len(text):
            raise ValueError(f"extra data at character {end}")
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise JSONRefusedError(f"{what} nests too deep to parse") from None
    except ValueError as e:
        raise JSONRefusedError(f"{what} is not valid JSON ({e})") from None
    return value


def parse_json(text: str, *, max_bytes: int = MAX_FILE_BYTES, what: str = "file") -> Any:
    """``json.loads(text)`` within the bounds, refusing duplicate keys and ``NaN``
    (whitespace around the value is allowed, as in a file)."""
    check_bounds(text, max_bytes=max_bytes, what=what)
    return _decode(_STRICT, text, what, exact=False)


@dataclass(slots=True)
class CanonicalMemo:
    """Texts :func:`parse_canonical` has shown to be their own RFC 8785 form by the fast
    proof (:func:`_shown_by_orjson`), for one reader of many payloads (a replay): such a
    text, met again, is only parsed (each time a value of its own).

    Sound on its own: the memo holds the texts themselves, so a text found in it is, byte
    for byte, one the proof accepted (a set lookup hashes the whole text and compares it
    whole on a match); nothing is keyed by a digest a row could lie about. Texts up to
    ``max_text`` characters are kept, ``max_chars`` in all (then it starts over)."""

    max_text: int = 64 * 1024
    max_chars: int = 64 * 1024 * 1024
    texts: set[str] = field(default_factory=set)
    chars: int = 0

    def add(self, text: str) -> None:
        if len(text) > self.max_text:
            return
        if self.chars + len(text) > self.max_chars:
            self.texts.clear()
            self.chars = 0
        self.texts.add(text)
        self.chars += len(text)


def parse_canonical(text: str, *, what: str = "payload", memo: CanonicalMemo | None = None) -> Any:
    """``text`` parsed, if it is its own RFC 8785 serialization; else
    :class:`JSONRefusedError` naming why (too large, too deep, not JSON, a duplicate key,
    or not canonical).

    The honest case costs one ``orjson`` parse and serialization and a few substring
    tests (:func:`_shown_by_orjson`). Anything that test does not show canonical takes
    the exact path: one C parse and one C serialization by the stdlib, compared with
    ``text``, when no number or character is of the kinds where that differs from JCS
    (see :func:`ledger.canonical.canonical_json`). Floats JCS writes otherwise are checked
    token by token (:func:`_exact`); a text with characters at or above U+D800 against
    :func:`~ledger.canonical.canonical_text`. With ``memo``, a text it holds is only
    parsed, and a text the fast proof shows is added to it."""
    if memo is not None and type(text) is str and text in memo.texts:
        return orjson.loads(text)
    _check_size(text, MAX_PAYLOAD_BYTES, what)
    deep = _may_nest_deep(text)
    high = not text.isascii() and _HIGH.search(text) is not None
    if not high:
        # orjson refuses more than 1,024 levels itself (no recursion error); the depth of
        # what it parsed is counted on the value, cheaper than on the text's brackets.
        shown = _shown_by_orjson(text)
        if shown is not _UNSHOWN:
            if deep and _beyond_max_depth(shown):
                depth = _nesting(shown)
                raise JSONRefusedError(f"{what} nests {depth} levels deep; at most {MAX_DEPTH}")
            if memo is not None:
                memo.add(text)
            return shown
    if deep:
        _check_depth(text, what)
    try:
        value, end = _scan_once(text, 0)
    except (StopIteration, ValueError):
        end = -1
    if end != len(text):
        value = _decode(_PLAIN, text, what)  # raises, naming what is wrong
    try:
        dumped: str | None = _dumps(value)
    except ValueError:  # a number past the double range (1e400)
        dumped = None
    # (An integer past I-JSON was read as a double, which dumps writes unlike the text.)
    if dumped == text and not high and not _odd_float(text):
        return value
    if not high:
        return _exact(text, value, what)
    return _walked(text, value, what)


#: What :func:`_shown_by_orjson` returns when it shows nothing (``None`` is a JSON value).
_UNSHOWN: Any = object()
_ORJSON_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER


def _shown_by_orjson(text: str) -> Any:
    """The value of ``text`` (no character at or above U+D800) if ``text`` is shown to be
    its own RFC 8785 form by ``orjson``, else :data:`_UNSHOWN` (not a refusal: the exact
    path decides).

    Shown means: ``orjson.dumps(orjson.loads(text))`` with sorted keys gives ``text``
    back, byte for byte, and ``text`` holds no float of the two kinds orjson writes
    unlike JCS (:func:`_odd_float`: an exponent, always signed, or an integral float
    such as ``1.0``). That proves ``text == JCS(parse(text))`` because each byte form of
    the output is JCS's (``tests/ledger/test_jsonsafe.py`` checks every one): strings are
    escaped exactly as JCS escapes them (checked over every code point); members are
    sorted by code point, which is UTF-16 order for characters below U+D800, the only
    ones here; integers are plain decimal, and with ``OPT_STRICT_INTEGER`` any past
    I-JSON (|n| > 2**53 - 1, which JCS reads as a double) refuses to serialize; a float
    with neither exponent nor ``.0`` is written in plain notation with the shortest
    digits that round-trip, as JCS (ECMAScript) writes it; the output has no whitespace.
    The parse's own leniencies cannot slip through: whatever orjson reads, its output is
    compact JSON with one member per key, so a duplicate key, whitespace, another escape
    or number form, or anything not JSON makes the output differ from ``text``. And the
    value handed back is what any correct parser reads from ``text``, since ``text`` is
    orjson's serialization of it."""
    try:
        value = orjson.loads(text)
        out = orjson.dumps(value, option=_ORJSON_OPTIONS)
    except (ValueError, TypeError, UnicodeError):  # not JSON, an integer past I-JSON, ...
        return _UNSHOWN
    same = out == text.encode("utf-8")
    written = text if same else out.decode("utf-8")
    if not _odd_float(written):  # no float orjson writes unlike JCS: ``out`` is JCS
        return value if same else _UNSHOWN
    return value if _jcs_floats(written) == text else _UNSHOWN


_DIGITS = frozenset("0123456789")
_MANTISSA = frozenset("0123456789.")
_CLOSERS = frozenset(",]}")


def _odd_spans(out: str) -> list[tuple[int, int]]:
    """Where ``out`` may hold a float of the two odd kinds: each maximal run of number
    characters around an ``e-`` / ``e+`` with digits on both sides, or ending in ``.0``
    before ``,`` ``]`` ``}`` or the end (found with ``str.find``; a run inside a string
    is found too, see :func:`_jcs_floats`)."""
    spans = []
    n = len(out)
    for needle in ("e-", "e+", ".0"):
        i = out.find(needle)
        while i >= 0:
            start = i
            while start > 0 and out[start - 1] in _MANTISSA:
                start -= 1
            if start > 0 and out[start - 1] == "-":
                start -= 1
            end = i + 2
            if needle == ".0":
                if start < i and (end == n or out[end] in _CLOSERS):
                    spans.append((start, end))
            else:
                while end < n and out[end] in _DIGITS:
                    end += 1
                if start < i and end > i + 2:
                    spans.append((start, end))
            i = out.find(needle, i + 2)
    spans.sort()
    return spans


def _jcs_floats(out: str) -> str:
    """orjson's output ``out`` with each float of the two odd kinds (:func:`_odd_spans`)
    written as JCS writes it.

    Compared with the text orjson parsed, this shows the text canonical even though
    orjson writes its floats otherwise (``0.000001``, ``1e-7``: a BM25 score), and it
    is sound although the search cannot tell a number from a string's content: a
    rewritten run and its replacement hold only digits, ``.``, ``-``, ``+`` and ``e``
    (no quote, no backslash), so the strings of the result lie where ``out``'s do; if
    one was changed, the text equal to the result would hold another string than
    ``out``, that is than the value parsed from that very text, which cannot be. So only
    number tokens were rewritten, each to the JCS form of the float orjson wrote (its
    shortest round trip), and the result is ``JCS(value)``. A run that reads as no
    float (inside a string) is left as it is."""
    parts, at = [], 0
    for start, end in _odd_spans(out):
        if start < at:  # overlapping runs (only inside a string): keep the first
            continue
        token = out[start:end]
        try:
            form = _jcs_number(float(token))
        except ValueError:
            form = None
        parts.append(out[at:start])
        parts.append(token if form is None else form)
        at = end
    parts.append(out[at:])
    return "".join(parts)


def _odd_float(text: str) -> bool:
    """Whether ``text``, as the stdlib's ``json.dumps`` or ``orjson`` wrote it, may hold
    a float JCS writes otherwise: an exponent (both always sign it) or an integral float
    (``1.0``, which JCS writes ``1``). Plain substring tests (the three of an integral
    float only when a ``.0`` occurs at all), each two-character one only when its rarer
    character occurs at all (a one-character test runs at memory speed, a two-character
    one several times slower); a hit inside a string only costs the exact path."""
    return (
        ("-" in text and "e-" in text) or ("+" in text and "e+" in text)
        or ("." in text and ".0" in text
            and (".0," in text or ".0]" in text or ".0}" in text or text.endswith(".0")))
    )  # fmt: skip


def _exact(text: str, value: Any, what: str) -> Any:
    """The exact test for a text with no character at or above U+D800 (where the
    stdlib's key order is JCS's). The text is parsed again with each float, and each
    integer past I-JSON, kept as its token in a placeholder string; ``text`` is canonical
    iff each such token is the JCS form of its number and the stdlib's compact, sorted
    serialization, with the tokens put back, is ``text`` itself. So a payload whose
    floats JCS writes unlike ``repr`` (``0.00001``) costs a second C parse and
    serialization, not a Python walk of the value."""
    if "\\u0000" in text:  # a string could pass for a placeholder: the walk decides
        return _walked(text, value, what)
    tokens: list[str] = []

    def keep(tok: str) -> str:
        tokens.append(tok)
        return f"\x00{len(tokens) - 1}\x00"

    def keep_int(tok: str) -> int | str:
        if len(tok) < 16:
            return int(tok)
        n = int(tok)
        return n if -_MAX_SAFE_INT <= n <= _MAX_SAFE_INT else keep(tok)

    decoder = json.JSONDecoder(parse_float=keep, parse_int=keep_int, parse_constant=_no_constant)
    kept = _decode(decoder, text, what)
    for tok in tokens:
        if _jcs_number(float(tok)) != tok:
            raise JSONRefusedError(f"{what} has the number {tok[:40]} not in its RFC 8785 form")
    dumped = _PLACEHOLDER.sub(lambda m: tokens[int(m.group(1))], _dumps(kept))
    if dumped != text:
        _refuse_form(text, dumped, what)
    return value


def _walked(text: str, value: Any, what: str) -> Any:
    """``text`` against :func:`~ledger.canonical.canonical_text` of ``value``."""
    try:
        canonical = canonical_text(value)
    except UnicodeEncodeError as e:
        bad = f"\\u{ord(e.object[e.start]):04x}"
        raise JSONRefusedError(f"{what} holds a lone surrogate ({bad}): no RFC 8785 form") from None
    except (PayloadError, ValueError) as e:
        raise JSONRefusedError(f"{what} has no RFC 8785 form ({e})") from None
    if canonical != text:
        _refuse_form(text, canonical, what)
    return value


def _refuse_form(text: str, dumped: str, what: str) -> None:
    """Raise the reason ``text`` is not ``dumped`` (its value's canonical form)."""
    try:
        dumped.encode("utf-8")
    except UnicodeEncodeError as e:
        bad = f"\\u{ord(e.object[e.start]):04x}"
        raise JSONRefusedError(f"{what} holds a lone surrogate ({bad}): no RFC 8785 form") from None
    dup = _duplicate_key(text)
    if dup is not None:
        raise JSONRefusedError(f"{what} has the key {dup!r} twice (no RFC 8785 form)")
    raise JSONRefusedError(f"{what} is not in its RFC 8785 form (JCS)")


def _jcs_number(f: float) -> str | None:
    """How JCS writes the double ``f`` (ECMAScript's Number::toString); None for NaN or
    an infinity, which it cannot write."""
    if not f.is_integer() and 1e-4 <= abs(f) < 1e16:
        return repr(f)  # shortest round trip, plain notation: the same in both
    try:
        return rfc8785.dumps(f).decode("ascii")
    except (rfc8785.CanonicalizationError, ValueError, TypeError):
        return None


def _duplicate_key(text: str) -> str | None:
    """The first key some object of ``text`` (valid JSON, within bounds) repeats."""
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> None:
        if not found:
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    found.append(key)
                    break
                seen.add(key)

    json.JSONDecoder(object_pairs_hook=pairs).decode(text)
    return found[0] if found else None
