"""Questions written in FTS5's query language (a lone quote, ``*``, ``NEAR(``, ``a OR``,
``-``, ``^``) and questions with nothing to search for, asked through every door:
``aborist retrieve``, ``aborist query``, ``aborist query --batch`` and the ``serve`` API
and ask page. A question with no searchable word is refused the same way everywhere (one
line, exit 1; HTTP 400 with a JSON error); one that still has words once its syntax is
taken as text is searched for those words. ``aborist retrieve`` used to print an empty
ranking and exit 0 for the first kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aborist.server import ServerConfig, create_app
from tests.server.conftest import Client
from tests.test_cli_query import (  # noqa: F401 (the fixtures behind "home")
    bare_home,
    built,
    fails_cleanly,
    home,
    ingested,
    invoke,
    ok,
)

#: No word to search for once FTS5's syntax is text: (question, what the refusal says).
REFUSED = [
    ('"', "has no words to search for, only punctuation"),
    ('""', "has no words to search for, only punctuation"),
    ("*", "has no words to search for, only punctuation"),
    ("-", "has no words to search for, only punctuation"),
    ("^", "has no words to search for, only punctuation"),
    ("( ) * ^ - : {}", "has no words to search for, only punctuation"),
    ("?!.,;", "has no words to search for, only punctuation"),
    ("a OR", "has only common words"),
    ("what is the", "has only common words"),
]
#: Words left once the syntax is text: each finds the river document.
SEARCHED = [
    "NEAR(Silverrun",
    "Silverrun*",
    '"Silverrun',
    'Silverrun" OR',
    "title:Silverrun",
    "-Silverrun ^River",
    "Silverrun AND NOT river)",
]


def _error_line(result_stderr: str) -> str:
    lines = result_stderr.strip().splitlines()
    assert len(lines) == 1, result_stderr
    return lines[0]


@pytest.mark.usefixtures("home")
@pytest.mark.parametrize(("question", "needle"), REFUSED)
def test_retrieve_refuses_a_question_with_nothing_to_search_for_as_query_does(
    question: str, needle: str
) -> None:
    retrieved = fails_cleanly(invoke("retrieve", question), needle)
    queried = fails_cleanly(invoke("query", question), needle)
    assert retrieved == queried  # the same line, word for word
    as_json = invoke("retrieve", question, "--json")
    assert json.loads(as_json.stdout) == {"error": "InputError", "detail": retrieved[7:]}


@pytest.mark.usefixtures("home")
@pytest.mark.parametrize("question", SEARCHED)
def test_retrieve_and_query_search_the_words_left_of_fts5_syntax(question: str) -> None:
    data = json.loads(ok(invoke("retrieve", "--json", "--", question)).stdout)
    assert data["mode"] in ("AND", "OR")
    assert "silverrun" in data["units"]
    assert [c["title"] for c in data["selected"]][:1] == ["Rivers of Eldoria"]
    answered = json.loads(ok(invoke("query", "--json", "--", question)).stdout)
    assert answered["evidence"] and answered["evidence"][0]["title"] == "Rivers of Eldoria"


@pytest.mark.usefixtures("home")
def test_a_word_no_document_holds_is_an_empty_result_not_an_error() -> None:
    """``NEAR(`` is the word "near": searched, found nowhere, dropped, nothing selected."""
    data = json.loads(ok(invoke("retrieve", "NEAR(", "--json")).stdout)
    assert data["units"] == ["near"] and data["selected"] == []
    assert [r["rule"] for r in data["rewrites"]] == ["unmatched"]


@pytest.mark.usefixtures("home")
def test_batch_fails_each_question_with_nothing_to_search_for_and_answers_the_rest(
    tmp_path: Path,
) -> None:
    lines = [{"id": f"bad{i}", "question": q} for i, (q, _) in enumerate(REFUSED)]
    lines.append({"id": "good", "question": 'NEAR(Silverrun" length'})
    batch = tmp_path / "questions.jsonl"
    batch.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    result = invoke("query", "--batch", str(batch))
    assert result.exit_code == 1 and "Traceback" not in result.output
    out = {a["id"]: a for a in map(json.loads, result.stdout.splitlines())}
    for i, (_, needle) in enumerate(REFUSED):
        assert out[f"bad{i}"]["error_type"] == "InputError"
        assert needle in out[f"bad{i}"]["error"]
    assert "error" not in out["good"] and out["good"]["evidence"]
    assert f"{len(REFUSED)} failed" in result.stderr


@pytest.fixture
def api(request: pytest.FixtureRequest, tmp_path: Path) -> Client:
    """The serve app over the same home (its ledger records both shards)."""
    import os

    request.getfixturevalue("home")
    url = f"sqlite:///{tmp_path / 'home' / 'ledger.db'}"
    config = ServerConfig(ledger_url=url, shards_dir=Path(os.environ["ABORIST_SHARD_DIR"]))
    return Client(create_app(config))


@pytest.mark.parametrize(("question", "needle"), REFUSED)
def test_serve_refuses_the_same_questions_with_a_400(
    api: Client, question: str, needle: str
) -> None:
    with api:
        r = api.post("/api/v1/query", json={"question": question})
        assert r.status_code == 400, r.text
        body = r.json()
        assert body["error"] == "bad_request" and needle in body["detail"]
        assert "run_id" not in body  # refused before any event
        page = api.post("/ask", data={"question": question})
        assert page.status_code == 400 and "Traceback" not in page.text


@pytest.mark.parametrize("question", SEARCHED[:3])
def test_serve_answers_the_words_left_of_fts5_syntax(api: Client, question: str) -> None:
    with api:
        r = api.post("/api/v1/query", json={"question": question})
        assert r.status_code == 200, r.text
        assert r.json()["evidence"][0]["title"] == "Rivers of Eldoria"
