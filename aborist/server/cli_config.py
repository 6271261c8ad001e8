"""The configuration as ``aborist serve`` resolves it, and its round trip through the
environment to uvicorn's worker processes (each worker builds its own application)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from aborist.clients.base import ChatClient
from aborist.server.config import (
    DEFAULT_BODY_TIMEOUT_S,
    DEFAULT_MAX_BODY_BYTES,
    LOG_KEY_ENV,
    TOKEN_ENV,
    WITNESS_KEY_ENV,
    WITNESS_LOGS_ENV,
    WITNESS_STATE_ENV,
    ServerConfig,
)
from aborist.settings import Settings

if TYPE_CHECKING:
    from aborist.server.tlog import LogSigning
    from ledger.tlog.witness import Witness

__all__ = ["TlogKeys", "config_from_environment", "export_config"]

_PREFIX = "ABORIST_SERVE_"


def client_factory(
    settings: Settings, model_kind: str | None, timeout: float | None
) -> Callable[[], ChatClient]:
    from aborist.clients.select import select_client

    def make() -> ChatClient:
        return select_client(model_kind, settings, timeout=timeout)

    make()  # a bad model configuration fails at start-up, not on the first question
    return make


@dataclass(frozen=True)
class TlogKeys:
    """The key files of the log's signing key and of the witness (paths only: each
    worker reads the keys itself, so no key passes through the environment)."""

    log_key: Path | None = None
    witness_key: Path | None = None
    witness_logs: Sequence[str] = ()
    witness_state_dir: Path | None = None

    def load(self, origin: str | None) -> tuple[LogSigning | None, Witness | None]:
        """Read the keys (:class:`aborist.server.tlog.KeySetupError`, one line, if one
        cannot be used)."""
        from aborist.server.tlog import KeySetupError, log_signing, witness_of

        signing = log_signing(self.log_key, origin) if self.log_key is not None else None
        parts = (self.witness_key, self.witness_state_dir)
        if any(parts) or self.witness_logs:
            if self.witness_key is None or self.witness_state_dir is None:
                raise KeySetupError(
                    "a witness needs --witness-key, --witness-log and --witness-state-dir"
                )
            return signing, witness_of(self.witness_key, self.witness_logs,
                                       self.witness_state_dir)  # fmt: skip
        return signing, None

    def export(self, env: MutableMapping[str, str]) -> None:
        for name, value in ((LOG_KEY_ENV, self.log_key), (WITNESS_KEY_ENV, self.witness_key),
                            (WITNESS_STATE_ENV, self.witness_state_dir)):  # fmt: skip
            if value is not None:
                env[name] = str(Path(value).resolve())
        if self.witness_logs:
            env[WITNESS_LOGS_ENV] = " ".join(str(Path(p).resolve()) for p in self.witness_logs)

    @classmethod
    def from_environment(cls, env: Mapping[str, str]) -> TlogKeys:
        def path(name: str) -> Path | None:
            return Path(v) if (v := env.get(name)) else None

        return cls(
            path(LOG_KEY_ENV),
            path(WITNESS_KEY_ENV),
            tuple(env.get(WITNESS_LOGS_ENV, "").split()),
            path(WITNESS_STATE_ENV),
        )


def export_config(
    env: MutableMapping[str, str],
    *,
    settings: Settings,
    model_kind: str | None,
    timeout: float | None,
    token: str | None,
    max_body_bytes: int,
    replay_jobs_dir: Path,
    body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S,
    sessions_dir: Path | None = None,
    keys: TlogKeys | None = None,
) -> None:
    env["ABORIST_DB_URL"] = settings.ledger_url()
    env["ABORIST_SHARD_DIR"] = str(settings.shards_path())
    env[_PREFIX + "MODEL"] = model_kind or ""
    env[_PREFIX + "TIMEOUT"] = "" if timeout is None else repr(timeout)
    env[_PREFIX + "MAX_BODY"] = str(max_body_bytes)
    env[_PREFIX + "JOBS_DIR"] = str(replay_jobs_dir)
    env[_PREFIX + "BODY_TIMEOUT"] = repr(body_timeout_s)
    if sessions_dir is not None:
        env[_PREFIX + "SESSIONS_DIR"] = str(sessions_dir)
    if token is not None:
        env[TOKEN_ENV] = token
    if keys is not None:
        keys.export(env)


def config_from_environment(env: Mapping[str, str]) -> ServerConfig:
    settings = Settings.from_env(env)
    timeout = env.get(_PREFIX + "TIMEOUT") or None
    signing, witness = TlogKeys.from_environment(env).load(settings.log_origin)
    return ServerConfig(
        ledger_url=settings.ledger_url(),
        shards_dir=Path(settings.shards_path()),
        client_factory=client_factory(
            settings, env.get(_PREFIX + "MODEL") or None, float(timeout) if timeout else None
        ),
        token=env.get(TOKEN_ENV) or None,
        max_body_bytes=int(env.get(_PREFIX + "MAX_BODY") or DEFAULT_MAX_BODY_BYTES),
        body_timeout_s=float(env.get(_PREFIX + "BODY_TIMEOUT") or DEFAULT_BODY_TIMEOUT_S),
        replay_jobs_dir=Path(jobs) if (jobs := env.get(_PREFIX + "JOBS_DIR")) else None,
        sessions_dir=Path(d) if (d := env.get(_PREFIX + "SESSIONS_DIR")) else None,
        log_signing=signing,
        witness=witness,
    )
