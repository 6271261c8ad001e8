"""The offline extractive answerer: which sentences it picks, in which order, and when it
declines. Pure functions of (question, evidence, mode)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from aborist.clients.extractive import (
    ABBREVIATIONS,
    CLOSEST_PREFIX,
    ExtractiveClient,
    closest_passages,
    extract,
    question_relation,
    whole_sentences,
)
from aborist.clients.relation import Relation
from aborist.corpus.ingest import ingest
from aborist.prompts import CANNOT_ANSWER, MODE_QUOTE, build_messages
from aborist.verify.evidence import build_evidence
from aborist.verify.verify import verify_answer
from cli.main import cli
from ledger.store import Ledger

# Both under the section heading of the reference (a keyword the question names as code,
# "a for loop", is held by the sentences of the section the heading names it in).
FOR_LOOP = (
    (
        "E1",
        'The "for" statement\n'
        'When "break" passes control out of a "try" statement with a "finally" clause, '
        'that "finally" clause is executed before really leaving the loop.',
    ),
    (
        "E2",
        'The "for" statement\n'
        'When the iterator is exhausted, the suite in the "else" clause, if present, is '
        "executed, and the loop terminates.",
    ),
)


def test_word_pairs_break_ties_on_coverage() -> None:
    # Both sentences cover every content word of the question (default, clause, loop,
    # executed); only the second holds the pair "default clause", which is what it asks about.
    evidence = (
        ("E1", "A clause of the loop is executed by default when the loop ends."),
        ("E2", "The default clause is executed when the loop ends."),
    )
    answer = extract("When is the default clause of a loop executed?", evidence, "claim-lattice")
    assert [line[-4:] for line in answer.splitlines()] == ["[E2]", "[E1]"]


def test_a_keyword_the_question_names_must_be_held() -> None:
    # "the else clause of a for loop": "else" and "for" are names here, not stopwords; the
    # "finally" sentence holds "for" through its section heading but not "else"
    answer = extract("When is the else clause of a for loop executed?", FOR_LOOP, "claim-lattice")
    assert answer.splitlines() == [
        'When the iterator is exhausted, the suite in the "else" clause, if present, is '
        "executed, and the loop terminates. [E2]"
    ]


def test_rare_stopwords_outweigh_common_ones() -> None:
    # Every sentence covers the one content word and none holds a question pair; E1 shares
    # more of the question's words ("of", "a"), E2 shares the rarer "with", which wins.
    evidence = (
        ("E1", "A statement of a unit is one of a kind."),
        ("E2", "With care the statement ends."),
        ("E3", "Of a kind, a statement is of a unit."),
    )
    answer = extract("statement with of a", evidence, "claim-lattice")
    assert answer.splitlines()[0].endswith("[E2]")


def test_coverage_comes_before_any_tie_break() -> None:
    evidence = (
        ("E1", "The else clause is a clause of the loop."),
        ("E2", "The else clause runs when the loop is exhausted and the iterator is done."),
    )
    # "exhausted" is only in E2: higher coverage wins whatever the pairs say.
    answer = extract("When does the else clause run after the loop is exhausted?", evidence, "x")
    assert answer.splitlines()[0].endswith("[E2]")


def test_declines_below_min_coverage() -> None:
    evidence = (("E1", "The Silverrun River is 412 kilometres long."),)
    assert extract("Who founded the Glass Lake monastery?", evidence, "claim-lattice") == (
        CANNOT_ANSWER  # and names no passage: none shares a word with the question
    )


def test_quote_mode_wraps_sentences_without_quotes() -> None:
    evidence = (("E1", "The Silverrun River is 412 kilometres long."),)
    answer = extract("How long is the Silverrun River?", evidence, MODE_QUOTE)
    assert answer == '"The Silverrun River is 412 kilometres long." [E1]'


def test_same_prompt_same_bytes_through_the_client() -> None:
    ev = build_evidence([{"text": t, "source_uri": f"doc{i}"} for i, (_, t) in enumerate(FOR_LOOP)])
    messages = build_messages("When is the else clause of a for loop executed?", ev, "quote")
    first = ExtractiveClient().complete(messages)
    second = ExtractiveClient().complete(messages)
    assert first.text == second.text
    assert first.model == "extractive/8"
    assert "iterator is exhausted" in first.text.splitlines()[0]


def test_a_sentence_that_opens_with_the_pair_comes_first() -> None:
    evidence = (
        ("E1", 'The "try" statement and the "with" statement provide ways to do this.'),
        ("E2", 'The "with" statement is used to wrap the execution of a block.'),
    )
    answer = extract("What does the with statement do?", evidence, "claim-lattice")
    assert answer.splitlines()[0].endswith("[E2]")


# --- whole sentences ---------------------------------------------------------------------


def test_abbreviations_and_initials_never_end_a_sentence() -> None:
    para = (
        "Gen. Robert E. Lee surrendered at Appomattox, e.g. to Lt. Grant, i.e. the Union. "
        "Dr. Smith agreed. The U.S. Army kept records."
    )
    assert whole_sentences(para) == [
        "Gen. Robert E. Lee surrendered at Appomattox, e.g. to Lt. Grant, i.e. the Union.",
        "Dr. Smith agreed.",
        "The U.S. Army kept records.",
    ]
    assert {"gen", "e.g", "i.e", "dr"} <= ABBREVIATIONS


def test_a_sentence_is_not_cut_inside_a_quotation_and_keeps_its_closing_quote() -> None:
    para = "Cargo has generated a “Hello, world!” program for you. Run it with cargo run."
    assert whole_sentences(para) == [
        "Cargo has generated a “Hello, world!” program for you.",
        "Run it with cargo run.",
    ]
    assert whole_sentences('He said "Stop." Then he left.') == ['He said "Stop."', "Then he left."]


def test_an_answer_holds_only_whole_sentences() -> None:
    evidence = (("E1", "Gen. Robert E. Lee commanded the Army of Northern Virginia in 1862."),)
    answer = extract("Who commanded the Army of Northern Virginia?", evidence, "claim-lattice")
    assert answer == "Gen. Robert E. Lee commanded the Army of Northern Virginia in 1862. [E1]"


# --- the question's relation -------------------------------------------------------------


def test_question_relation_reads_the_frame_and_the_anchor() -> None:
    assert question_relation("What is ownership?") == Relation("definition", (("ownership",),))
    rules = question_relation("What are the three rules of ownership?")
    assert (rules.kind, rules.plural) == ("definition", True)
    assert question_relation("What does the pass statement do?").action
    assert question_relation("How many bytes is a char?").kind == "count"
    assert question_relation("Why does Rust not have null?").kind == "cause"
    assert question_relation("What does Rc<T> stand for?").kind == "abbreviation"
    cmp = question_relation("What is the difference between a tuple and an array?")
    assert cmp == Relation("comparison", (("a", "tuple"), ("an", "array")))
    assert question_relation("Tell me about loops").kind is None


OWNERSHIP = (
    "Returning values can also transfer ownership. Ownership is a set of rules that govern "
    "how a Rust program manages memory. Because ownership is a new concept, it takes time."
)


def test_a_definition_comes_before_a_sentence_that_only_mentions_the_anchor() -> None:
    # every sentence covers "ownership"; only the second defines it
    answer = extract("What is ownership?", (("E1", OWNERSHIP),), "claim-lattice")
    assert answer == (
        "Ownership is a set of rules that govern how a Rust program manages memory. [E1]"
    )


def test_a_subordinate_clause_or_a_negation_is_not_a_definition() -> None:
    evidence = (
        ("E1", "If the closure returns false, the value is skipped."),
        ("E2", "A closure cannot be returned directly from every function."),
        ("E3", "Closures are anonymous functions you can save in a variable."),
    )
    answer = extract("What is a closure?", evidence, "claim-lattice")
    assert answer == "Closures are anonymous functions you can save in a variable. [E3]"


def test_a_count_question_prefers_the_sentence_with_a_number() -> None:
    evidence = (
        ("E1", "The bovine coronavirus genome is studied by many virologists."),
        ("E2", "The bovine coronavirus genome is a sequence counting 30,847 nucleotides."),
    )
    q = "How many nucleotides does the bovine coronavirus genome contain?"
    assert extract(q, evidence, "claim-lattice").splitlines()[0].endswith("[E2]")


def test_a_why_question_prefers_a_cause() -> None:
    evidence = (
        ("E1", "The stack stores values in the order it gets them."),
        ("E2", "Pushing to the stack is faster because the allocator never has to search."),
        ("E3", "The stack and the heap are parts of memory available to your code."),
    )
    answer = extract("Why is pushing to the stack faster?", evidence, "claim-lattice")
    assert answer == (
        "Pushing to the stack is faster because the allocator never has to search. [E2]"
    )


def test_a_comparison_needs_both_sides_and_a_contrast() -> None:
    evidence = (
        ("E1", "A tuple groups values; an array is a collection of values."),
        ("E2", "Unlike a tuple, every element of an array must have the same type."),
    )
    answer = extract(
        "What is the difference between a tuple and an array?", evidence, "claim-lattice"
    )
    assert answer.splitlines()[0].endswith("[E2]")


def test_what_are_the_rules_is_answered_with_the_list_its_lead_in_introduces() -> None:
    text = (
        "Ownership Rules\n\nFirst, let’s take a look at the ownership rules. Keep these rules "
        "in mind as we work through the examples that illustrate them:\n\n"
        "Each value in Rust has an owner.\n\nThere can only be one owner at a time.\n\n"
        "When the owner goes out of scope, the value will be dropped."
    )
    other = (
        "Closures can capture values in three ways, mapping to three rules of ownership: "
        "borrowing immutably, borrowing mutably, and taking ownership."
    )
    answer = extract(
        "What are the three rules of ownership?", (("E1", other), ("E2", text)), "claim-lattice"
    )
    assert answer == (
        "Each value in Rust has an owner. [E2]\n"
        "There can only be one owner at a time. [E2]\n"
        "When the owner goes out of scope, the value will be dropped. [E2]"
    )


def test_an_it_sentence_is_answered_with_its_antecedent() -> None:
    text = (
        'The "break" statement\n\n"break" may only occur syntactically nested in a loop.\n\n'
        "It terminates the nearest enclosing loop."
    )
    answer = extract("What does the break statement do?", (("E1", text),), "claim-lattice")
    assert answer == (
        '"break" may only occur syntactically nested in a loop. [E1]\n'
        "It terminates the nearest enclosing loop. [E1]"
    )


# --- the refusal -------------------------------------------------------------------------


def test_a_refusal_names_the_closest_passages() -> None:
    evidence = (
        ("E1", "The Silverrun River is 412 kilometres long."),
        ("E2", "The Glass Lake lies north of the river."),
        ("E3", "Bananas are yellow."),
    )
    answer = extract("Who founded the Glass Lake monastery?", evidence, "claim-lattice")
    assert answer == f"{CANNOT_ANSWER}\n{CLOSEST_PREFIX} [E2]"
    assert closest_passages(answer) == ["E2"]
    assert closest_passages("Some answer. [E1]") == []
    assert closest_passages(CANNOT_ANSWER) == []


def test_the_refusal_is_ungrounded_in_both_modes() -> None:
    evidence = build_evidence(["The Glass Lake lies north of the river.", "Bananas are yellow."])
    pairs = tuple((ev.pointer_id, ev.text) for ev in evidence)
    for mode in ("claim-lattice", MODE_QUOTE):
        answer = extract("Who founded the Glass Lake monastery?", pairs, mode)
        assert closest_passages(answer) == ["E1"]
        verdict = verify_answer(answer, evidence, question="Who founded it?", mode=mode)
        assert verdict.audit_mode == "UNGROUNDED"


def test_aborist_query_prints_the_closest_passages_of_a_refusal(
    ledger_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "rivers.md").write_text(
        "# Rivers of Eldoria\n\nThe Silverrun River flows north into the Glass Lake.\n\n"
        "The Silverrun River is 412 kilometres long.\n",
        encoding="utf-8",
    )
    with Ledger.open(ledger_url) as lg:  # a query reads only shards its ledger recorded
        ingest([docs / "rivers.md"], "geo", shards_dir=tmp_path / "shards", ledger=lg)
    monkeypatch.setenv("ABORIST_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ABORIST_SHARD_DIR", str(tmp_path / "shards"))
    for name in ("ABORIST_DB_URL", "ABORIST_LLM_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    result = CliRunner().invoke(
        cli, ["query", "Who founded the Glass Lake monastery?", "--db", ledger_url]
    )
    assert result.exit_code == 0, (result.output, result.exception)
    out = result.stdout
    assert out.startswith(f"{CANNOT_ANSWER}\n{CLOSEST_PREFIX} [E1]\n")
    assert "Closest passages found (they do not answer the question):" in out
    assert "[E1] Rivers of Eldoria" in out and "flows north into the Glass Lake" in out
    assert "UNGROUNDED" in out
    answered = CliRunner().invoke(
        cli, ["query", "How long is the Silverrun River?", "--db", ledger_url]
    )
    assert answered.exit_code == 0 and "Closest passages" not in answered.stdout
