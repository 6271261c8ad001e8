"""Write docs/cli.md from the commands' own --help (so the reference cannot drift:
tests/test_cli_docs.py fails when the file is stale).

Usage: python scripts/gen_cli_docs.py [OUT]
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def render() -> str:
    from cli.ledger_cli import cli as ledger_cli
    from cli.main import cli as main_cli

    parts = [
        "# CLI reference\n",
        "Generated from each command's `--help` by `scripts/gen_cli_docs.py`; do not edit.\n",
    ]
    runner = CliRunner()
    for prog, group in (("aborist", main_cli), ("aborist-ledger", ledger_cli)):
        assert isinstance(group, click.Group)
        parts.append(f"\n## `{prog}`\n")
        for name in sorted(group.commands):
            result = runner.invoke(group, [name, "--help"], prog_name=prog, terminal_width=100)
            parts.append(f"\n### `{prog} {name}`\n\n```text\n{result.output.rstrip()}\n```\n")
    return "".join(parts)


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else ROOT / "docs" / "cli.md"
    out.write_text(render(), encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
