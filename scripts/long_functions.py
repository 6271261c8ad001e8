"""List every function of ``aborist/``, ``ledger/`` and ``cli/`` longer than the house's
limit (80 lines, docs/architecture.md), read from the code.

A function's length runs from its ``def`` to its last line (decorators, such as a click
command's options, are declarations, not its body). A long function may stay when a
comment block directly above it (above its decorators) starts ``# long: <reason>``. Each
one is printed as ``path:line name length`` and either ``justified: <reason>`` or ``NOT
JUSTIFIED``; ``--check`` exits 1 when any is not.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("aborist", "ledger", "cli")
LIMIT = 80
MARK = "# long:"


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _reason(lines: list[str], first: int) -> str | None:
    """The reason of the comment block ending just above line ``first`` (1-based) when
    the block starts with ``# long:``, or None."""
    block: list[str] = []
    i = first - 2
    while i >= 0 and lines[i].strip().startswith("#"):
        block.insert(0, lines[i].strip())
        i -= 1
    if not block or not block[0].startswith(MARK):
        return None
    text = " ".join([block[0][len(MARK) :], *(b.lstrip("#") for b in block[1:])])
    return " ".join(text.split()) or None


def long_functions(root: Path = ROOT) -> list[tuple[str, int, str, int, str | None]]:
    """``(path, line, name, length, reason)`` of every function over :data:`LIMIT` lines."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            lines = text.splitlines()
            for fn in _functions(ast.parse(text, filename=str(path))):
                first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
                length = (fn.end_lineno or fn.lineno) - fn.lineno + 1
                if length > LIMIT:
                    rel = path.relative_to(root).as_posix()
                    found.append((rel, fn.lineno, fn.name, length, _reason(lines, first)))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if any is unjustified")
    args = parser.parse_args(argv)
    found = long_functions()
    for path, line, name, length, reason in found:
        why = f"justified: {reason}" if reason else "NOT JUSTIFIED"
        print(f"{path}:{line} {name} {length} lines — {why}")
    unjustified = sum(1 for *_, reason in found if not reason)
    print(f"{len(found)} function(s) over {LIMIT} lines, {unjustified} not justified")
    return 1 if args.check and unjustified else 0


if __name__ == "__main__":
    sys.exit(main())
