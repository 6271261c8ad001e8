"""`aborist config` shows each value and its origin; `--home` on both CLIs; the same home
from every directory; a broken config file is one line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from cli.audit.ledger_cli import cli as ledger_cli
from cli.main import cli

DOC = "# Rivers\n\nThe Silverrun River is 412 kilometres long.\n"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No ABORIST_* variable but the config file's path; XDG under tmp (autouse)."""
    for name in ("ABORIST_HOME", "ABORIST_DB_URL", "ABORIST_SHARD_DIR", "ABORIST_LLM_BASE_URL",
                 "ABORIST_LLM_MODEL", "ABORIST_LLM_API_KEY", "ABORIST_SHARDS"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    cfg = tmp_path / "config.toml"
    cfg.touch()  # a file ABORIST_CONFIG names must exist
    monkeypatch.setenv("ABORIST_CONFIG", str(cfg))
    monkeypatch.chdir(tmp_path)
    return cfg


def settings_of(result: Result) -> dict[str, dict[str, object]]:
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout)["settings"])


def test_config_shows_values_and_origins(clean: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clean.write_text(
        'llm_model = "from-file"\nllm_api_key = "sk-file-secret"\nshards = ["geo"]\n'
        'db_url = "postgresql+psycopg://u:pw@db.example/aborist"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("ABORIST_LLM_MODEL", "from-env")
    result = invoke("config")
    assert result.exit_code == 0, result.output
    assert "sk-file-secret" not in result.output and ":pw@" not in result.output
    assert "from-env  [environment (ABORIST_LLM_MODEL)]" in result.stdout
    assert f"[config file ({clean})]" in result.stdout
    s = settings_of(invoke("config", "--json"))
    assert s["llm_model"] == {"value": "from-env", "origin": "environment (ABORIST_LLM_MODEL)"}
    assert s["llm_api_key"]["value"] == "***" and s["shards"]["value"] == ["geo"]
    assert s["llm_base_url"] == {"value": None, "origin": "default"}
    assert s["home"]["origin"].startswith("default")
    flagged = settings_of(invoke("--home", "/somewhere/else", "config", "--json"))
    assert flagged["home"] == {"value": "/somewhere/else", "origin": "flag (--home)"}


def test_one_home_wherever_you_stand(
    clean: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ingest in one directory, list shards and query from another: the same data (the
    per-user directory), and the first run says where it is."""
    doc = tmp_path / "doc.md"
    doc.write_text(DOC, encoding="utf-8")
    first = tmp_path / "one"
    first.mkdir()
    monkeypatch.chdir(first)
    ingested = invoke("ingest", str(doc), "--shard", "geo")
    assert ingested.exit_code == 0, ingested.output
    home = Path(os.environ["XDG_DATA_HOME"]) / "aborist"  # pointed under tmp (autouse)
    assert f"keeping data in {home}" in ingested.stderr
    other = tmp_path / "two" / "deeper"
    other.mkdir(parents=True)
    monkeypatch.chdir(other)
    listed = invoke("shards", "--json")
    assert [s["name"] for s in json.loads(listed.stdout)] == ["geo"]
    answered = invoke("query", "How long is the Silverrun River?")
    assert answered.exit_code == 0 and "412 kilometres" in answered.stdout
    assert not (first / ".aborist").exists() and not (other / ".aborist").exists()
    assert (home / "ledger.db").is_file() and (home / "shards" / "geo.shard.sqlite").is_file()


def test_a_project_home_is_used_below_it(
    clean: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    (project / ".aborist").mkdir(parents=True)
    (project / "docs").mkdir()
    (project / "docs" / "doc.md").write_text(DOC, encoding="utf-8")
    monkeypatch.chdir(project / "docs")
    assert invoke("ingest", "doc.md", "--shard", "geo").exit_code == 0
    assert (project / ".aborist" / "ledger.db").is_file()
    assert (project / ".aborist" / "shards" / "geo.shard.sqlite").is_file()
    s = settings_of(invoke("config", "--json"))
    assert s["home"]["origin"] == f"project ({(project / '.aborist').resolve()})"


def test_home_flag_on_both_clis(clean: Path, tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(DOC, encoding="utf-8")
    home = tmp_path / "flag-home"
    assert invoke("--home", str(home), "ingest", str(doc), "--shard", "geo").exit_code == 0
    assert (home / "ledger.db").is_file()
    verified = CliRunner().invoke(ledger_cli, ["--home", str(home), "verify", "--json"])
    assert verified.exit_code == 0, verified.output
    assert json.loads(verified.stdout)["chain"]["events_checked"] == 1


def test_a_broken_config_file_is_one_line_before_anything_runs(clean: Path) -> None:
    clean.write_text("home = [unclosed\n", encoding="utf-8")
    for group in (cli, ledger_cli):
        result = CliRunner().invoke(group, ["verify", "--json"] if group is ledger_cli
                                    else ["shards"])  # fmt: skip
        assert result.exit_code == 1 and "Traceback" not in result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "is not valid TOML" in lines[0] and str(clean) in lines[0]


def _config_error(group: click.Group, args: list[str]) -> str:
    result = CliRunner().invoke(group, args)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


def test_a_config_file_named_by_aborist_config_that_is_missing_is_an_error(
    clean: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It used to be ignored in silence: every setting fell back to its default, so a
    typo in the path sent the answers to the wrong ledger."""
    missing = tmp_path / "nonexistent.toml"
    monkeypatch.setenv("ABORIST_CONFIG", str(missing))
    for group, args in ((cli, ["shards"]), (cli, ["config"]), (ledger_cli, ["verify"])):
        line = _config_error(group, args)
        assert f"ABORIST_CONFIG names the config file {missing}, which does not exist" in line
    assert not (Path(os.environ["XDG_DATA_HOME"]) / "aborist").exists()  # nothing created


def test_the_default_config_file_may_be_missing(
    clean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ABORIST_CONFIG")  # the default: $XDG_CONFIG_HOME/aborist/config.toml
    default = Path(os.environ["XDG_CONFIG_HOME"]) / "aborist" / "config.toml"
    default.unlink(missing_ok=True)
    out = json.loads(invoke("config", "--json").stdout)
    assert out["config_file"] == {"path": str(default), "exists": False}


@pytest.mark.parametrize("kind", ["directory", "unreadable", "not utf-8", "binary"])
def test_a_config_file_that_cannot_be_read_is_one_line(
    clean: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    target = tmp_path / "cfg.toml"
    if kind == "directory":
        target.mkdir()
    elif kind == "unreadable":
        target.write_text('llm_model = "m"\n', encoding="utf-8")
        target.chmod(0)
        if os.access(target, os.R_OK):  # root reads anything
            pytest.skip("running as root: a mode-0 file is still readable")
    elif kind == "not utf-8":
        target.write_bytes(b'llm_model = "caf\xe9"\n')
    else:
        target.write_bytes(bytes(range(256)))
    monkeypatch.setenv("ABORIST_CONFIG", str(target))
    line = _config_error(cli, ["shards"])
    assert str(target) in line
    assert ("cannot read the config file" in line) or ("not valid TOML" in line), line


@pytest.mark.parametrize(
    ("variable", "what"), [("ABORIST_HOME", "data home"), ("ABORIST_SHARD_DIR", "shard directory")]
)
def test_a_home_or_shard_directory_that_is_a_file_is_one_line(
    clean: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, what: str
) -> None:
    """`shards` said "no shards in FILE/shards" and exited 0; `runs` said to migrate a
    ledger under a file; `--home FILE` was already a usage error."""
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a directory\n", encoding="utf-8")
    monkeypatch.setenv(variable, str(a_file))
    for group, args in ((cli, ["shards"]), (cli, ["runs"]), (ledger_cli, ["verify"])):
        line = _config_error(group, args)
        assert line == f"Error: {variable} names {a_file} as the {what}, but it is not a directory"
    assert a_file.read_text(encoding="utf-8") == "not a directory\n"


def test_a_config_file_home_that_is_a_file_names_the_config_file(
    clean: Path, tmp_path: Path
) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.touch()
    clean.write_text(f'home = "{a_file}"\n', encoding="utf-8")
    line = _config_error(cli, ["config"])
    assert line == (
        f"Error: the config file {clean} names {a_file} as the data home, but it is not a directory"
    )
    other = tmp_path / "elsewhere"  # a flag wins over the file, and only the winner counts
    result = invoke("--home", str(other), "config", "--json")
    assert result.exit_code == 0, result.output
