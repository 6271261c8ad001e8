"""Break-it session 11: hostile input that still got past the commands' guards."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, text

from cli.audit.ledger_cli import cli as ledger_cli
from cli.main import cli
from ledger.errors import NotMigratedError
from ledger.store import Ledger


def _refused_as_usage(args: list[str], group: object = cli) -> str:
    """Exit 2 with click's usage error (the usual refusal of a bad option value), no
    traceback, nothing run."""
    result = CliRunner().invoke(group, args)  # type: ignore[arg-type]
    assert result.exit_code == 2, (result.output, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result.stderr


@pytest.mark.parametrize("value", ["nan", "NaN", "-nan", "inf"])
def test_query_llm_timeout_refuses_nan_and_infinity(value: str) -> None:
    """`--llm-timeout nan` passed click's `0 < x <= 86400` (NaN compares false) and the
    query ended in a socket ValueError traceback once a server accepted the connection."""
    err = _refused_as_usage(
        ["query", "--model", "openai", "--base-url", "http://127.0.0.1:9/v1",
         "--llm-model", "x", "--llm-timeout", value, "borrow checker"]
    )  # fmt: skip
    assert "--llm-timeout" in err


@pytest.mark.parametrize(
    "option", ["--llm-timeout", "--header-timeout", "--body-timeout", "--send-timeout",
               "--keep-alive"]
)  # fmt: skip
def test_serve_timeouts_refuse_nan(option: str) -> None:
    """`serve --header-timeout nan` started, and answered every slow head "408 ... within
    nan s" at once."""
    err = _refused_as_usage(["serve", option, "nan"])
    assert option in err


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_witness_cosign_timeout_refuses_nan_and_infinity(value: str) -> None:
    err = _refused_as_usage(
        ["witness", "cosign", "--timeout", value, "--witness", "http://127.0.0.1:9", "x.note"],
        ledger_cli,
    )
    assert "--timeout" in err


