"""What every command module shares: the ``--db`` and ``--json`` options, the one place
where library errors become one line on stderr and exit 1 (and, under ``--json``, a JSON
object on stdout too), the embedded ledger created on first use, and JSON file reading
and writing with clean messages."""

from __future__ import annotations

import errno
import json
import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

import click

from aborist.errors import AboristError
from aborist.settings import (
    FILE_MODE,
    Settings,
    load_settings,
    prepare_home,
    resolve_settings,
    use_flags,
)
from cli.term import printable
from ledger.errors import LedgerError
from ledger.jsonsafe import MAX_FILE_BYTES, JSONRefusedError, parse_json, read_bounded
from ledger.store import Ledger

__all__ = [
    "SQL_INT_MAX",
    "AboristGroup",
    "PathArg",
    "Seconds",
    "clean_errors",
    "db_option",
    "embedded_ledger",
    "emit_json",
    "home_option",
    "json_errors",
    "json_option",
    "pipeline_ledger",
    "read_json_object",
    "read_text_capped",
    "seq_range",
    "write_text",
]

F = TypeVar("F", bound=Callable[..., Any])

#: The largest integer SQLite and PostgreSQL bind: a larger seq, size or limit reached the
#: driver and was an OverflowError traceback ("Python int too large to convert to SQLite
#: INTEGER").
SQL_INT_MAX = 2**63 - 1


def seq_range(min: int = 0) -> click.IntRange:
    """An integer option or argument that is bound into SQL: ``min`` up to :data:`SQL_INT_MAX`."""
    return click.IntRange(min=min, max=SQL_INT_MAX)


class Seconds(click.FloatRange):
    """A number of seconds in a range, and finite: click's bounds compare false for NaN,
    so ``--llm-timeout nan`` passed ``0 < x <= 86400`` and ended the query in a
    ``ValueError`` traceback from the socket (``serve --header-timeout nan`` answered
    every slow head 408 at once)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number of seconds.", param, ctx)
        return rv


DB_HELP = "Ledger database URL (default: $ABORIST_DB_URL, else SQLite in the data home)."


def db_option(f: F) -> F:
    return click.option("--db", "db_url", metavar="URL", help=DB_HELP)(f)


HOME_HELP = (
    "Data directory holding the ledger and shards (default: $ABORIST_HOME, else a "
    "project's .aborist/ found from here upwards, else the config file's home, else the "
    "per-user data directory; `aborist config` shows which)."
)


class PathArg(click.Path):
    """``click.Path`` that refuses an empty value: ``Path("")`` is ``.``, so an unset shell
    variable (``aborist ingest "$DOCS"``) would otherwise mean the current directory."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("is empty; name a file or directory ('.' for here)", param, ctx)
        return super().convert(value, param, ctx)


def _use_home(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """Record ``--home`` for the command's settings, and read the config file now, so a
    broken one is one line before anything runs."""
    use_flags(home=value)
    with clean_errors():
        resolve_settings()
    return value


def home_option(f: F) -> F:
    """``--home DIR`` on a command group: every command of the invocation uses it."""
    return click.option(
        "--home",
        type=PathArg(file_okay=False, path_type=Path),
        metavar="DIR",
        expose_value=False,
        callback=_use_home,
        help=HOME_HELP,
    )(f)


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")(f)


@contextmanager
def clean_errors() -> Iterator[None]:
    """Domain and ledger errors become one line on stderr and exit 1, never a traceback
    (control characters in the message escaped: it may quote a question or a file name)."""
    try:
        yield
    except (AboristError, LedgerError) as e:
        raise click.ClickException(printable(str(e))) from e


#: Set while a command runs with ``--json`` (by the option's callback, :func:`json_errors`).
_JSON_MODE: ContextVar[bool] = ContextVar("aborist_json_mode", default=False)


def _note_json(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    if value:
        _JSON_MODE.set(True)
    return value


def json_errors(group: click.Group) -> None:
    """Make every ``--json`` option of ``group``'s commands (``as_json``) mark the command
    as JSON mode, in which :class:`AboristGroup` also prints errors as JSON."""
    for command in group.commands.values():
        if isinstance(command, click.Group):
            json_errors(command)
        for param in command.params:
            if param.name == "as_json" and param.callback is None:
                param.callback = _note_json


def _error_kind(e: click.ClickException) -> str:
    if isinstance(e, click.UsageError):
        return "UsageError"
    cause = e.__cause__
    return type(cause).__name__ if cause is not None else "Error"


#: An ``OSError`` of these while a command runs is a write that could not be done (a full
#: disk or quota, a file too large, an I/O error): one error line, not a traceback.
WRITE_FAILURES = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


class AboristGroup(click.Group):
    """A command group whose commands' error lines are shown escaped
    (:func:`cli.term.printable`), and, under ``--json``, also printed as one JSON object
    ``{"error": <kind>, "detail": <message>}`` on stdout: a script reading stdout is not
    left with nothing (docs/cli.md, "Errors")."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Each command's whole first sentence, wrapped, not cut at 45 characters."""
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit=1000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        json_errors(self)  # here, so commands added after the group's module loads count
        token = _JSON_MODE.set(False)
        try:
            try:
                return super().invoke(ctx)
            except OSError as e:
                if e.errno not in WRITE_FAILURES:
                    raise
                # Printing to a full disk (``> /dev/full``, a quota): not a traceback.
                where = f" {e.filename}" if e.filename else " the output"
                raise click.ClickException(f"cannot write{where}: {e.strerror or e}") from e
        except click.ClickException as e:
            # Every error line, whoever raised it; click declares the attribute Final but
            # shows whatever it holds when the exception reaches its handler.
            e.message = printable(e.message)  # type: ignore[misc]
            if _JSON_MODE.get():
                detail = e.format_message()
                with suppress(OSError):  # stdout itself may be what failed
                    click.echo(json.dumps({"error": _error_kind(e), "detail": detail}))
            raise
        finally:
            _JSON_MODE.reset(token)


def embedded_ledger(settings: Settings) -> Settings:
    """Ready the data home for a command that writes: create it (0700) on the first run,
    saying where data is kept, and create and migrate the embedded SQLite ledger there
    when it does not exist yet. A ledger named by ``--db`` / ``db_url`` (PostgreSQL, or
    any file given explicitly) is left alone: ``aborist-ledger migrate`` creates and
    upgrades those."""
    if settings.db_url:
        return settings
    with clean_errors():
        created = prepare_home(settings)
    if created is not None:
        click.echo(
            printable(f"aborist: keeping data in {created} (first run; `aborist config` "
                      "shows where every setting comes from)"),
            err=True,
        )  # fmt: skip
    path = settings.data_home() / "ledger.db"
    # Two first runs at once (two terminals, a script starting workers) both see no
    # ledger. SQLite's BEGIN IMMEDIATE already makes their migrations take turns (the
    # second finds the heads recorded and does nothing), and in WAL mode the file stays
    # empty until the first commits, so neither opens it half-made; the lock makes the
    # check, the create and the migration one step without leaning on either.
    with _setup_lock(path):
        try:
            fresh = not path.exists() or path.stat().st_size == 0
            if fresh:  # created 0600 before SQLite opens it (its -wal/-shm files follow)
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY, FILE_MODE))
        except OSError as e:
            raise click.ClickException(printable(f"cannot create {path}: {e.strerror or e}")) from e
        if fresh:
            _migrate_embedded(settings, path)
    return settings


