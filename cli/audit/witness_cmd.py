"""``aborist-ledger witness …``: a witness over files and over HTTP, and the log's side of
asking witnesses to cosign (docs/replay.md, "Witnesses").

Witness side: ``add-checkpoint`` (one request file in, the cosignature out) and ``serve``
(``POST /add-checkpoint``). Log side: ``request`` writes an add-checkpoint body with a
consistency proof from this ledger, ``merge`` appends witness replies to the note, and
``cosign`` does both against witnesses' URLs.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from cli.audit.tlog_cmd import read_signer
from cli.audit.trust_args import read_keys
from cli.common import Seconds, clean_errors, db_option, seq_range
from ledger import jsonsafe
from ledger.errors import LedgerError
from ledger.tlog.note import ALG_COSIGNATURE_V1, ALG_ED25519, Verifier
from ledger.tlog.witness import Witness, add_cosignatures, build_request, request_cosignature

__all__ = ["witness"]

F = TypeVar("F", bound=Callable[..., Any])
#: A bearer token ``witness cosign`` sends (never printed): a witness behind ``aborist serve``
#: with a token wants it.
WITNESS_TOKEN_ENV = "ABORIST_WITNESS_TOKEN"

REASONS = {
    400: "Bad Request",
    403: "Forbidden",
    404: "Not Found",
    409: "Conflict",
    413: "Content Too Large",
    422: "Unprocessable Entity",
    500: "Internal Error",
}


def _read(path: Path, what: str) -> bytes:
    limit = jsonsafe.MAX_FILE_BYTES
    try:
        if str(path) == "-":
            data = jsonsafe.read_bounded(sys.stdin.buffer, limit)
        else:
            with path.open("rb") as f:
                data = jsonsafe.read_bounded(f, limit)
    except OSError as e:
        raise click.BadParameter(f"cannot read {what} {path}: {e.strerror}") from e
    if data is None:
        raise click.BadParameter(f"{path}: a {what} is at most {limit:,} bytes")
    return data


def _text(path: Path, what: str) -> str:
    try:
        return _read(path, what).decode("utf-8")
    except UnicodeDecodeError as e:
        raise click.BadParameter(f"{what} {path} is not UTF-8") from e


def _witness(key_file: Path, logs: Sequence[str], state_dir: Path) -> Witness:
    signer = read_signer(key_file, alg=ALG_COSIGNATURE_V1)
    by_origin: dict[str, list[Verifier]] = {}
    for k in read_keys(logs, "--log"):
        if k.alg != ALG_ED25519:
            raise click.BadParameter(f"--log {k.name}: a log key is Ed25519 (type 0x01)")
        by_origin.setdefault(k.name, []).append(k)
    if not by_origin:
        raise click.UsageError("give at least one --log VKEYFILE")
    return Witness(signer, by_origin, state_dir, clock=lambda: int(time.time()))


def _witness_options(f: F) -> F:
    f = click.option(
        "--state-dir",
        required=True,
        metavar="DIR",
        type=click.Path(file_okay=False, path_type=Path),
        help="Where the witness keeps the latest checkpoint per origin.",
    )(f)
    f = click.option(
        "--log",
        "logs",
        multiple=True,
        required=True,
        metavar="VKEYFILE",
        help="A log's verifier key (its name is the log's origin). Repeatable.",
    )(f)
    return click.option(
        "--key",
        "key_file",
        required=True,
        metavar="KEYFILE",
        type=click.Path(dir_okay=False, path_type=Path),
        help="The witness's private key (`aborist-ledger keygen --witness`).",
    )(f)


@click.group("witness")
def witness() -> None:
    """Cosign checkpoints as a witness, or ask witnesses to cosign.

    A witness keeps the latest checkpoint it cosigned for each log and cosigns a new one
    only if a consistency proof shows it extends that one (c2sp.org/tlog-witness).

    Example: aborist-ledger witness serve --key w.key --log log.key.pub --state-dir w/
    """


@witness.command("add-checkpoint")
@click.argument("request_file", metavar="REQUEST", type=click.Path(dir_okay=False, path_type=Path))
@_witness_options
def add_checkpoint(
    request_file: Path, key_file: Path, logs: tuple[str, ...], state_dir: Path
) -> None:
    """Check one add-checkpoint request (a file, or - for stdin) and print the
    cosignature line; a refusal is one line with the protocol's status, exit 1.

    Example: aborist-ledger witness add-checkpoint req.txt --key w.key --log log.pub --state-dir w/
    """
    w = _witness(key_file, logs, state_dir)
    reply = w.add_checkpoint(_read(request_file, "request"))
    if reply.status != 200:
        why = reply.body.strip()
        if reply.status == 409:
            why = f"the witness holds size {why}"
        raise click.ClickException(
            f"witness: {reply.status} {REASONS.get(reply.status, '')}: {why}"
        )
    click.echo(reply.body, nl=False)


@witness.command("serve")
@_witness_options
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", type=click.IntRange(0, 65535), default=8088, show_default=True)
def serve(key_file: Path, logs: tuple[str, ...], state_dir: Path, host: str, port: int) -> None:
    """Serve POST /add-checkpoint and GET /<origin hash>/checkpoint over HTTP.

    Example: aborist-ledger witness serve --key w.key --log log.pub --state-dir w/ --port 8088
    """
    import uvicorn

    from ledger.tlog.witness_http import witness_app

    app = witness_app(_witness(key_file, logs, state_dir))
    uvicorn.run(app, host=host, port=port, log_level="warning")


@witness.command("request")
@click.argument(
    "note_file", metavar="NOTE", type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option("--old", type=seq_range(min=0), default=0, show_default=True,
              help="The size the witness holds (its 409 reply says it).")  # fmt: skip
@db_option
def request(note_file: Path, old: int, db_url: str | None) -> None:
    """Print an add-checkpoint request for NOTE: 'old N', a consistency proof from N
    out of this ledger, a blank line, the note.

    Example: aborist-ledger witness request cp.note --old 120 > req.txt
    """
    from cli.audit.ledger_cli import open_ledger
    from ledger.tlog.checkpoint_note import body_of
    from ledger.tlog.proofs import consistency_path

    note = _text(note_file, "note")
    with clean_errors():
        body = body_of(note)
        if old > body.size:
            raise click.BadParameter(f"--old {old} is above the checkpoint's size {body.size}")
        proof: list[bytes] = []
        if 0 < old < body.size:
            with open_ledger(db_url) as lg:
                proof = consistency_path(lg, old, body.size)
    click.echo(build_request(old, proof, note).decode("utf-8"), nl=False)


@witness.command("merge")
@click.argument(
    "note_file", metavar="NOTE", type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.argument("replies", metavar="REPLY...", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))  # fmt: skip
def merge(note_file: Path, replies: tuple[Path, ...]) -> None:
    """Print NOTE with the witnesses' cosignature lines (their add-checkpoint replies)
    appended.

    Example: aborist-ledger witness merge cp.note w1.reply w2.reply > cosigned.note
    """
    with clean_errors():
        out = add_cosignatures(_text(note_file, "note"), [_text(r, "reply") for r in replies])
    click.echo(out, nl=False)


@witness.command("cosign")
@click.argument(
    "note_file", metavar="NOTE", type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--witness",
    "urls",
    multiple=True,
    required=True,
    metavar="URL",
    help="A witness's submission prefix (POST URL/add-checkpoint). Repeatable.",
)
@click.option("--timeout", type=Seconds(min=0.1), default=10.0, show_default=True,
              help="Seconds to wait for each witness.")  # fmt: skip
@db_option
def cosign(note_file: Path, urls: tuple[str, ...], timeout: float, db_url: str | None) -> None:
    """Ask each witness to cosign NOTE (consistency proofs from this ledger) and print
    the note with every cosignature. A witness behind `aborist serve` with a token wants
    it as a bearer token: set ABORIST_WITNESS_TOKEN.

    Example: aborist-ledger witness cosign cp.note --witness http://127.0.0.1:8088
    """
    import httpx

    from cli.audit.ledger_cli import open_ledger
    from ledger.tlog.proofs import consistency_path

    note = _text(note_file, "note")
    token = os.environ.get(WITNESS_TOKEN_ENV)
    headers = {"authorization": f"Bearer {token}"} if token else {}
    replies = []
    with open_ledger(db_url) as lg, clean_errors():
        for url in urls:

            def send(body: bytes, url: str = url) -> tuple[int, str]:
                try:
                    r = httpx.post(url.rstrip("/") + "/add-checkpoint", content=body,
                                   headers=headers, timeout=timeout)  # fmt: skip
                except httpx.HTTPError as e:
                    raise click.ClickException(f"witness {url} unreachable: {e}") from e
                return r.status_code, r.text

            try:
                replies.append(
                    request_cosignature(note, lambda a, b: consistency_path(lg, a, b), send)
                )
            except LedgerError as e:
                raise click.ClickException(f"witness {url}: {e}") from e
        out = add_cosignatures(note, replies)
    click.echo(out, nl=False)