@pytest.mark.parametrize("table", ["runs", "checkpoints"])
def test_replay_on_a_dropped_table_is_one_line(ledger_url: str, table: str) -> None:
    """A table an insider dropped from a migrated ledger: the rows read through a raw
    driver cursor raised the driver's own error (``sqlite3.OperationalError`` /
    ``psycopg.errors.UndefinedTable``), which no error translation caught, and `replay`
    ended in a traceback."""
    engine = create_engine(ledger_url)
    try:
        with engine.begin() as conn:
            conn.execute(text(f"DROP TABLE {table}"))
    finally:
        engine.dispose()
    result = CliRunner().invoke(ledger_cli, ["replay", "--db", ledger_url])
    assert result.exit_code == 1, (result.output, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "no ledger schema" in lines[0]


def test_raw_cursor_driver_error_becomes_a_ledger_error(ledger_url: str) -> None:
    with Ledger.open(ledger_url) as lg:
        with lg.engine.begin() as conn:
            conn.execute(text("DROP TABLE checkpoints"))
        with pytest.raises(NotMigratedError):
            lg.checkpoints()


def test_ingest_records_into_the_ledger_named_by_db(ledger_url: str, tmp_path: Path) -> None:
    """The README's PostgreSQL section names `--db URL` first, and `query`, `runs` and the
    ledger commands take it; `ingest` refused it ("No such option"), so a newcomer's
    shard was recorded in the default SQLite ledger and `query --db URL` then refused
    it as never recorded by an ingest."""
    doc = tmp_path / "rivers.md"
    doc.write_text("# Rivers\n\nThe Silverrun River is 312 km long.\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["ingest", str(doc), "--shard", "geo", "--db", ledger_url])
    assert result.exit_code == 0, (result.output, result.exception)
    with Ledger.open(ledger_url) as lg:
        types = [e.type for e in lg.iter_events()]
    assert "corpus.shard_ingested" in types
    result = CliRunner().invoke(
        cli, ["query", "How long is the Silverrun River?", "--shard", "geo", "--db", ledger_url]
    )
    assert result.exit_code == 0, (result.output, result.exception)


def _fifo_fed(path: Path, data: bytes, times: int = 1) -> threading.Thread:
    """A named pipe at ``path`` a thread writes ``data`` into, for each of ``times``
    readers (what `<(…)` or a pipe into /dev/stdin gives a command: a file with no size
    to check before reading)."""
    os.mkfifo(path)

    def feed() -> None:
        for _ in range(times):
            with contextlib.suppress(BrokenPipeError), open(path, "wb") as f:
                f.write(data)

    t = threading.Thread(target=feed, daemon=True)
    t.start()
    return t


@pytest.mark.parametrize(
    "args", [["verify-bundle", "{f}"], ["replay", "--checkpoint", "{f}", "--db", "{db}"]]
)  # fmt: skip
def test_a_pipe_is_read_only_up_to_the_file_limit(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The size check was the file's `st_size`, 0 for a pipe or a device: `verify-bundle
    /dev/zero` ran until killed and `replay --checkpoint /dev/zero` was killed by the
    kernel for its memory. Here the limit is 1 MiB and the pipe holds 2 MiB of JSON
    whitespace, which the old read took whole and parsed."""
    import cli.common

    monkeypatch.setattr(cli.common, "MAX_FILE_BYTES", 1 << 20)
    fifo = tmp_path / "stream.json"
    feeder = _fifo_fed(fifo, b"{" + b" " * (2 << 20) + b"}")
    argv = [a.format(f=fifo, db=f"sqlite:///{tmp_path / 'l.db'}") for a in args]
    result = CliRunner().invoke(ledger_cli, argv)
    feeder.join(timeout=10)
    assert result.exit_code in (1, 2), (result.output, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    assert "is at most 1,048,576 bytes" in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["checkpoint", "--sign", "{f}", "--db", "{db}"], "larger than 65,536 bytes"),
        (["verify-checkpoint", "{note}", "--key", "{f}", "--db", "{db}"],
         "is at most 1,048,576 bytes"),
        (["verify-checkpoint", "{note}", "--key", "{pub}", "--state", "{f}", "--db", "{db}"],
         "larger than 1,048,576 bytes"),
        (["witness", "cosign", "{f}", "--witness", "http://127.0.0.1:9", "--db", "{db}"],
         "is at most 1,048,576 bytes"),
    ],
)  # fmt: skip
def test_key_state_and_note_files_are_read_bounded(
    args: list[str], needle: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key, state or note file that is a pipe or a device (`--sign /dev/zero`, `--key
    /dev/zero`, `--state /dev/zero`, `witness cosign /dev/zero`) was read whole: a
    MemoryError traceback, or the kernel's kill. Here the file limit is 1 MiB and the
    pipe holds 2 MiB, which the old reads took whole."""
    import cli.common
    import ledger.jsonsafe

    monkeypatch.setattr(cli.common, "MAX_FILE_BYTES", 1 << 20)
    monkeypatch.setattr(ledger.jsonsafe, "MAX_FILE_BYTES", 1 << 20)
    db = f"sqlite:///{tmp_path / 'l.db'}"
    assert CliRunner().invoke(ledger_cli, ["migrate", "--db", db]).exit_code == 0
    key = tmp_path / "log.key"
    keygen = ["keygen", "example.com/log", "--out", str(key)]
    assert CliRunner().invoke(ledger_cli, keygen).exit_code == 0
    signed = CliRunner().invoke(ledger_cli, ["checkpoint", "--sign", str(key), "--db", db])
    assert signed.exit_code == 0, signed.output
    note = tmp_path / "cp.note"
    note.write_text(signed.stdout, encoding="utf-8")
    fifo = tmp_path / "stream"
    feeder = _fifo_fed(fifo, b"a" * (2 << 20))
    subst = {"f": fifo, "db": db, "note": note, "pub": f"{key}.pub"}
    result = CliRunner().invoke(ledger_cli, [a.format(**subst) for a in args])
    feeder.join(timeout=10)
    assert result.exit_code in (1, 2), (result.output, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    assert needle in result.stderr, result.stderr


def test_config_file_is_read_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`ABORIST_CONFIG=/dev/zero aborist config` read the device whole: a MemoryError
    traceback. Here the pipe holds a 2 MiB TOML comment, valid TOML the old read took."""
    fifo = tmp_path / "config.toml"
    _fifo_fed(fifo, b"#" + b" " * (2 << 20) + b"\n", times=10)  # the file is read twice
    monkeypatch.setenv("ABORIST_CONFIG", str(fifo))
    result = CliRunner().invoke(cli, ["config"])
    assert result.exit_code == 1, (result.output, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "larger than 1,048,576 bytes" in lines[0], result.stderr