SETUP_LOCK_TIMEOUT_S = 120.0


@contextmanager
def _setup_lock(ledger: Path) -> Iterator[None]:
    """Hold ``flock`` on ``ledger.db.lock`` beside the embedded ledger (created 0600 and
    kept: deleting it would race with a waiter; the kernel frees the lock when its
    holder exits, even when killed). Waits up to :data:`SETUP_LOCK_TIMEOUT_S`."""
    import fcntl
    import time

    lock_path = ledger.with_name(ledger.name + ".lock")
    try:
        fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, FILE_MODE)
    except OSError as e:
        raise click.ClickException(
            printable(f"cannot create {lock_path}: {e.strerror or e}")
        ) from e
    try:
        deadline = time.monotonic() + SETUP_LOCK_TIMEOUT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise click.ClickException(
                        printable(f"another aborist is still setting up the ledger {ledger} "
                                  f"(waited {SETUP_LOCK_TIMEOUT_S:.0f} s); try again")
                    ) from None  # fmt: skip
                time.sleep(0.02)
        yield
    finally:
        os.close(fd)  # releases the lock


def _migrate_embedded(settings: Settings, path: Path) -> None:
    from aborist.migrations import upgrade
    from ledger.engine import ledger_engine
    from ledger.store import translate_errors

    with clean_errors():
        engine = ledger_engine(settings.ledger_url())
        try:
            with translate_errors(str(path)):
                upgrade(engine)
        finally:
            engine.dispose()


@contextmanager
def pipeline_ledger(db_url: str | None, *, create: bool = False) -> Iterator[Ledger]:
    """The ledger named by ``--db`` / ``ABORIST_DB_URL`` / the data home, opened with the
    pipeline's projections; open errors become one line. ``create``: the embedded
    ledger is created on first use (:func:`embedded_ledger`)."""
    from aborist.projections import open_ledger

    settings = load_settings(db_url=db_url)
    if create:
        embedded_ledger(settings)
    with clean_errors():
        lg = open_ledger(settings.ledger_url())
    try:
        yield lg
    finally:
        lg.close()


def emit_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False))


def read_text_capped(
    path: Path, what: str, error: type[click.ClickException] = click.ClickException
) -> str:
    """The UTF-8 text of ``path``, read up to :data:`MAX_FILE_BYTES`; more raises ``error``.
    A pipe or a device has no size to check first (``/dev/stdin`` fed by a stream,
    ``/dev/zero``): read whole, it took memory until the process was killed."""
    with path.open("rb") as f:
        data = read_bounded(f, MAX_FILE_BYTES)
    if data is None:
        raise error(f"{path}: a {what} file is at most {MAX_FILE_BYTES:,} bytes")
    return data.decode("utf-8")


def read_json_object(
    path: Path, what: str, *, error: type[click.ClickException] = click.ClickException
) -> dict[str, Any]:
    """A JSON object from ``path``; anything else raises ``error`` naming the file
    (``click.BadParameter`` makes it a usage error, exit 2)."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise error(f"{path}: a {what} file is at most {MAX_FILE_BYTES:,} bytes")
        data = parse_json(read_text_capped(path, what, error), what=f"the {what} file")
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
