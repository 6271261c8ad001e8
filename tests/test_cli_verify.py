"""`aborist verify`: single answer, --json, --batch with malformed lines."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from cli.verify_cmd import verify

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


@pytest.fixture
def cli() -> click.Group:
    @click.group()
    def group() -> None:
        """Test group."""

    group.add_command(verify)
    return group


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    ev1 = tmp_path / "policy.txt"
    ev1.write_text(
        "Annual leave must be approved by a line manager before it is taken.", encoding="utf-8"
    )
    ev2 = tmp_path / "remote.txt"
    ev2.write_text("Remote work requires written consent from HR.", encoding="utf-8")
    good = tmp_path / "good.txt"
    good.write_text("“Annual leave must be approved by a line manager”", encoding="utf-8")
    lattice = tmp_path / "lattice.txt"
    lattice.write_text(
        "Remote work requires written consent from HR. [E2]\nIt is popular.", encoding="utf-8"
    )
    return {"ev1": ev1, "ev2": ev2, "good": good, "lattice": lattice}


def test_help_has_example(cli: click.Group) -> None:
    result = CliRunner().invoke(cli, ["verify", "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.output and "--batch" in result.output


def test_single_answer_human_output(cli: click.Group, files: dict[str, Path]) -> None:
    result = CliRunner().invoke(
        cli, ["verify", "--answer", str(files["good"]), "--evidence", str(files["ev1"])]
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("VERIFIED  (rung 1/4, audit_mode STRICT, quote mode)")
    assert "checked: every claim occurs word for word inside one sentence" in result.output
    assert "  ✓ verified 1. quote/verbatim [E1]: " in result.output


def test_verify_marks_claims_as_query_does(cli: click.Group, files: dict[str, Path]) -> None:
    from cli.marks import claim_mark
    from cli.query_view import claim_lines

    result = CliRunner().invoke(
        cli,
        ["verify", "--answer", str(files["lattice"]), "--evidence", str(files["ev1"]),
         "--evidence", str(files["ev2"]), "--json"],
    )  # fmt: skip
    verdict = json.loads(result.output)
    human = CliRunner().invoke(
        cli,
        ["verify", "--answer", str(files["lattice"]), "--evidence", str(files["ev1"]),
         "--evidence", str(files["ev2"])],
    ).output  # fmt: skip
    marks = [claim_mark(u["verified"], u["grade"]) for u in verdict["units"]]
    assert "✓ verified" in marks and "✗ unsupported" in marks
    for unit, mark in zip(verdict["units"], marks, strict=True):
        assert f"  {mark} {unit['index'] + 1}. " in human
    query_lines = claim_lines(verdict)
    for unit, mark in zip(verdict["units"], marks, strict=True):
        assert any(line.startswith(f"  {mark}") and unit["text"] in line for line in query_lines)
    assert {
        claim_mark(True, "verbatim"),
        claim_mark(True, "paraphrase"),
        claim_mark(False, None),
    } == {"✓ verified", "~ supported", "✗ unsupported"}


def test_json_claim_lattice(cli: click.Group, files: dict[str, Path]) -> None:
    args = ["verify", "--answer", str(files["lattice"]), "--evidence", str(files["ev1"]),
            "--evidence", str(files["ev2"]), "--mode", "claim-lattice", "--json"]  # fmt: skip
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert (out["audit_mode"], out["label"], out["n_units"], out["n_verified"]) == (
        "HYBRID",
        "PARTIAL",
        2,
        1,
    )
    assert out["rung"] == 3
    assert out["units"][1]["checks"][0] == {"check": "parser_succeeded", "status": "fail"}
    assert out["evidence"][1]["pointer_id"] == "E2"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["verify"], "give --answer FILE"),
        (
            ["verify", "--answer", "/nonexistent/a.txt", "--evidence", "/nonexistent/e.txt"],
            "answer file not found",
        ),
        (["verify", "--batch", "/nonexistent.jsonl", "--answer", "x"], "cannot be combined"),
    ],
)
def test_bad_input_is_one_clean_line(cli: click.Group, args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output


def test_batch_reports_malformed_lines_and_runs_the_rest(cli: click.Group, tmp_path: Path) -> None:
    batch = tmp_path / "in.jsonl"
    lines = [
        json.dumps({"id": "a", "answer": "Delhi", "evidence": ["The head office is in Delhi."]}),
        "{not json",
        json.dumps(
            {
                "id": "b",
                "answer": "Paris [E1]",
                "mode": "claim-lattice",
                "evidence": [{"text": "Paris is big.", "source_role": "untrusted"}],
            }
        ),
        json.dumps({"answer": "no id", "evidence": ["x"]}),
        "",
        json.dumps({"id": 3, "question": "Where?", "answer": "Oslo", "evidence": ["Bergen."]}),
    ]
    batch.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["verify", "--batch", str(batch)])
    assert result.exit_code == 1
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(o["id"], o["audit_mode"], o["label"]) for o in out] == [
        ("a", "STRICT", "VERIFIED"),
        ("b", "UNGROUNDED", "UNSUPPORTED"),
        (3, "UNGROUNDED", "UNSUPPORTED"),
    ]
    assert {"id", "audit_mode", "label", "units", "violations"} <= set(out[0])
    assert out[1]["violations"][0]["code"] == "SOURCE_ROLE_DENIED"
    assert "line 2: the record is not valid JSON" in result.stderr
    assert "line 4: missing 'id'" in result.stderr
    assert "2 malformed line(s)" in result.stderr


@pytest.mark.skipif(not (DATA / "halueval").is_dir(), reason="../shared/data/halueval not present")
def test_batch_on_shared_halueval(cli: click.Group, tmp_path: Path) -> None:
    path = DATA / "halueval" / "qa_one-turn_data.json"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[:20]]
    batch = tmp_path / "halueval.jsonl"
    records = []
    for i, row in enumerate(rows):
        for kind in ("right_answer", "hallucinated_answer"):
            records.append({"id": f"{i}-{kind}", "question": row["question"], "answer": row[kind],
                            "evidence": [row["knowledge"]]})  # fmt: skip
    batch.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    result = CliRunner().invoke(cli, ["verify", "--batch", str(batch)])
    assert result.exit_code == 0, result.stderr
    out = {o["id"]: o for o in map(json.loads, result.stdout.splitlines())}
    assert len(out) == 40
    # "Arthur's Magazine": a bare span whose sentence shares no term of "which magazine was
    # started first …" (2.0): its words are in the evidence, but not shown to answer
    assert (out["0-right_answer"]["label"], out["0-right_answer"]["rung"]) == ("PARTIAL", 3)
    assert out["1-right_answer"]["rung"] == 1  # "Delhi", beside "head office"
    # entity co-occurrence only: rung 3, no longer SUPPORTED
    assert out["0-hallucinated_answer"]["rung"] == 3
    assert all(
        o["rung"] == {"VERIFIED": 1, "SUPPORTED": 2, "PARTIAL": 3, "UNSUPPORTED": 4}[o["label"]]
        for o in out.values()
    )


def test_inspect_flag_adds_diagnoses(
    cli: click.Group, tmp_path: Path, files: dict[str, Path]
) -> None:
    answer = tmp_path / "elided.txt"
    answer.write_text(
        '"Annual leave must be approved [...] before it is taken."\nBananas are yellow.',
        encoding="utf-8",
    )
    base = ["verify", "--answer", str(answer), "--evidence", str(files["ev1"]), "--inspect"]
    human = CliRunner().invoke(cli, base)
    assert human.exit_code == 0, human.output
    assert "synthetic_elision_inside_quote -> split_elision (mechanical)" in human.output
    out = json.loads(CliRunner().invoke(cli, [*base, "--json"]).output)
    assert [d["kind"] for d in out["inspect"]["diagnoses"]] == [
        "synthetic_elision_inside_quote",
        "no_overlap",
    ]


def test_batch_line_with_lone_surrogate_is_malformed(cli: click.Group, tmp_path: Path) -> None:
    batch = tmp_path / "bad.jsonl"
    batch.write_text('{"id": 1, "answer": "x\\ud800", "evidence": ["x"]}\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["verify", "--batch", str(batch)])
    assert result.exit_code == 1
    assert "line 1: contains a lone surrogate" in result.stderr


def _one_error_line(result: Result) -> str:
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output
    [line] = result.stderr.strip().splitlines()
    return line


def test_the_size_limits_are_those_of_serve_and_the_pipeline() -> None:
    from aborist.pipeline.run import MAX_ANSWER_CHARS
    from aborist.server import models
    from cli.verify_cmd import MAX_EVIDENCE_ITEMS, MAX_TEXT_CHARS

    assert MAX_TEXT_CHARS == MAX_ANSWER_CHARS == models.MAX_ANSWER_CHARS
    evidence = models.VerifyRequest.model_fields["evidence"].metadata
    assert any(getattr(m, "max_length", None) == MAX_EVIDENCE_ITEMS for m in evidence)


@pytest.mark.parametrize("which", ["answer", "evidence"])
def test_a_file_past_the_size_limit_is_refused_before_verifying(
    cli: click.Group, files: dict[str, Path], tmp_path: Path, which: str
) -> None:
    """A megabyte of short sentences as evidence took 40 s to verify, and the time grows
    faster than the text: a 15 MB file held the terminal for far longer."""
    from cli.verify_cmd import MAX_TEXT_CHARS

    big = tmp_path / "big.txt"
    big.write_text("Annual leave is approved. " * (MAX_TEXT_CHARS // 26 + 1), encoding="utf-8")
    answer, evidence = (big, files["ev1"]) if which == "answer" else (files["good"], big)
    line = _one_error_line(
        CliRunner().invoke(cli, ["verify", "--answer", str(answer), "--evidence", str(evidence)])
    )
    assert line.startswith(f"Error: the {which} file {big} is more than 200,000 characters long")


def test_a_file_at_the_size_limit_is_verified(
    cli: click.Group, files: dict[str, Path], tmp_path: Path
) -> None:
    from cli.verify_cmd import MAX_TEXT_CHARS

    text = files["ev1"].read_text(encoding="utf-8")
    at_limit = tmp_path / "limit.txt"
    at_limit.write_text(text + " " * (MAX_TEXT_CHARS - len(text)), encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["verify", "--answer", str(files["good"]), "--evidence", str(at_limit)]
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("VERIFIED")


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("directory", "cannot read answer file {path}: Is a directory"),
        ("binary", "cannot read answer file {path}: not UTF-8 text"),
    ],
)
def test_an_answer_file_that_is_not_text_is_one_plain_line(
    cli: click.Group, files: dict[str, Path], tmp_path: Path, where: str, message: str
) -> None:
    path = tmp_path / where
    if where == "directory":
        path.mkdir()
    else:
        path.write_bytes(b"\xff\xfe\x00binary\xc3")
    line = _one_error_line(
        CliRunner().invoke(cli, ["verify", "--answer", str(path), "--evidence", str(files["ev1"])])
    )
    assert line.startswith("Error: " + message.format(path=path)), line
    assert "[Errno" not in line


def test_batch_records_past_the_limits_of_serve_are_malformed_lines(
    cli: click.Group, tmp_path: Path
) -> None:
    ok = {"id": "ok", "answer": "Delhi", "evidence": ["The head office is in Delhi."]}
    records = [
        {"id": "long", "answer": "Delhi. " * 30_000, "evidence": ["Delhi."]},
        {"id": "many", "answer": "Delhi", "evidence": ["Delhi."] * 201},
        {"id": "wide", "answer": "Delhi", "evidence": [{"text": "D" * 200_001}]},
        ok,
    ]
    batch = tmp_path / "in.jsonl"
    batch.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = CliRunner().invoke(cli, ["verify", "--batch", str(batch)])
    assert result.exit_code == 1
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == ["ok"]
    assert "line 1: 'answer' is 210,000 characters long; at most 200,000" in result.stderr
    assert "line 2: 'evidence' has 201 items; at most 200" in result.stderr
    assert "line 3: evidence 1 is 200,001 characters long" in result.stderr
    assert "3 malformed line(s)" in result.stderr
