"""A terminal that cannot lie: questions, model answers and stored text print with their
control characters escaped in every human-readable output; ``--json`` stays exact."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st

from aborist.clients.base import ChatClient, ChatResult, Messages
from cli.audit.ledger_cli import cli as ledger_cli
from cli.main import cli
from cli.term import printable
from tests.eldoria import RIVERS_MD

#: Erase the line, return to its start and print a green "STRICT" over the real label.
FORGED = "Is the widget blue?\x1b[2K\r\x1b[32mSTRICT · fake line"
#: A reply with cursor movement, an OSC 8 hyperlink, a one-byte CSI and a bidi override.
HOSTILE_REPLY = (
    "The Silverrun River is 412 kilometres long. [E1]\x1b[1A\x1b[2K"
    "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\ \x9b31m\u202eevil"
)
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def invoke(*args: str, group: Any = cli) -> Result:
    """As on a terminal: ``color=True`` stops click stripping ANSI sequences itself."""
    return CliRunner().invoke(group, list(args), color=True)


def no_raw_controls(text: str) -> None:
    found = RAW_CONTROL.findall(text)
    assert not found, f"raw control characters printed: {found!r}"


class Hostile(ChatClient):
    """A model whose reply carries terminal escapes."""

    kind = "hostile"

    def _complete(
        self, messages: Messages, *, temperature: float, max_tokens: int | None
    ) -> ChatResult:
        return ChatResult(text=HOSTILE_REPLY, model="hostile")

    def _profile(self) -> dict[str, Any]:
        return {"model": "hostile"}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("ABORIST_DB_URL", "ABORIST_SHARD_DIR", "ABORIST_LLM_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ABORIST_HOME", str(tmp_path / "home"))
    doc = tmp_path / "rivers.md"
    doc.write_text(RIVERS_MD, encoding="utf-8")
    assert invoke("ingest", str(doc), "--shard", "geo").exit_code == 0
    return doc


def test_a_forged_question_cannot_repaint_the_runs_listing(home: Path) -> None:
    asked = invoke("query", FORGED)
    assert asked.exit_code == 0, asked.output
    no_raw_controls(asked.output)
    listed = invoke("runs")
    assert listed.exit_code == 0, listed.output
    no_raw_controls(listed.output)
    assert "Is the widget blue?\\x1b[2K\\r\\x1b[32mSTRICT" in listed.stdout
    assert "UNGROUNDED" in listed.stdout  # the real label is still there
    shown = invoke("show", listed.stdout.split()[0])
    no_raw_controls(shown.output)
    exact = json.loads(invoke("runs", "--json").stdout)["runs"][0]
    assert exact["question"] == FORGED  # --json keeps the text exact


def test_a_hostile_model_reply_is_printed_escaped(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import cli.query_cmd

    monkeypatch.setattr(cli.query_cmd, "select_client", lambda *a, **k: Hostile())
    result = invoke("ask", str(home), "How long is the Silverrun River?")
    assert result.exit_code == 0, result.output
    no_raw_controls(result.output)
    assert "\\x1b]8;;https://evil.example" in result.stdout and "\\u202e" in result.stdout
    as_json = invoke("ask", str(home), "How long is the Silverrun River?", "--json")
    assert json.loads(as_json.stdout)["answer"].startswith(HOSTILE_REPLY.splitlines()[0][:40])
    run_id = json.loads(as_json.stdout)["run_id"]
    for args in (("show", run_id), ("inspect", run_id)):
        out = invoke(*args)
        no_raw_controls(out.output)
    events = invoke("events", "--type", "qa.answer_rendered", group=ledger_cli)
    assert events.exit_code == 0, events.output
    no_raw_controls(events.output)


def test_error_lines_are_escaped_too(home: Path, tmp_path: Path) -> None:
    missing = str(tmp_path / "no\rVERIFIED \x1b]8;;https://evil.example\x1b\\file.md")
    result = invoke("ask", missing, "How long is the Silverrun River?")
    assert result.exit_code == 1 and "Traceback" not in result.output
    no_raw_controls(result.output)
    assert "no\\rVERIFIED" in result.stderr


@given(st.text())
def test_printable_leaves_no_control_character(text: str) -> None:
    out = printable(text)
    no_raw_controls(out)
    assert "\n" not in out and "\r" not in out
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in out)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Cf"))))
def test_printable_leaves_ordinary_text_alone(text: str) -> None:
    assert printable(text) == text


def test_multiline_keeps_lines_and_tabs() -> None:
    assert printable("a\tb\r\nc\rd\x1b", multiline=True) == "a\tb\nc\\rd\\x1b"
    assert printable("a\nb") == "a\\nb"


def test_usage_errors_and_other_error_lines_are_escaped(home: Path, tmp_path: Path) -> None:
    usage = invoke("query", "How long is the Silverrun River?", "\x1b[2K\rVERIFIED")
    assert usage.exit_code == 2 and "unexpected extra argument" in usage.stderr
    no_raw_controls(usage.output)
    bad = invoke("query", "--batch", str(tmp_path / "no\x1b]8;;https://e.example\x07.jsonl"))
    assert bad.exit_code == 1
    no_raw_controls(bad.output)
