"""Repair drops a claim that contradicts its evidence; it never trims one into a fragment."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.repair.repair import REPAIR_VERSION, mechanical_repair, not_worse, repair_answer
from aborist.verify.evidence import build_evidence
from aborist.verify.inspect import inspect_answer
from aborist.verify.verify import verify_answer

OWNERSHIP = "Ownership is a set of rules that govern how a Rust program manages memory."
RULES = (
    "Memory is managed through a system of ownership with a set of rules that the compiler "
    "checks. If any of the rules are violated, the program won't compile. None of the "
    "features of ownership will slow down your program while it's running. Rust's char type "
    "is four bytes in size."
)
EV = build_evidence([OWNERSHIP, RULES])
QUESTION = "What happens when the rules of ownership are violated?"


def _repair(answer: str, mode: str) -> tuple[str, str]:
    verdict = verify_answer(answer, EV, question=QUESTION, mode=mode)
    outcome = repair_answer(answer, EV, verdict, question=QUESTION, mode=mode)
    return outcome.reason, outcome.text


def test_the_dropped_negation_claim_is_dropped_not_mangled() -> None:
    answer = f"{OWNERSHIP} [E1]\nIf any of the rules are violated, the program will compile. [E2]"
    reason, text = _repair(answer, "claim-lattice")
    assert (reason, text) == ("accepted", f"{OWNERSHIP} [E1]")
    assert ",." not in text and "violated," not in text


def test_an_added_negation_and_a_changed_number_are_dropped_in_quote_mode() -> None:
    answer = (
        f'"{OWNERSHIP}" [E1]\nSome of the features of ownership will slow down your program '
        "while it's running. Rust's char type is eight bytes in size.\n"
        '"If any of the rules are violated, the program won\'t compile." [E2]'
    )
    verdict = verify_answer(answer, EV, question=QUESTION)
    diagnoses = inspect_answer(answer, EV, verdict).diagnoses
    assert [(d.kind, d.repair) for d in diagnoses] == [
        ("contradicted_polarity", "drop_claim"),
        ("mismatched_quantity", "drop_claim"),
    ]
    result = mechanical_repair(answer, diagnoses, EV)
    assert result.text == (
        f'"{OWNERSHIP}" [E1]\n"If any of the rules are violated, the program won\'t compile." [E2]'
    )
    assert [(c.action, c.line_no, c.scope) for c in result.changes] == [("drop_claim", 2, "line")]
    assert verify_answer(result.text, EV).audit_mode == "STRICT"


def test_a_contradicted_sentence_goes_alone_from_a_line_with_a_verified_one() -> None:
    answer = f"Rust's char type is eight bytes in size. {OWNERSHIP} [E1]"
    verdict = verify_answer(answer, EV)
    assert [u.verified for u in verdict.units] == [False, True]
    result = mechanical_repair(answer, inspect_answer(answer, EV, verdict).diagnoses, EV)
    assert result.text == f"{OWNERSHIP} [E1]"
    assert [(c.kind, c.scope) for c in result.changes] == [("mismatched_quantity", "text")]


def test_a_contradicted_quotation_goes_with_its_line() -> None:
    answer = (
        'The book says "If any of the rules are violated, the program will compile."\n'
        f'It also says "{OWNERSHIP}"'
    )
    verdict = verify_answer(answer, EV)
    diagnoses = inspect_answer(answer, EV, verdict).diagnoses
    assert [(d.kind, d.is_quote) for d in diagnoses] == [("contradicted_polarity", True)]
    result = mechanical_repair(answer, diagnoses, EV)
    assert result.text == f'It also says "{OWNERSHIP}"'
    assert [(c.kind, c.scope) for c in result.changes] == [("contradicted_polarity", "line")]


def test_a_contradiction_alone_is_not_dropped_into_an_empty_answer() -> None:
    answer = "If any of the rules are violated, the program will compile. [E2]"
    verdict = verify_answer(answer, EV, mode="claim-lattice")
    result = mechanical_repair(
        answer, inspect_answer(answer, EV, verdict).diagnoses, EV, mode="claim-lattice"
    )
    assert result.text == answer
    assert [(s.kind, s.reason) for s in result.skipped] == [
        ("contradicted_polarity", "would_empty_answer")
    ]


def test_the_accept_rule_does_not_count_a_dropped_contradiction_as_support() -> None:
    answer = f"{OWNERSHIP} [E1]\nIf any of the rules are violated, the program will compile. [E2]"
    verdict = verify_answer(answer, EV, mode="claim-lattice")
    outcome = repair_answer(answer, EV, verdict, mode="claim-lattice")
    assert outcome.post_verdict is not None
    dropped_verified = sum(1 for u in verdict.units if u.verified) - outcome.post_verdict.n_verified
    # whether the verifier let the contradiction through or not, the drop is accepted
    assert outcome.accepted
    assert not_worse(verdict, outcome.post_verdict, discounted=max(dropped_verified, 0))
    assert not not_worse(verdict, outcome.post_verdict, discounted=-1)
    assert REPAIR_VERSION == "aborist-repair/3"


def test_a_trailing_tail_cut_at_a_comma_ends_the_sentence_cleanly() -> None:
    ev = build_evidence(["Revenue grew by ten percent in 2020, the report said."])
    answer = "Revenue grew by ten percent in 2020, which made it the best year ever. [E1]"
    verdict = verify_answer(answer, ev, mode="claim-lattice")
    diagnoses = inspect_answer(answer, ev, verdict).diagnoses
    assert [d.kind for d in diagnoses] == ["trailing_artifact"]
    result = mechanical_repair(answer, diagnoses, ev, mode="claim-lattice")
    assert result.text == "Revenue grew by ten percent in 2020. [E1]"


_WORD = st.from_regex(r"[bcdfghjklmpqrstvwxz]{2}[aeiou][bcdfghjklmnpqrstvwxz]{2}", fullmatch=True)


@settings(max_examples=40, deadline=None)
@given(
    words=st.lists(_WORD, min_size=6, max_size=6, unique=True),
    mark=st.sampled_from([",", ";", ":"]),
    negate=st.booleans(),
    mode=st.sampled_from(["claim-lattice", "quote"]),
)
def test_repair_never_leaves_a_clause_mark_before_a_full_stop(
    words: list[str], mark: str, negate: bool, mode: str
) -> None:
    a, b, c, d, e, f = words
    sentence = f"When the {a} {b} is {c}{mark} the {d} will {e} the {f}."
    ev = build_evidence([f"{OWNERSHIP} {sentence}"])
    tail = f"the {d} will {'not ' if negate else ''}{e} the {f} quickly"
    claim = f"When the {a} {b} is {c}{mark} {tail}."
    answer = f"{OWNERSHIP} [E1]\n{claim} [E1]" if mode == "claim-lattice" else claim
    verdict = verify_answer(answer, ev, mode=mode)
    outcome = repair_answer(answer, ev, verdict, mode=mode)
    for bad in (",.", ";.", ":."):
        assert bad not in outcome.result.text
    if negate:
        kinds = {x.kind for x in outcome.diagnoses}
        assert "trailing_artifact" not in kinds and "contradicted_polarity" in kinds


def test_a_claim_whose_two_numbers_traded_slots_goes_whole() -> None:
    """§19.22: "leaf has the value 5 …; branch has the value 3" read against a sentence
    that gives leaf 3 and branch 5 is diagnosed swapped_items and dropped, not requoted."""
    nodes = (
        "We create one Node instance named leaf with the value 3 and no children, and "
        "another instance named branch with the value 5 and leaf as one of its children."
    )
    ev = build_evidence([nodes, OWNERSHIP])
    answer = f"{OWNERSHIP} [E2]\nleaf has the value 5 and no children; branch has the value 3. [E1]"
    verdict = verify_answer(answer, ev, mode="claim-lattice")
    diagnoses = inspect_answer(answer, ev, verdict).diagnoses
    assert [(d.kind, d.repair) for d in diagnoses] == [("swapped_items", "drop_claim")]
    result = mechanical_repair(answer, diagnoses, ev)
    assert result.text == f"{OWNERSHIP} [E2]"
    assert [(c.action, c.kind) for c in result.changes] == [("drop_claim", "swapped_items")]
