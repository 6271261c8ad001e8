"""Canonical JSON (RFC 8785, JSON Canonicalization Scheme) for everything that is hashed.

The ``rfc8785`` package implements the serialization; this module adds the checks that
turn its failures (NaN, infinity, non-string keys, unsupported types) into one
:class:`~ledger.errors.PayloadError` that names the offending path.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

import rfc8785

from ledger.errors import PayloadError

__all__ = ["canonical_json", "canonical_string", "canonical_text", "sha256_hex"]

_MAX_SAFE_INT = 2**53 - 1
_FIXED_MIN = 1e-4
_FIXED_MAX = 1e16
_HIGH = re.compile("[\ud800-\U0010ffff]")


def _walk(value: Any, path: str) -> tuple[Any, bool]:
    """Validate ``value`` for JCS; return it with integral floats made ints (JCS writes
    ``1.0`` as ``1``) and whether the fast serializer is exact for it (see
    :func:`canonical_json`)."""
    if value is None or isinstance(value, (bool, str)):
        return value, True
    if isinstance(value, int):
        if abs(value) > _MAX_SAFE_INT:
            raise PayloadError(
                f"integer at {path} is outside the I-JSON range (|n| <= 2**53-1): {value}"
            )
        return value, True
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise PayloadError(
                f"{value!r} at {path} has no JSON representation (RFC 8785 §3.2.2.3)"
            )
        if value.is_integer() and abs(value) < _FIXED_MAX:
            return int(value), True
        return value, _FIXED_MIN <= abs(value) < _FIXED_MAX
    if isinstance(value, dict):
        out = {}
        fast = True
        for key, item in value.items():
            if not isinstance(key, str):
                raise PayloadError(
                    f"key {key!r} at {path} is a {type(key).__name__}; "
                    "JSON object keys must be strings"
                )
            out[key], ok = _walk(item, f"{path}.{key}")
            fast = fast and ok and not _HIGH.search(key)
        return out, fast
    if isinstance(value, (list, tuple)):
        items = []
        fast = True
        for i, item in enumerate(value):
            norm, ok = _walk(item, f"{path}[{i}]")
            items.append(norm)
            fast = fast and ok
        return items, fast
    raise PayloadError(f"value at {path} of type {type(value).__name__} is not JSON-serializable")


class _NotSimple(Exception):
    """The value needs the careful walk: an error to name, or a type beyond plain JSON."""


_NORMALIZE = 1  # an integral float somewhere: JCS writes it as an int, json.dumps does not
_SLOW = 2  # a float or a key the fast serializer would not write as JCS does


def _scan(value: Any) -> int:
    """Which of :data:`_NORMALIZE` / :data:`_SLOW` apply to ``value``, for plain
    ``dict``/``list``/``tuple``/``str``/``int``/``float``/``bool``/``None`` values.

    Payloads are canonicalized on every append and replay compares thousands of them, so
    this only reads: no copy, no path per node, and scalar members are checked without a
    call. Any problem, or any other type, raises :class:`_NotSimple` and :func:`_walk`
    takes over to name it."""
    t = type(value)
    if t is dict:
        flags = 0
        for key, item in value.items():
            if type(key) is not str:
                raise _NotSimple
            if not key.isascii() and _HIGH.search(key):
                flags |= _SLOW
            ti = type(item)
            if ti is str or ti is bool or item is None:
                continue
            if ti is int and -_MAX_SAFE_INT <= item <= _MAX_SAFE_INT:
                continue
            flags |= _scan(item)
        return flags
    if t is list or t is tuple:
        flags = 0
        for item in value:
            ti = type(item)
            if ti is str or ti is bool or item is None:
                continue
            if ti is int and -_MAX_SAFE_INT <= item <= _MAX_SAFE_INT:
                continue
            flags |= _scan(item)
        return flags
    if t is str or t is bool or value is None:
        return 0
    if t is int:
        if -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT:
            return 0
        raise _NotSimple
    if t is float:
        if value != value or value in (math.inf, -math.inf):
            raise _NotSimple
        if value.is_integer() and -_FIXED_MAX < value < _FIXED_MAX:
            return _NORMALIZE
        return 0 if _FIXED_MIN <= abs(value) < _FIXED_MAX else _SLOW
    raise _NotSimple


def _normalize(value: Any) -> Any:
    """A copy of ``value`` with its integral floats made ints (JCS writes ``1.0`` as
    ``1``); only called once :func:`_scan` accepted ``value``."""
    t = type(value)
    if t is float:
        return int(value) if value.is_integer() and -_FIXED_MAX < value < _FIXED_MAX else value
    if t is dict:
        return {key: _normalize(item) for key, item in value.items()}
    if t is list or t is tuple:
        return [_normalize(item) for item in value]
    return value


def _refuse(o: Any) -> Any:  # pragma: no cover - _scan/_walk admit only JSON types
    raise TypeError(f"{type(o).__name__} is not JSON-serializable")


# One C encoder, built once: ``json.dumps`` builds a new one on every call, which costs
# more than encoding a small object. ``markers=None`` skips the cycle check; a cyclic
# value never gets here (the recursive scan fails on it first).
_C_ENCODER = (
    c_make_encoder(None, _refuse, encode_basestring, None, ":", ",", True, False, False)
    if c_make_encoder is not None
    else None
)


def _dumps(value: Any) -> str:
    """``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``."""
    if _C_ENCODER is not None:
        return "".join(_C_ENCODER(value, 0))
    return json.dumps(  # pragma: no cover - CPython always has the C encoder
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


#: One string as JCS writes it (RFC 8785 §3.2.2.2), quotes included: the quote, the
#: backslash and the control characters escaped (``\b \t \n \f \r`` short, the others
#: ``\u00xx``), everything else as is: the stdlib's C ``encode_basestring``, which is what
#: the fast path of :func:`canonical_json` writes strings with. For serializers of a fixed
#: shape (event headers, DAG nodes) that write the punctuation themselves;
#: ``tests/ledger/test_canonical_fixed.py`` checks them against :func:`canonical_json`.
canonical_string: Callable[[str], str] = encode_basestring


def canonical_json(value: Any) -> bytes:
    """Return the RFC 8785 canonical UTF-8 bytes of ``value``.

    Most payloads take a fast path. Once every float prints the same in Python's ``repr``
    as in ECMAScript (integral floats become ints; other magnitudes must lie in
    [1e-4, 1e16), where both write plain notation with the shortest round-trip digits) and
    no object key holds a character at or above U+D800 (where UTF-16 order, which JCS sorts
    by, departs from code-point order), ``json.dumps(sort_keys=True, separators=(",",
    ":"), ensure_ascii=False)`` writes exactly the JCS bytes: the same escapes and the same
    member order. Anything else goes through the ``rfc8785`` package; a property test
    checks that both agree on random values. Raises :class:`PayloadError` for anything JSON
    cannot represent exactly.
    """
    try:
        flags = _scan(value)
    except _NotSimple:
        normalized, fast = _walk(value, "$")
    else:
        if not flags:
            return _utf8(_dumps(value))
        normalized, fast = (value, False) if flags & _SLOW else (_normalize(value), True)
    if fast:
        return _utf8(_dumps(normalized))
    try:
        return rfc8785.dumps(value)
    except UnicodeEncodeError as e:
        raise _surrogate(e) from e
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as e:  # pragma: no cover
        raise PayloadError(f"payload cannot be canonicalized: {e}") from e


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise _surrogate(e) from e


def _surrogate(e: UnicodeEncodeError) -> PayloadError:
    """A string holding a lone surrogate (``"\\ud800"`` from a JSON escape) is no Unicode
    text: it has no UTF-8 bytes, so no canonical form and no hash."""
    return PayloadError(
        f"payload holds a lone surrogate (U+{ord(e.object[e.start]):04X}), which is not "
        "Unicode text and has no UTF-8 form"
    )


def canonical_text(value: Any) -> str:
    """Canonical JSON as ``str`` (what the ``payload`` column stores)."""
    return canonical_json(value).decode("utf-8")


def sha256_hex(data: bytes) -> str:
    """Lower-case hex sha256, the only hash function the ledger uses."""
    return hashlib.sha256(data).hexdigest()
