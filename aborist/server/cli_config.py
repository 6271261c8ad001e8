"""The configuration as ``aborist serve`` resolves it, and its round trip through the
environment to uvicorn's worker processes (each worker builds its own application)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path

from aborist.clients.base import ChatClient
from aborist.server.config import DEFAULT_MAX_BODY_BYTES, TOKEN_ENV, ServerConfig
from aborist.settings import Settings

__all__ = ["config_from_environment", "export_config"]

_PREFIX = "ABORIST_SERVE_"


def client_factory(
    settings: Settings, model_kind: str | None, timeout: float | None
) -> Callable[[], ChatClient]:
    from aborist.clients.select import select_client

    def make() -> ChatClient:
        return select_client(model_kind, settings, timeout=timeout)

    make()  # a bad model configuration fails at start-up, not on the first question
    return make


def export_config(
    env: MutableMapping[str, str],
    *,
    settings: Settings,
    model_kind: str | None,
    timeout: float | None,
    token: str | None,
    max_body_bytes: int,
    replay_jobs_dir: Path,
) -> None:
    env["ABORIST_DB_URL"] = settings.ledger_url()
    env["ABORIST_SHARD_DIR"] = str(settings.shards_path())
    env[_PREFIX + "MODEL"] = model_kind or ""
    env[_PREFIX + "TIMEOUT"] = "" if timeout is None else repr(timeout)
    env[_PREFIX + "MAX_BODY"] = str(max_body_bytes)
    env[_PREFIX + "JOBS_DIR"] = str(replay_jobs_dir)
    if token is not None:
        env[TOKEN_ENV] = token


def config_from_environment(env: Mapping[str, str]) -> ServerConfig:
    settings = Settings.from_env(env)
    timeout = env.get(_PREFIX + "TIMEOUT") or None
    return ServerConfig(
        ledger_url=settings.ledger_url(),
        shards_dir=Path(settings.shards_path()),
        client_factory=client_factory(
            settings, env.get(_PREFIX + "MODEL") or None, float(timeout) if timeout else None
        ),
        token=env.get(TOKEN_ENV) or None,
        max_body_bytes=int(env.get(_PREFIX + "MAX_BODY") or DEFAULT_MAX_BODY_BYTES),
        replay_jobs_dir=Path(jobs) if (jobs := env.get(_PREFIX + "JOBS_DIR")) else None,
    )
