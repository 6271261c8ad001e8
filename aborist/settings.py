"""One settings object. Flags override environment, which overrides these defaults.

``ABORIST_HOME`` (default ``./.aborist``) holds the SQLite ledger (``ledger.db``) and the
shard directory (``shards/``). ``ABORIST_DB_URL`` points the ledger elsewhere, e.g. at
PostgreSQL. ``ABORIST_SHARD_DIR`` moves the shards; ``ABORIST_LLM_BASE_URL``,
``ABORIST_LLM_MODEL`` and ``ABORIST_LLM_API_KEY`` configure the model endpoint, and
``ABORIST_LLM_TIMEOUT`` how many seconds to wait for its answer (checked where it is used,
:func:`aborist.clients.select.llm_timeout`). A variable set to the empty string counts
as unset.

A plain dataclass read from ``os.environ``: constructing :class:`Settings` directly never
reads the environment (tests and library callers get exactly what they pass), and no
settings framework is imported on every command's start-up.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path

__all__ = ["ENV_PREFIX", "Settings", "load_settings"]

ENV_PREFIX = "ABORIST_"
_PATHS = frozenset({"home", "shard_dir"})


@dataclass(frozen=True, slots=True)
class Settings:
    home: Path = Path(".aborist")
    db_url: str | None = None
    shard_dir: Path | None = None
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    llm_timeout: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``ABORIST_*`` variables (``os.environ`` unless given)."""
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for f in fields(cls):
            raw = env.get(ENV_PREFIX + f.name.upper(), "")
            if raw:
                values[f.name] = Path(raw) if f.name in _PATHS else raw
        return cls(**values)  # type: ignore[arg-type]

    def ledger_url(self) -> str:
        """The ledger database URL: ``ABORIST_DB_URL`` or SQLite under ``home``."""
        if self.db_url:
            return self.db_url
        return f"sqlite:///{(self.home / 'ledger.db').as_posix()}"

    def shards_path(self) -> Path:
        """Directory holding one SQLite file per shard."""
        return self.shard_dir if self.shard_dir is not None else self.home / "shards"


def load_settings(**overrides: object) -> Settings:
    """Settings from the environment, with non-None ``overrides`` (from flags) on top."""
    clean = {k: Path(str(v)) if k in _PATHS else v for k, v in overrides.items() if v is not None}
    return replace(Settings.from_env(), **clean)  # type: ignore[arg-type]
