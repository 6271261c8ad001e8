"""Break the report, then mend it: a run whose payloads are not in the shape the pipeline
writes (canonical JSON, every later hash recomputed, so the chain holds) made
``aborist-ledger report`` die with a traceback (``'list' object has no attribute 'get'``,
``'str' object has no attribute 'get'``). The page is now written with each section it
could not read named in place of the section (nothing half-drawn), and the command says
which on stderr and exits 1. Both backends."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from aborist.audit import replay
from aborist.audit.report import report_page
from cli.audit.audit_cmd import report as report_command
from cli.audit.ledger_cli import cli
from tests.audit.builders import Built
from tests.ledger.test_verify_chain_roots import _rechain

if report_command.name not in cli.commands:
    cli.add_command(report_command)


@pytest.mark.parametrize(
    ("payload", "unreadable"),
    [
        ("[1,2,3]", ["answer", "evidence"]),
        ('{"answer":5,"citations":7,"units":"x"}', ["answer", "evidence"]),
    ],
    ids=["an_array", "fields_of_other_types"],
)
def test_a_rendering_of_another_shape_is_named_not_a_traceback(
    built: Built, tmp_path: Path, payload: str, unreadable: list[str]
) -> None:
    lg = built.ledger
    ev = built.event(built.lattice, "qa.answer_rendered")
    _rechain(lg, ev.seq, payload=payload)
    assert not replay(lg).ok  # the audit names the payload (envelope or the run checks)
    html, names = report_page(lg, built.lattice)
    assert names == unreadable
    for name in unreadable:
        assert f'id="unreadable-{name}"' in html
    assert 'id="answer"' not in html  # nothing of the half-read section is shown
    assert html.rstrip().endswith("</html>") and 'id="chain"' in html  # the rest is drawn

    out = tmp_path / "r.html"
    result = CliRunner().invoke(cli, ["report", built.lattice, "-o", str(out), "--db", built.url])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert result.output.strip().splitlines() == [
        f"report: wrote {out}, but its {', '.join(unreadable)} section(s) could not be read "
        "from the run's events (a payload not in the shape this code reads); run "
        "`aborist-ledger replay`"
    ]
    assert out.read_text(encoding="utf-8") == html


def test_an_honest_run_reports_whole(built: Built, tmp_path: Path) -> None:
    html, names = report_page(built.ledger, built.lattice)
    assert names == [] and "unreadable-" not in html
    out = tmp_path / "r.html"
    result = CliRunner().invoke(cli, ["report", built.lattice, "-o", str(out), "--db", built.url])
    assert result.exit_code == 0 and result.output == f"wrote {out}\n", result.output
