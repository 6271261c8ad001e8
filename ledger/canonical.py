"""Canonical JSON (RFC 8785, JSON Canonicalization Scheme) for everything that is hashed.

The ``rfc8785`` package implements the serialization; this module adds the checks that
turn its failures (NaN, infinity, non-string keys, unsupported types) into one
:class:`~ledger.errors.PayloadError` that names the offending path.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import rfc8785

from ledger.errors import PayloadError

__all__ = ["canonical_json", "canonical_text", "sha256_hex"]

_MAX_SAFE_INT = 2**53 - 1


def _check(value: Any, path: str) -> None:
    if value is None or isinstance(value, (bool, str)):
        return
    if isinstance(value, int):
        if abs(value) > _MAX_SAFE_INT:
            raise PayloadError(
                f"integer at {path} is outside the I-JSON range (|n| <= 2**53-1): {value}"
            )
        return
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise PayloadError(
                f"{value!r} at {path} has no JSON representation (RFC 8785 §3.2.2.3)"
            )
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise PayloadError(
                    f"key {key!r} at {path} is a {type(key).__name__}; "
                    "JSON object keys must be strings"
                )
            _check(item, f"{path}.{key}")
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check(item, f"{path}[{i}]")
        return
    raise PayloadError(f"value at {path} of type {type(value).__name__} is not JSON-serializable")


def canonical_json(value: Any) -> bytes:
    """Return the RFC 8785 canonical UTF-8 bytes of ``value``.

    Raises :class:`PayloadError` for anything JSON cannot represent exactly.
    """
    _check(value, "$")
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
