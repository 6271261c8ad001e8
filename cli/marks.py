"""How a claim's verdict is marked wherever the CLI prints claims (`aborist query`,
`aborist verify`): one rendering, so the same claim reads the same in both."""

from __future__ import annotations

__all__ = ["claim_mark"]


def claim_mark(verified: bool, grade: str | None) -> str:
    """``✓ verified`` (found word for word), ``~ supported`` (supported, not verbatim) or
    ``✗ unsupported``."""
    if verified and grade == "verbatim":
        return "✓ verified"
    return "~ supported" if verified else "✗ unsupported"
