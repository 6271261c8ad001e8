"""Export Python's language reference (``pydoc_data.topics``, shipped with CPython) to
one reStructuredText file per topic: the demo corpus every machine already has.

Usage: python scripts/export_pyref.py OUTDIR
"""

from __future__ import annotations

import sys
from pathlib import Path
from pydoc_data.topics import topics


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: export_pyref.py OUTDIR", file=sys.stderr)
        return 2
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, body in sorted(topics.items()):
        (out / f"{name}.rst").write_text(body.strip() + "\n", encoding="utf-8")
    print(
        f"exported {len(topics)} topics of the Python {sys.version.split()[0]} reference to {out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
