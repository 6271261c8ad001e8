"""What every command module shares: the ``--db`` and ``--json`` options, the one place
where library errors become one line on stderr and exit 1, and JSON file reading and
writing with clean messages."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from aborist.errors import AboristError
from aborist.settings import load_settings
from ledger.errors import LedgerError
from ledger.jsonsafe import MAX_FILE_BYTES, JSONRefusedError, parse_json
from ledger.store import Ledger

__all__ = [
    "clean_errors",
    "db_option",
    "emit_json",
    "json_option",
    "pipeline_ledger",
    "read_json_object",
    "write_text",
]

F = TypeVar("F", bound=Callable[..., Any])

DB_HELP = "Ledger database URL (default: $ABORIST_DB_URL, else SQLite under $ABORIST_HOME)."


def db_option(f: F) -> F:
    return click.option("--db", "db_url", metavar="URL", help=DB_HELP)(f)


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")(f)


@contextmanager
def clean_errors() -> Iterator[None]:
    """Domain and ledger errors become one line on stderr and exit 1, never a traceback."""
    try:
        yield
    except (AboristError, LedgerError) as e:
        raise click.ClickException(str(e)) from e


@contextmanager
def pipeline_ledger(db_url: str | None) -> Iterator[Ledger]:
    """The ledger named by ``--db`` / ``ABORIST_DB_URL`` / ``ABORIST_HOME``, opened with the
    pipeline's projections; open errors become one line."""
    from aborist.projections import open_ledger

    with clean_errors():
        lg = open_ledger(load_settings(db_url=db_url).ledger_url())
    try:
        yield lg
    finally:
        lg.close()


def emit_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False))


def read_json_object(
    path: Path, what: str, *, error: type[click.ClickException] = click.ClickException
) -> dict[str, Any]:
    """A JSON object from ``path``; anything else raises ``error`` naming the file
    (``click.BadParameter`` makes it a usage error, exit 2)."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise error(f"{path}: a {what} file is at most {MAX_FILE_BYTES:,} bytes")
        data = parse_json(path.read_text(encoding="utf-8"), what=f"the {what} file")
    except (OSError, UnicodeDecodeError) as e:
        raise error(f"{path}: not a {what} JSON file ({e})") from e
    except JSONRefusedError as e:
        raise error(f"{path}: not a {what} JSON file ({e.reason})") from e
    if not isinstance(data, dict):
        raise error(f"{path}: a {what} must be a JSON object")
    return data


def write_text(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise click.ClickException(f"cannot write {path}: {e.strerror or e}") from e
