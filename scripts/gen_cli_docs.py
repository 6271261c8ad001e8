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


PREAMBLE = """
## Conventions

**Where data lives.** The ledger (`ledger.db`) and the shards (`shards/`) live in one data
home: `--home DIR` (on either CLI, before the command), else `$ABORIST_HOME`, else the
nearest `.aborist/` directory in the current directory or a parent (a project-local home,
as git finds `.git`), else `home` in the config file, else the per-user data directory
(`$XDG_DATA_HOME/aborist`, by default `~/.local/share/aborist` on Linux). The home is
created 0700 on first use, and the console scripts create every file 0600. The first
`aborist ingest`, `query` or `ask` creates and migrates the embedded SQLite ledger there
(under a lock, `ledger.db.lock`, so first runs started together take turns); a ledger
named by `--db` or `$ABORIST_DB_URL` (PostgreSQL) is created and upgraded with
`aborist-ledger migrate`.

**The ledger file.** Every command that opens the ledger (`query`, `ask`, `runs`, `show`,
`inspect`, `serve`, every `aborist-ledger` command but `migrate`) refuses an SQLite path
that exists and is not a ledger, before anything connects to it, in one line, and leaves
the file byte for byte as it was: an empty file (`… is an empty file, not a ledger; it was
left as it is (run `aborist-ledger migrate` to make a ledger there)`), a file that is not
SQLite (`… is not an SQLite database (nor a ledger); …`), and an SQLite database with no
ledger schema (another application's: `… is an SQLite database with no ledger schema;
…`). Connecting would have changed them: the ledger's first connection sets WAL mode,
which wrote an SQLite header into the empty file and the journal mode into the other
database. A path that does not exist is refused as before (`no ledger at …`), and no
file is created. **`aborist-ledger migrate` is the one command that makes a ledger** at a
path you name: a new file, an existing empty one (it holds nothing to lose), or an SQLite
database you mean to share with the ledger's tables; a file that is not SQLite is
refused by SQLite (`file is not a database`) and left as it is. The embedded ledger in
the data home is the one aborist makes itself: found empty (a first run stopped before
its migration), it is migrated by the next `ingest`, `query` or `ask`. An empty file
beside a `-wal` file that holds data is a database whose first commits are still in the
log, and is opened as one.

**Settings.** Each value comes from the first of: a flag, an `ABORIST_*` environment
variable, the TOML config file (`$ABORIST_CONFIG`, else `~/.config/aborist/config.toml`),
the default. The file's keys are `home`, `db_url`, `shard_dir`, `llm_base_url`,
`llm_model`, `llm_api_key`, `llm_timeout`, `shards` (a list: the shards `aborist query`
searches when no `--shard` is given) and `log_origin`; an unknown key or bad value is one
error line, and so is a file `$ABORIST_CONFIG` names that does not exist, and any config
file that cannot be read (a directory, no permission, not UTF-8) or is not valid TOML:
only the default file may be missing. A home or shard directory (`--home`,
`$ABORIST_HOME`, `$ABORIST_SHARD_DIR`, the file's `home` or `shard_dir`) that names a
file is one error line too, naming where it was set. `aborist config` shows every value and where it
came from.

**Model timeout.** `--llm-timeout SECONDS` (`$ABORIST_LLM_TIMEOUT`, `llm_timeout`; default
120) is a deadline on each attempt's whole exchange with the model server: connecting,
sending the request, and the response's headers and body together, however slowly they
arrive (each network read also waits at most that long; connecting at most 5 s). A timed
out attempt is retried like a 5xx, at most 3 attempts with 0.5 s and 1 s between them, so
a server that answers a byte at a time forever ends the run (`qa.run_failed` at stage
`model`, one error line, exit 1) after about three times the timeout.

```toml
db_url = "postgresql+psycopg://aborist@db.internal/aborist"
llm_base_url = "http://127.0.0.1:8000/v1"
llm_model = "NousResearch/Hermes-3-Llama-3.1-8B"
shards = ["handbook"]
```

**Output.** Human-readable output shows control characters escaped (`\\x1b`, `\\r`,
`\\u202e`): a question, a model answer or a file name cannot move the cursor, rewrite
a line or plant a hyperlink. `--json` output is exact.

**Errors.** Bad input is one line on stderr (`Error: ...`) and exit 1 (2 for usage
errors). With `--json`, stdout also gets one JSON object, `{"error": KIND, "detail":
MESSAGE}`: KIND is the error's class (`InputError`, `ModelError`, `NotMigratedError`,
`UsageError`, ...), MESSAGE the line stderr shows.

**Questions** are refused before anything is recorded when they are empty, longer than
10,000 characters, not valid text (bytes that are not UTF-8), or have nothing to search
for (only punctuation, or only common words such as "what is the"; write a keyword as
code, `` `with` ``, to ask about it).

**Shell completion** (click's): `eval "$(_ABORIST_COMPLETE=bash_source aborist)"` in
`~/.bashrc` (`zsh_source` for `~/.zshrc`, `fish_source` for fish), and the same with
`_ABORIST_LEDGER_COMPLETE` for `aborist-ledger`.
"""


def render() -> str:
    from cli.audit.ledger_cli import cli as ledger_cli
    from cli.main import cli as main_cli

    parts = [
        "# CLI reference\n",
        "Generated from each command's `--help` by `scripts/gen_cli_docs.py`; do not edit.\n",
        PREAMBLE,
    ]
    runner = CliRunner()
    for prog, group in (("aborist", main_cli), ("aborist-ledger", ledger_cli)):
        assert isinstance(group, click.Group)
        parts.append(f"\n## `{prog}`\n")
        for name in sorted(group.commands):
            command = group.commands[name]
            paths = [[name]]
            if isinstance(command, click.Group):
                paths += [[name, sub] for sub in sorted(command.commands)]
            for path in paths:
                result = runner.invoke(group, [*path, "--help"], prog_name=prog, terminal_width=100)
                title = " ".join([prog, *path])
                parts.append(f"\n### `{title}`\n\n```text\n{result.output.rstrip()}\n```\n")
    return "".join(parts)


def main(argv: list[str]) -> int:
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__.strip())
        return 0 if argv[1:] in (["-h"], ["--help"]) else 2
    out = Path(argv[1]) if len(argv) > 1 else ROOT / "docs" / "cli.md"
    out.write_text(render(), encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
