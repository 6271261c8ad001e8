"""Break the one-line rule, then mend it: a hostile value of any length was echoed whole.

- A checkpoint file whose ``root`` (or ``tree_size``) is 3 MB of text: ``replay`` said so in
  one line of 3 MB on stderr.
- On SQLite a raw write can store a hash, a root or a ``created_at`` of any length (the
  column's width is not enforced): ``verify``, ``replay`` and ``rebuild`` printed the 2 MB
  value in their finding. PostgreSQL's ``varchar(64)`` refuses such a row.

Each finding's line now shows at most a few hundred characters of each value; ``--json``
keeps them as found. Both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy.exc import DBAPIError

from cli.audit.ledger_cli import cli
from ledger.tlog.proofs import checkpoint
from tests.audit.builders import Built
from tests.ledger.tamper import tamper

BIG = "a" * 2_000_000
#: Longer than any line a finding needs, far shorter than the value.
WIDE = 2_000


def _longest_line(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


@pytest.mark.parametrize("field", ["root", "tree_size"])
def test_a_huge_value_in_a_checkpoint_file_is_one_short_line(
    built: Built, tmp_path: Path, field: str
) -> None:
    body: dict[str, object] = {"tree_size": 1, "root": "ab" * 32}
    body[field] = "9" * 3_000_000 if field == "tree_size" else "a" * 3_000_000
    path = tmp_path / "cp.json"
    path.write_text(json.dumps(body))
    result = CliRunner().invoke(cli, ["replay", "--db", built.url, "--checkpoint", str(path)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.stderr.count("\n") == 1 and len(result.stderr) < WIDE, len(result.stderr)
    assert f"checkpoint {field}" in result.stderr and "…" in result.stderr


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE events SET hash = :v WHERE seq = 5",
        "UPDATE events SET payload_hash = :v WHERE seq = 5",
        "UPDATE checkpoints SET root = :v",
        "UPDATE checkpoints SET created_at = :v",
    ],
)
def test_a_huge_stored_value_is_one_short_line(built: Built, sql: str) -> None:
    lg = built.ledger
    checkpoint(lg)
    if lg.engine.dialect.name == "postgresql":  # the column's width is enforced there
        with pytest.raises(DBAPIError, match="too long"):
            tamper(lg, sql, v=BIG)
        return
    tamper(lg, sql, v=BIG)
    for command in ("verify", "replay", "rebuild"):
        result = CliRunner().invoke(cli, [command, "--db", built.url])
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), command
        longest = _longest_line(result.stdout + result.stderr)
        assert longest < WIDE, (command, longest)
    data = json.loads(CliRunner().invoke(cli, ["verify", "--db", built.url, "--json"]).output)
    assert BIG in json.dumps(data)  # the machine-readable report keeps the value as found
