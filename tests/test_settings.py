"""Settings: flags over environment over defaults; constructing Settings reads nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from aborist.settings import Settings, load_settings


def test_defaults() -> None:
    s = Settings.from_env({})
    assert s == Settings()
    assert s.ledger_url() == "sqlite:///.aborist/ledger.db"
    assert s.shards_path() == Path(".aborist/shards")


def test_environment() -> None:
    s = Settings.from_env(
        {
            "ABORIST_HOME": "/data/h",
            "ABORIST_SHARD_DIR": "/data/shards",
            "ABORIST_DB_URL": "postgresql+psycopg://u@h/db",
            "ABORIST_LLM_BASE_URL": "http://127.0.0.1:8000/v1",
            "ABORIST_LLM_MODEL": "m",
            "ABORIST_LLM_API_KEY": "k",
            "ABORIST_UNRELATED": "ignored",
        }
    )
    assert s.home == Path("/data/h") and s.shards_path() == Path("/data/shards")
    assert s.ledger_url() == "postgresql+psycopg://u@h/db"
    assert (s.llm_base_url, s.llm_model, s.llm_api_key) == ("http://127.0.0.1:8000/v1", "m", "k")


def test_empty_variables_count_as_unset() -> None:
    s = Settings.from_env({"ABORIST_DB_URL": "", "ABORIST_HOME": ""})
    assert s == Settings()


def test_flags_override_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ABORIST_HOME", str(tmp_path))
    monkeypatch.setenv("ABORIST_DB_URL", "sqlite:////env/ledger.db")
    assert load_settings().ledger_url() == "sqlite:////env/ledger.db"
    assert load_settings(db_url="sqlite:////flag.db").ledger_url() == "sqlite:////flag.db"
    assert load_settings(db_url=None).ledger_url() == "sqlite:////env/ledger.db"
    assert load_settings(home=str(tmp_path / "x")).home == tmp_path / "x"


def test_constructing_settings_ignores_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ABORIST_LLM_BASE_URL", "http://env:1/v1")
    assert Settings(llm_model="m").llm_base_url is None
