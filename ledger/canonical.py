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
from typing import Any

import rfc8785

from ledger.errors import PayloadError

__all__ = ["canonical_json", "canonical_text", "sha256_hex"]

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


def _quick(value: Any) -> tuple[Any, bool]:
    """:func:`_walk` for plain ``dict``/``list``/``str``/``int``/``float``/``bool``/``None``
    values, without building a path per node (payloads are walked on every append). Any
    problem, or any other type, raises :class:`_NotSimple` and :func:`_walk` takes over."""
    t = type(value)
    if t is str or t is bool or value is None:
        return value, True
    if t is int:
        if -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT:
            return value, True
        raise _NotSimple
    if t is float:
        if value != value or value in (math.inf, -math.inf):
            raise _NotSimple
        if value.is_integer() and -_FIXED_MAX < value < _FIXED_MAX:
            return int(value), True
        return value, _FIXED_MIN <= abs(value) < _FIXED_MAX
    if t is dict:
        out = {}
        fast = True
        for key, item in value.items():
            if type(key) is not str:
                raise _NotSimple
            if not key.isascii() and _HIGH.search(key):
                fast = False
            if type(item) is str:  # the common leaf, without a call
                out[key] = item
                continue
            out[key], ok = _quick(item)
            fast = fast and ok
        return out, fast
    if t is list or t is tuple:
        items = []
        fast = True
        for item in value:
            if type(item) is str:
                items.append(item)
                continue
            norm, ok = _quick(item)
            items.append(norm)
            fast = fast and ok
        return items, fast
    raise _NotSimple


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
        normalized, fast = _quick(value)
    except _NotSimple:
        normalized, fast = _walk(value, "$")
    if fast:
        return json.dumps(
            normalized, sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode("utf-8")
    try:
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as e:  # pragma: no cover
        raise PayloadError(f"payload cannot be canonicalized: {e}") from e


def canonical_text(value: Any) -> str:
    """Canonical JSON as ``str`` (what the ``payload`` column stores)."""
    return canonical_json(value).decode("utf-8")


def sha256_hex(data: bytes) -> str:
    """Lower-case hex sha256, the only hash function the ledger uses."""
    return hashlib.sha256(data).hexdigest()
