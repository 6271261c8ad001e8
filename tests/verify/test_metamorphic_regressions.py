"""Regressions found by the metamorphic tests (tests/verify/test_metamorphic.py): a
canonically equivalent rewrite of the question, the evidence or the answer changed a
verdict (docs/verifier.md §1, "Invariance")."""

from __future__ import annotations

import json

from aborist.verify.claims import parse_claims
from aborist.verify.evidence import build_evidence
from aborist.verify.rules.titles import whole_title
from aborist.verify.text.sentences import split_sentences
from aborist.verify.units import segment_prose
from aborist.verify.verify import verify_answer

MUTEX = (
    "To access the data inside the mutex, we use the lock method to acquire the lock. This "
    "call will block the current thread so that it can\u2019t do any work until it\u2019s our "
    "turn to have the lock."
)
HAT = (
    "Imagine we\u2019re implementing a game where, if you roll a 3 on a dice roll, your player "
    "doesn\u2019t move but instead gets a fancy new hat. If you roll a 7, your player loses a "
    "fancy hat."
)


def _sig(answer: str, evidence: list[str], question: str) -> tuple[str, int, str]:
    v = verify_answer(answer, build_evidence(evidence), question=question)
    return v.label, v.rung, v.audit_mode


def test_a_line_break_in_the_question_is_a_space() -> None:
    """The question's frame was read on the raw text: "to\\nlock block" was not the
    relation "lock block", so "the lock" (the object of 'acquire', not of 'block') was
    verified."""
    plain = _sig("the lock", [MUTEX], "What does the call to lock block?")
    assert plain[0] == "PARTIAL"
    assert _sig("the lock", [MUTEX], "What does the call to\nlock block?") == plain
    assert _sig("the lock", [MUTEX], "What does the call\r\nto lock block?") == plain


def test_zero_width_characters_in_question_words_are_not_there() -> None:
    """A zero-width joiner or space inside a question word cut it in two for the rules
    that read the raw question ("Wh\\u200dich number" was no "which" question)."""
    plain = _sig("3", [HAT], "Which number do you roll to get a fancy new hat?")
    assert plain[0] == "VERIFIED"
    for mark in ("\u200d", "\u200b", "\u2060", "\ufeff"):
        q = f"Wh{mark}ich num{mark}ber do you roll to get a fan{mark}cy new hat?"
        assert _sig("3", [HAT], q) == plain, mark


DEADLOCK = (
    "- Race conditions, in which threads are accessing data or resources in an inconsistent "
    "order - Deadlocks, in which two threads are waiting for each other, preventing both "
    "threads from continuing - Bugs that only happen in certain situations"
)


def test_a_flattened_list_is_cut_whatever_the_dash_and_spaces() -> None:
    """The line structure was read on the raw text: a list flattened onto one line was
    cut into its items at " - " only, so with a U+2010 or U+2013, an NBSP, two spaces or
    a soft line break around the dash, or a BOM before the first marker, the items ran
    together and "Race conditions, in which two threads are waiting for each other" was
    found in one "sentence"."""
    answer = (
        "Race conditions, in which two threads are waiting for each other, preventing both "
        "threads from continuing [E1]"
    )
    q = "What is a deadlock?"

    def sig(text: str) -> tuple[str, int, str]:
        v = verify_answer(answer, build_evidence([text]), question=q, mode="claim-lattice")
        return v.label, v.rung, v.audit_mode

    plain = sig(DEADLOCK)
    assert plain[0] == "UNSUPPORTED"
    assert len(split_sentences(DEADLOCK)) == 3
    for rewritten in (
        DEADLOCK.replace(" - ", " \u2010 "),
        DEADLOCK.replace(" - ", " \u2013 "),
        DEADLOCK.replace(" ", "\u00a0"),
        DEADLOCK.replace(" ", "  "),
        DEADLOCK.replace("order - ", "order -\n"),
        "\ufeff\u00a0" + DEADLOCK,
    ):
        assert split_sentences(rewritten) == split_sentences(DEADLOCK), rewritten
        assert sig(rewritten) == plain, rewritten


def test_blank_lines_headings_and_items_are_read_in_canonical_form() -> None:
    """A line of only an NBSP or a zero-width space is blank; CR LF breaks lines like LF;
    an NBSP after a heading's or an item's marker is a space; a U+2013 opens an item like
    "-"."""
    plain = "# Setup\n- install it first\n\nThen run it"
    cut = ["# Setup", "- install it first", "Then run it"]
    assert split_sentences(plain) == cut
    assert split_sentences(plain.replace("\n\n", "\n\u00a0\n")) == cut
    assert split_sentences(plain.replace("\n\n", "\n\u200b\n")) == cut
    assert split_sentences(plain.replace("\n", "\r\n")) == cut
    assert split_sentences(plain.replace("# ", "#\u00a0").replace("- ", "-\u00a0")) == cut
    assert split_sentences(plain.replace("- ", "\u2013 ")) == cut


def test_a_pointer_tag_is_read_on_the_canonical_line() -> None:
    """Pointer tags and bullets were looked for on the raw answer line: a zero-width
    character inside ``[E1]`` left a claim without its pointer (UNSUPPORTED), and in quote
    mode left the tag in the unit's text."""
    evidence = build_evidence(["The museum opened in 1902 in Bergen."])
    claim = "The museum opened in 1902 in Bergen."
    for tag in ("[E\u200b1]", "[\u200dE1\u2060]", "[\ufeffE1]", "[E1,\u00a0E1]"):
        parsed = parse_claims(f"\u2013 {claim} {tag}")
        assert [(c.claim_text, c.pointer_ids) for c in parsed] == [(claim, ("E1",))], tag
        lattice = verify_answer(f"{claim} {tag}", evidence, mode="claim-lattice")
        assert (lattice.label, lattice.rung) == ("VERIFIED", 1), tag
        (unit,) = segment_prose(f"{claim} {tag}")
        assert unit.text == claim, tag
    as_json = json.dumps([{"claim": claim, "evidence": ["E\u200b1"]}], ensure_ascii=False)
    json_claims = parse_claims(as_json)
    assert [c.pointer_ids for c in json_claims] == [("E1",)]


def test_a_quotation_s_neighbours_are_found_at_its_canonical_length() -> None:
    """``whole_title`` found the quotation in the canonical unit but stepped past it by
    the raw quotation's length: an NFD "Zénón" (two characters longer) took "erona" for
    the unit's own neighbour, so "Verona" counted as a longer title around it."""
    ev = build_evidence(["The church of Saint Z\u00e9n\u00f3n Verona was built in 1120."])
    for quote in ("Z\u00e9n\u00f3n", "Ze\u0301no\u0301n", "\u200bZ\u00e9n\u00f3n"):
        assert whole_title(quote, ev, unit=f'Saint "{quote}" Verona'), repr(quote)
    assert not whole_title("Ze\u0301no\u0301n", ev, unit='the saint "Ze\u0301no\u0301n"')
