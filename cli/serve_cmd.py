"""`aborist serve`: the JSON API and the web pages over the same ledger and shards as the
other commands (docs/serve.md)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import click

from aborist.clients.select import MODEL_KINDS, settings_timeout
from aborist.server.config import (
    DEFAULT_BODY_TIMEOUT_S,
    DEFAULT_HEADER_TIMEOUT_S,
    DEFAULT_HOST,
    DEFAULT_KEEP_ALIVE_S,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_HEAD_BYTES,
    DEFAULT_PORT,
    DEFAULT_SEND_TIMEOUT_S,
    LOG_KEY_ENV,
    TOKEN_ENV,
    WITNESS_KEY_ENV,
    WITNESS_LOGS_ENV,
    WITNESS_STATE_ENV,
    BindRefusedError,
    ServerConfig,
    check_bind,
)
from aborist.settings import load_settings
from cli.common import PathArg, Seconds, clean_errors, db_option, pipeline_ledger

__all__ = ["serve"]


@click.command("serve")
@click.option("--host", default=DEFAULT_HOST, show_default=True,
              help="Address to listen on; a non-loopback address needs a token.")  # fmt: skip
@click.option("--port", type=click.IntRange(0, 65535), default=DEFAULT_PORT, show_default=True)
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Worker processes (several share a PostgreSQL ledger).")  # fmt: skip
@click.option("--token", default=None, metavar="TOKEN",
              help=f"API token (prefer ${TOKEN_ENV}: a flag is visible to other users in "
                   "the process list).")  # fmt: skip
@click.option("--model", "model_kind", type=click.Choice(MODEL_KINDS), default=None,
              help="Answerer (default: openai when ABORIST_LLM_BASE_URL is set, else "
                   "extractive).")  # fmt: skip
@click.option("--llm-timeout", "timeout_s", type=Seconds(min=0, min_open=True, max=86_400),
              metavar="SECONDS", help="Wait at most this long for each model answer, "
              "per attempt, the whole response included (ABORIST_LLM_TIMEOUT; default "
              "120).")  # fmt: skip
@click.option("--max-body", "max_body", type=click.IntRange(1024, 64 * 1024 * 1024),
              default=DEFAULT_MAX_BODY_BYTES, show_default=True, metavar="BYTES",
              help="Refuse request bodies larger than this (413).")  # fmt: skip
@click.option("--header-timeout", "header_timeout", type=Seconds(0.1, 3600),
              default=DEFAULT_HEADER_TIMEOUT_S, show_default=True, metavar="SECONDS",
              help="Close a connection whose request head has not arrived in full by then "
              "(408 if part of it had).")  # fmt: skip
@click.option("--body-timeout", "body_timeout", type=Seconds(0.1, 3600),
              default=DEFAULT_BODY_TIMEOUT_S, show_default=True, metavar="SECONDS",
              help="Refuse a request body still arriving after this (408).")  # fmt: skip
@click.option("--max-head", "max_head", type=click.IntRange(1024, 1024 * 1024),
              default=DEFAULT_MAX_HEAD_BYTES, show_default=True, metavar="BYTES",
              help="Refuse a request head (request line and headers) larger than this "
              "(431).")  # fmt: skip
@click.option("--send-timeout", "send_timeout", type=Seconds(0.1, 3600),
              default=DEFAULT_SEND_TIMEOUT_S, show_default=True, metavar="SECONDS",
              help="Close a connection whose unsent response has not shrunk for this "
              "long (a client that stopped reading).")  # fmt: skip
@click.option("--keep-alive", "keep_alive", type=Seconds(0.1, 3600),
              default=DEFAULT_KEEP_ALIVE_S, show_default=True, metavar="SECONDS",
              help="Close an idle keep-alive connection after this.")  # fmt: skip
@click.option("--max-connections", "max_connections", type=click.IntRange(1, 65536),
              default=DEFAULT_MAX_CONNECTIONS, show_default=True, metavar="N",
              help="Open connections per worker; one more is answered 503 and "
              "closed.")  # fmt: skip
@click.option("--log-key", type=PathArg(dir_okay=False, path_type=Path), envvar=LOG_KEY_ENV,
              metavar="KEYFILE", help="Sign GET /api/v1/checkpoint with this log key "
              f"(`aborist-ledger keygen`; default ${LOG_KEY_ENV}).")  # fmt: skip
@click.option("--witness-key", type=PathArg(dir_okay=False, path_type=Path),
              envvar=WITNESS_KEY_ENV, metavar="KEYFILE",
              help="Serve a witness at /witness/add-checkpoint, cosigning with this key "
              f"(`aborist-ledger keygen --witness`; default ${WITNESS_KEY_ENV}).")  # fmt: skip
@click.option("--witness-log", "witness_logs", multiple=True, envvar=WITNESS_LOGS_ENV,
              metavar="VKEYFILE", help="A log the witness cosigns for: its verifier key file. "
              f"Repeatable (default ${WITNESS_LOGS_ENV}, space-separated).")  # fmt: skip
@click.option("--witness-state-dir", type=PathArg(file_okay=False, path_type=Path),
              envvar=WITNESS_STATE_ENV, metavar="DIR",
              help="Where the witness keeps the latest checkpoint of each log "
              f"(default ${WITNESS_STATE_ENV}).")  # fmt: skip
@db_option
def serve(
    host: str,
    port: int,
    workers: int,
    token: str | None,
    model_kind: str | None,
    timeout_s: float | None,
    max_body: int,
    header_timeout: float,
    body_timeout: float,
    max_head: int,
    send_timeout: float,
    keep_alive: float,
    max_connections: int,
    log_key: Path | None,
    witness_key: Path | None,
    witness_logs: tuple[str, ...],
    witness_state_dir: Path | None,
    db_url: str | None,
) -> None:
    """Serve the JSON API (/api/v1) and the web pages (ask, runs, ledger).

    Listens on loopback unless told otherwise; any other address needs a token, sent as
    a bearer token to the API (and the witness) and asked for by the pages' login. With
    --log-key the latest checkpoint is served as a signed note; with the --witness-*
    options the server is also a witness for the logs named.

    Example: aborist serve --port 8420
    """
    import uvicorn

    from aborist.server import create_app
    from aborist.server.cli_config import TlogKeys, client_factory
    from aborist.server.connections import uvicorn_options

    token = token or os.environ.get(TOKEN_ENV) or None
    try:
        check_bind(host, token)
    except BindRefusedError as e:
        raise click.UsageError(str(e)) from e
    settings = load_settings(db_url=db_url)
    with pipeline_ledger(settings.db_url) as lg:  # an unmigrated ledger fails here, once
        seq = lg.head()[0]
    keys = TlogKeys(log_key, witness_key, witness_logs, witness_state_dir)
    with clean_errors():
        timeout = timeout_s or settings_timeout(settings)
        factory = client_factory(settings, model_kind, timeout)
        signing, witness = keys.load(settings.log_origin)  # a bad key stops it here
    _check_listen(host, port)  # before the banner, which says it is serving
    auth = "token required" if token else "no token (loopback only)"
    signed = f"checkpoints signed as {signing.origin}" if signing else "checkpoints unsigned"
    witnessing = f" · witness for {len(witness.logs)} log(s)" if witness else ""
    click.echo(
        f"aborist serve: http://{host}:{port}/ · ledger head {seq} · {workers} worker"
        f"{'s' if workers > 1 else ''} · {auth} · {signed}{witnessing}",
        err=True,
    )
    config = ServerConfig(
        ledger_url=settings.ledger_url(), shards_dir=settings.shards_path(),
        client_factory=factory, token=token, max_body_bytes=max_body,
        body_timeout_s=body_timeout, header_timeout_s=header_timeout,
        keep_alive_s=keep_alive, max_connections=max_connections,
        max_head_bytes=max_head, send_timeout_s=send_timeout,
        log_signing=signing, witness=witness,
    )  # fmt: skip
    limits = uvicorn_options(config)  # the same in every worker process
    if workers == 1:
        uvicorn.run(create_app(config), host=host, port=port, log_level="warning", **limits)
        return
    _run_workers(
        host, port, workers, limits, settings=settings, model_kind=model_kind,
        timeout=timeout, token=token, max_body_bytes=max_body, body_timeout_s=body_timeout,
        keys=keys,
    )  # fmt: skip


def _run_workers(host: str, port: int, workers: int, limits: dict[str, Any], **export: Any) -> None:
    """``workers`` uvicorn worker processes, each building the application from what
    ``export_config`` puts in the environment; replay jobs and login sessions are shared
    through a temporary directory."""
    import uvicorn

    from aborist.server.cli_config import export_config

    with tempfile.TemporaryDirectory(prefix="aborist-serve-") as shared:
        jobs, sessions = Path(shared, "replays"), Path(shared, "sessions")
        jobs.mkdir()
        sessions.mkdir(mode=0o700)
        export_config(os.environ, replay_jobs_dir=jobs, sessions_dir=sessions, **export)
        uvicorn.run(
            "aborist.server.app:app_from_environment", factory=True, host=host, port=port,
            workers=workers, log_level="warning", **limits,
        )  # fmt: skip


def _check_listen(host: str, port: int) -> None:
    """One error line when ``host:port`` cannot be listened on (the port taken, the
    address not this machine's), instead of a banner saying it serves followed by
    uvicorn's own log line and exit 3. Bound as uvicorn binds (``SO_REUSEADDR``), then
    released for it."""
    import socket

    where = f"{host}:{port}"
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as e:  # socket.gaierror is one too
        raise click.ClickException(f"cannot listen on {where}: {e.strerror or e}") from e
