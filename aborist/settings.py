"""One settings object (pydantic-settings). Flags override environment, which overrides
these defaults.

``ABORIST_HOME`` (default ``./.aborist``) holds the SQLite ledger (``ledger.db``) and the
shard directory (``shards/``). ``ABORIST_DB_URL`` points the ledger elsewhere, e.g. at
PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ABORIST_", extra="ignore")

    home: Path = Field(default=Path(".aborist"))
    db_url: str | None = None
    shard_dir: Path | None = None
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None

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
    clean = {k: v for k, v in overrides.items() if v is not None}
    return Settings(**clean)  # type: ignore[arg-type]
