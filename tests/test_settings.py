"""Settings: flag > environment > (home: a project's .aborist/) > config file > default;
constructing Settings reads nothing; the per-user home is the same from any directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from aborist.settings import (
    ConfigError,
    Settings,
    find_project_home,
    load_settings,
    prepare_home,
    resolve_settings,
)


@pytest.fixture
def no_home(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing but the XDG directories (pointed at tmp by the autouse fixture)."""
    for name in ("ABORIST_HOME", "ABORIST_DB_URL", "ABORIST_SHARD_DIR", "ABORIST_SHARDS"):
        monkeypatch.delenv(name, raising=False)


def test_constructed_defaults_read_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ABORIST_LLM_BASE_URL", "http://env:1/v1")
    assert Settings(llm_model="m").llm_base_url is None
    assert Settings.from_env({}) == Settings()


def test_the_default_home_is_per_user_not_the_current_directory(
    no_home: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = Path(str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    for where in (tmp_path / "a", tmp_path / "b" / "c"):
        where.mkdir(parents=True)
        monkeypatch.chdir(where)
        r = resolve_settings()
        assert r.settings.data_home() == data / "aborist"
        assert r.settings.ledger_url() == f"sqlite:///{data / 'aborist' / 'ledger.db'}"
        assert r.settings.shards_path() == data / "aborist" / "shards"
        assert r.origins["home"] == "default"


def test_environment() -> None:
    s = Settings.from_env(
        {
            "ABORIST_HOME": "/data/h",
            "ABORIST_SHARD_DIR": "/data/shards",
            "ABORIST_DB_URL": "postgresql+psycopg://u@h/db",
            "ABORIST_LLM_BASE_URL": "http://127.0.0.1:8000/v1",
            "ABORIST_LLM_MODEL": "m",
            "ABORIST_LLM_API_KEY": "k",
            "ABORIST_SHARDS": "handbook, policies",
            "ABORIST_UNRELATED": "ignored",
        }
    )
    assert s.home == Path("/data/h") and s.shards_path() == Path("/data/shards")
    assert s.ledger_url() == "postgresql+psycopg://u@h/db"
    assert (s.llm_base_url, s.llm_model, s.llm_api_key) == ("http://127.0.0.1:8000/v1", "m", "k")
    assert s.shards == ("handbook", "policies")


def test_empty_variables_count_as_unset() -> None:
    s = Settings.from_env({"ABORIST_DB_URL": "", "ABORIST_HOME": ""})
    assert s == Settings()


def _write_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> Path:
    cfg = tmp_path / "config.toml"
    cfg.write_text(body, encoding="utf-8")
    monkeypatch.setenv("ABORIST_CONFIG", str(cfg))
    return cfg


def test_flag_over_environment_over_file_over_default(
    no_home: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = _write_config(
        tmp_path,
        monkeypatch,
        'home = "/from/file"\ndb_url = "sqlite:////file.db"\nllm_model = "file-model"\n'
        'shards = ["handbook"]\nllm_timeout = 30\n',
    )
    monkeypatch.chdir(tmp_path)
    r = resolve_settings()
    assert r.settings.home == Path("/from/file")
    assert r.origins["home"] == f"config file ({cfg})"
    assert r.settings.shards == ("handbook",) and r.settings.llm_timeout == "30"
    assert r.origins["llm_base_url"] == "default"

    monkeypatch.setenv("ABORIST_HOME", "/from/env")
    monkeypatch.setenv("ABORIST_DB_URL", "sqlite:////env.db")
    r = resolve_settings()
    assert (r.settings.home, r.origins["home"]) == (Path("/from/env"), "environment (ABORIST_HOME)")
    assert r.settings.ledger_url() == "sqlite:////env.db"
    assert r.settings.llm_model == "file-model"

    r = resolve_settings({"home": "/from/flag", "db_url": None})
    assert (r.settings.home, r.origins["home"]) == (Path("/from/flag"), "flag (--home)")
    assert load_settings(db_url="sqlite:////flag.db").ledger_url() == "sqlite:////flag.db"
    assert load_settings(db_url=None).ledger_url() == "sqlite:////env.db"


def test_a_project_home_is_found_walking_up(
    no_home: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_config(tmp_path, monkeypatch, 'home = "/from/file"\n')
    project = tmp_path / "proj"
    (project / ".aborist").mkdir(parents=True)
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert find_project_home() == (project / ".aborist").resolve()
    r = resolve_settings()
    assert r.settings.home == (project / ".aborist").resolve()
    assert r.origins["home"].startswith("project (")
    monkeypatch.setenv("ABORIST_HOME", str(tmp_path / "env"))
    assert resolve_settings().settings.home == tmp_path / "env"  # the variable still wins
    assert find_project_home(tmp_path) is None


def test_a_file_named_aborist_is_not_a_project_home(tmp_path: Path) -> None:
    (tmp_path / ".aborist").write_text("not a directory", encoding="utf-8")
    assert find_project_home(tmp_path) is None


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("home = [1", "not valid TOML"),
        ('colour = "blue"\n', "unknown key 'colour'"),
        ("db_url = 5\n", "db_url must be a string"),
        ("shards = [1, 2]\n", "shards must be a list of shard names"),
    ],
)
def test_a_broken_config_file_is_one_clear_error(
    no_home: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, needle: str
) -> None:
    cfg = _write_config(tmp_path, monkeypatch, body)
    with pytest.raises(ConfigError, match=needle) as e:
        resolve_settings()
    assert str(cfg) in str(e.value)


def test_prepare_home_creates_a_private_directory_once(tmp_path: Path) -> None:
    s = Settings(home=tmp_path / "new" / "home")
    assert prepare_home(s) == tmp_path / "new" / "home"
    assert (s.data_home().stat().st_mode & 0o777) == 0o700
    assert prepare_home(s) is None


def test_the_suite_never_points_at_the_real_home(monkeypatch: pytest.MonkeyPatch) -> None:
    """The autouse fixture (tests/conftest.py) moves every per-user location under the
    test's temporary directory: CI runs as root, and a test must not touch /root."""
    import os
    import tempfile

    from aborist.settings import config_path, default_home

    tmp = Path(tempfile.gettempdir()).resolve()
    for where in (load_settings().data_home(), config_path()):
        assert tmp in where.resolve().parents, where
    monkeypatch.delenv("ABORIST_HOME")
    monkeypatch.delenv("ABORIST_CONFIG")
    assert tmp in default_home().resolve().parents and tmp in config_path().resolve().parents
    assert os.environ["XDG_DATA_HOME"].startswith(str(tmp))
