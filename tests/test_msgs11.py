"""Messages that name the right cause (msgs11): each test fails without its fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import cli


def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("ABORIST_CONFIG", str(path))
    return path


def _error_line(args: list[str]) -> str:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# --- 1. a bad base URL or timeout is named by where it came from -------------------------


def test_bad_base_url_and_timeout_name_their_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ask = ["query", "How long is the Silverrun River?", "--model", "openai"]
    cfg = _config(tmp_path, monkeypatch, 'llm_base_url = "not a url"\nllm_model = "m"\n')
    assert _error_line(ask) == (
        f"Error: llm_base_url in the config file {cfg} must be an http(s) URL; found 'not a url'"
    )
    assert _error_line([*ask, "--base-url", "still not"]) == (
        "Error: --base-url must be an http(s) URL; found 'still not'"
    )
    monkeypatch.setenv("ABORIST_LLM_BASE_URL", "ftp://host")
    assert _error_line(ask) == (
        "Error: ABORIST_LLM_BASE_URL must be an http(s) URL; found 'ftp://host/'"
    )
    cfg = _config(
        tmp_path, monkeypatch, 'llm_timeout = nan\nllm_base_url = "http://127.0.0.1:9/v1"\n'
    )
    assert _error_line([*ask, "--llm-model", "m"]) == (
        f"Error: llm_timeout in the config file {cfg} must be a positive number of "
        "seconds, not 'nan'"
    )
    monkeypatch.setenv("ABORIST_LLM_TIMEOUT", "soon")
    assert _error_line([*ask, "--llm-model", "m"]) == (
        "Error: ABORIST_LLM_TIMEOUT must be a positive number of seconds, not 'soon'"
    )
    monkeypatch.delenv("ABORIST_LLM_TIMEOUT")
    _config(tmp_path, monkeypatch, "")
    assert _error_line(["query", "x", "--model", "anthropic", "--base-url", "zz",
                        "--llm-model", "m", "--api-key", "k"]) == (
        "Error: --base-url must be an http(s) URL; found 'zz'"
    )  # fmt: skip


# --- 2. a batch line says a field is missing, or what it holds instead of a string --------


def test_batch_question_that_is_not_a_string_says_so() -> None:
    from aborist.pipeline.batch import parse_questions

    lines = ['{"question": 5}', '{"question": ["Why?"]}', '{"question": null}', "{}"]
    _, problems = parse_questions(lines)
    assert [str(p) for p in problems] == [
        "line 1: the question must be a string; found a number; skipped",
        "line 2: the question must be a string; found an array; skipped",
        "line 3: the question must be a string; found null; skipped",
        "line 4: missing or empty question; skipped",
    ]


def test_verify_batch_says_a_missing_answer_is_missing(tmp_path: Path) -> None:
    batch = tmp_path / "in.jsonl"
    batch.write_text(
        '{"id": "a", "evidence": ["x"]}\n{"id": "b", "answer": 5, "evidence": ["x"]}\n'
        '{"id": "c", "answer": "x", "question": true, "evidence": ["x"]}\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["verify", "--batch", str(batch)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert lines[:3] == [
        "line 1: missing 'answer'",
        "line 2: 'answer' must be a string; found a number",
        "line 3: 'question' must be a string; found a boolean",
    ]


# --- 3. a DOCX without a main document part says so, without a Python exception name -----


def _docx_with(types: bytes | None = None, drop: str | None = None) -> bytes:
    import io
    import zipfile

    from tests.corpus.documents import make_docx

    base = zipfile.ZipFile(io.BytesIO(make_docx([("p", "Hello.")])))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for name in base.namelist():
            if name == drop:
                continue
            body = base.read(name)
            if name == "[Content_Types].xml" and types is not None:
                body = types
            package.writestr(name, body)
    return out.getvalue()


_OPC = b"http://schemas.openxmlformats.org/package/2006/content-types"


@pytest.mark.parametrize(
    ("package", "reason"),
    [
        (
            {"drop": "[Content_Types].xml"},
            "malformed DOCX: no main document part (the package has no [Content_Types].xml)",
        ),
        (
            {"types": b"<Types/>"},
            "malformed DOCX: no main document part ([Content_Types].xml is not a list of "
            "content types: its root element is 'Types' (in no namespace), not OPC's Types)",
        ),
        (
            {"types": b'<Types xmlns="%s"><Default Extension="xml" ContentType="application'
             b'/xml"/><Default Extension="jpeg" ContentType="image/jpeg"/><Default '
             b'Extension="rels" ContentType="application/vnd.openxmlformats-package.'
             b'relationships+xml"/></Types>' % _OPC},
            "malformed DOCX: no main document part ([Content_Types].xml gives "
            "'/word/document.xml' the type 'application/xml', not a Word document's)",
        ),
        (
            {"types": b"not xml"},
            "malformed DOCX: no main document part ([Content_Types].xml is not XML: Start "
            "tag expected, '<' not found, line 1, column 1 (<string>, line 1))",
        ),
        (
            {"drop": "_rels/.rels"},
            "malformed DOCX: no main document part (_rels/.rels has no officeDocument "
            "relationship)",
        ),
    ],
)  # fmt: skip
def test_docx_without_a_main_document_part_says_so(package: dict[str, Any], reason: str) -> None:
    from aborist.corpus.readers import SourceFileSkipped, extract_source

    with pytest.raises(SourceFileSkipped) as caught:
        extract_source(_docx_with(**package), "docx")
    assert caught.value.reason == reason
    assert "Error" not in reason and "KeyError" not in reason


# --- 4. a port out of range is an invalid port, not "connection refused" ------------------


@pytest.mark.parametrize("port", ["99999", "0", "70000"])
def test_base_url_with_an_invalid_port_says_so(port: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from aborist.clients.openai import OpenAICompatibleClient
    from aborist.errors import ModelError

    with pytest.raises(ModelError) as caught:
        OpenAICompatibleClient(f"http://127.0.0.1:{port}/v1", "m")
    assert str(caught.value) == (
        f"ABORIST_LLM_BASE_URL has an invalid port {port} (a port is 1 to 65535); "
        f"found 'http://127.0.0.1:{port}/v1'"
    )
    monkeypatch.setenv("ABORIST_LLM_BASE_URL", f"http://user:pw@127.0.0.1:{port}/v1?key=s")
    assert _error_line(["query", "How long is the Silverrun River?", "--llm-model", "m"]) == (
        f"Error: ABORIST_LLM_BASE_URL has an invalid port {port} (a port is 1 to 65535); "
        f"found 'http://127.0.0.1:{port}/v1'"
    )


# --- 5. a Markdown file over its own limit is skipped before it is parsed -----------------


def test_markdown_over_its_limit_is_skipped_with_the_limit_named(
    ledger_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table of narrow rows takes about 700 times its size to read; the file is
    refused before it is read whole, on SQLite and PostgreSQL alike."""
    import json

    from aborist.corpus.readers.source import MAX_MARKDOWN_BYTES

    monkeypatch.setenv("ABORIST_DB_URL", ledger_url)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "rivers.md").write_text("# Rivers\n\nThe Silverrun River is 412 km long.\n")
    row = "| a | b |\n"
    big = "| x | y |\n|---|---|\n" + row * (MAX_MARKDOWN_BYTES // len(row))
    (docs / "table.md").write_text(big, encoding="utf-8")
    assert len(big) > MAX_MARKDOWN_BYTES == 2 * 1024 * 1024
    result = CliRunner().invoke(cli, ["ingest", str(docs), "--shard", "md", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    found = json.dumps(report)
    assert "rivers.md" in found
    reason = f"larger than the 2 MiB limit for one Markdown file ({len(big)} bytes)"
    assert f'"reason": "{reason}"' in found
