"""Bindings inside one sentence (docs/verifier.md §19.19): a relation word turned round, two
parallel bindings joined wrongly, a unit moved to another number — none is vouched for;
a sentence's own words, any contiguous piece of them, and reorderings that keep every
binding are untouched."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.verify.evidence import build_evidence
from aborist.verify.policy import DEFAULT_POLICY
from aborist.verify.rules.bindings import (
    binding_tokens,
    bound_support,
    code_names,
    misbound,
    number_unit,
    relation_binding,
)
from aborist.verify.rules.locality import SupportResult
from aborist.verify.rules.swaps import REARRANGED
from aborist.verify.verify import verify_answer

VOUCHED = {"VERIFIED", "SUPPORTED"}
OFF = DEFAULT_POLICY.model_copy(
    update={"relation_bindings": False, "number_units": False, "code_names": False}
)
PROPS = settings(max_examples=60, deadline=None)

PROFILES = (
    "The test profile is used when you run make check, and the fast profile is used "
    "when you run make check --quick."
)


def _label(answer: str, evidence: str, policy=DEFAULT_POLICY) -> str:  # type: ignore[no-untyped-def]
    return verify_answer(answer, build_evidence([evidence]), policy).label


# --- binding_tokens ----------------------------------------------------------------------


def test_tokens_keep_identifiers_numbers_and_clause_marks() -> None:
    got = binding_tokens("Use ok_or on __exit__(), 2,000 ms; done")
    assert got == ("use", "ok_or", "on", "exit", "(", ")", ",", "2,000", "ms", ";", "done")


# --- relation_binding: inversions ----------------------------------------------------------


def test_a_direction_turned_round_is_an_inversion() -> None:
    s = "Rows are sorted from left to right to fill the grid."
    why = relation_binding("Rows are sorted from right to left to fill the grid.", s)
    assert "trade sides of 'to'" in why
    assert relation_binding("Rows are sorted from left to right to fill the grid.", s) == ""


def test_priority_turned_round_is_an_inversion_even_where_the_words_recur() -> None:
    s = (
        "Any local value can be read as a global value, so the reading as a local value "
        "takes priority over the reading as a global value."
    )
    claim = "The reading as a global value takes priority over the reading as a local value."
    assert "trade sides of 'over'" in relation_binding(claim, s)
    faithful = "The reading as a local value takes priority over the reading as a global value."
    assert relation_binding(faithful, s) == ""


def test_an_aside_in_brackets_is_passed_over() -> None:
    s = "The table lists levels from highest level (most detail) to lowest level (least detail)."
    claim = "The table lists levels from lowest level (least detail) to highest level."
    assert "trade sides of 'to'" in relation_binding(claim, s)


def test_a_far_term_on_one_side_is_another_relation_not_an_inversion() -> None:
    # "statement" is the fourth term left of the claim's "of" and the first right of the
    # sentence's "of": not the same relation turned round
    s = (
        'The "with" statement will bind this method\'s return value to the target(s) '
        'specified in the "as" clause of the statement, if any.'
    )
    claim = (
        'The "with" statement binds the return value of __enter__() to the target(s) '
        'specified in the "as" clause of the statement, if any.'
    )
    assert relation_binding(claim, s) == ""


def test_a_clause_boundary_stops_a_side() -> None:
    # "oak" and "pine" stand in different clauses of the sentence: no side holds both
    s = "Oak burns slowly; after rain, pine burns fast."
    assert relation_binding("Pine burns fast after rain.", s) == ""


# --- relation_binding: cross-bindings -------------------------------------------------------


def test_two_parallel_bindings_joined_wrongly_are_refused() -> None:
    why = relation_binding("The test profile is used when you run make check --quick.", PROFILES)
    assert "other terms across 'when'" in why
    assert (
        relation_binding("The fast profile is used when you run make check --quick.", PROFILES)
        == ""
    )
    assert relation_binding("The test profile is used when you run make check.", PROFILES) == ""


def test_identifiers_are_whole_terms() -> None:
    s = "Use the read method on File or the read_all method on Stream to load the data."
    claim = "Use the read_all method on File or the read method on Stream to load the data."
    assert "'read_all' and 'read' trade sides of 'on'" in relation_binding(claim, s)
    assert relation_binding("Use the read_all method on Stream to load the data.", s) == ""


def test_cross_binding_needs_a_shared_frame() -> None:
    # the two "of"s share no term: one is a capital of a state, the other an area of a country
    s = (
        "Lund is the capital city and largest urban area of Skane, and the oldest "
        "capital of a sovereign state."
    )
    assert relation_binding("Lund is the capital city of Skane.", s) == ""
    # the profiles' two clauses share five terms: with six asked, they are not parallel
    claim = "The test profile is used when you run make check --quick."
    assert relation_binding(claim, PROFILES, frame=6) == ""
    assert relation_binding(claim, PROFILES, frame=5) != ""


# --- number_unit ----------------------------------------------------------------------------


def test_a_unit_moved_to_another_number_is_refused() -> None:
    s = "The pump stops after 3 minutes (180 seconds) of idle time."
    assert number_unit("The pump stops after 3 seconds of idle time.", s) == (
        "3 'seconds' where the sentence has 3 'minutes'"
    )
    assert number_unit("The pump stops after 180 seconds of idle time.", s) == ""
    assert number_unit("The pump stops after 3 minutes of idle time.", s) == ""


def test_a_unit_the_sentence_lacks_is_refused() -> None:
    s = "Trains reach a top speed of 300 km/h on the new line."
    assert number_unit("Trains reach a top speed of 300 mph on the new line.", s) != ""
    assert number_unit("Trains reach a top speed of 300 km/h.", s) == ""


def test_a_number_without_a_unit_in_the_sentence_is_not_compared() -> None:
    s = "In 1990, the company opened its first shop."
    assert number_unit("In 1990 the company opened its first shop.", s) == ""


def test_a_word_that_is_elsewhere_and_after_no_number_is_no_unit_clash() -> None:
    s = "The first 5 rows print, and the rest of the rows wait."
    assert number_unit("The first 5 print, and the rows wait.", s) == ""


# --- misbound and the policy ------------------------------------------------------------------


def test_misbound_leaves_a_failed_result_and_obeys_the_knobs() -> None:
    objects = [("E1", build_evidence([PROFILES])[0].passage)]
    found = SupportResult(True, "E1", 0, 0, 1.0)
    claim = "The test profile is used when you run make check --quick."
    out = misbound(claim, found, objects, DEFAULT_POLICY)
    assert not out.supported and REARRANGED in out.reason and out.evidence_id == "E1"
    assert misbound(claim, found, objects, OFF) is found
    failed = SupportResult(False, reason="nothing")
    assert misbound(claim, failed, objects, DEFAULT_POLICY) is failed


def test_the_verifier_refuses_what_it_vouched_for_with_the_knobs_off() -> None:
    cases = [
        ("The test profile is used when you run make check --quick.", PROFILES),
        (
            "Rows are sorted from right to left to fill the grid.",
            "Rows are sorted from left to right to fill the grid.",
        ),
        (
            "The pump stops after 3 seconds of idle time.",
            "The pump stops after 3 minutes (180 seconds) of idle time.",
        ),
    ]
    for claim, evidence in cases:
        assert _label(claim, evidence, OFF) in VOUCHED
        assert _label(claim, evidence) == "UNSUPPORTED"


def test_reorderings_that_keep_every_binding_keep_rung_2() -> None:
    assert _label("When you run make check, the test profile is used.", PROFILES) == "SUPPORTED"
    s = "The pump stops after 3 minutes (180 seconds) of idle time."
    assert _label("The pump stops after 180 seconds of idle time.", s) == "SUPPORTED"


# --- properties -------------------------------------------------------------------------------

WORDS = st.sampled_from(
    "oak pine valve pump key value left right north south grid row 3 12 seconds km "  # noqa: SIM905
    "to from over than before after of for on when the a and , ; ( ) read_all".split()
)


@PROPS
@given(st.lists(WORDS, min_size=2, max_size=30), st.data())
def test_any_piece_of_a_sentence_keeps_its_bindings(words: list[str], data: st.DataObject) -> None:
    sentence = " ".join(words)
    toks = binding_tokens(sentence)
    a = data.draw(st.integers(0, max(0, len(toks) - 1)))
    b = data.draw(st.integers(a, len(toks)))
    piece = " ".join(toks[a:b])
    assert relation_binding(piece, sentence) == ""
    assert number_unit(piece, sentence) == ""


PAIRS = [("north", "south"), ("oak", "pine"), ("valve", "pump"), ("cellar", "attic")]


@PROPS
@given(st.sampled_from(PAIRS), st.sampled_from(["to", "over", "before", "than"]))
def test_two_terms_turned_round_a_relation_are_never_vouched_for(
    pair: tuple[str, str], rel: str
) -> None:
    x, y = pair
    evidence = f"In the old town the {x} road runs {rel} the {y} road, and the {y} road is wide."
    claim = f"In the old town the {y} road runs {rel} the {x} road."
    assert _label(claim, evidence) not in VOUCHED
    assert _label(f"In the old town the {x} road runs {rel} the {y} road.", evidence) in VOUCHED


def test_strict_bindings_ask_the_sentence_to_show_the_binding() -> None:
    s = "Twenty One Pilots is a duo from Columbus, and the station also plays Mumford & Sons."
    claim = "Mumford & Sons is from Columbus."
    assert relation_binding(claim, s) == ""  # nothing contradicts it
    assert "does not bind 'son' to 'columbu'" in relation_binding(claim, s, strict=4)
    assert relation_binding("Twenty One Pilots is from Columbus.", s, strict=4) == ""


# --- code_names -----------------------------------------------------------------------------


def test_a_code_name_no_evidence_text_names_is_refused() -> None:
    docs = ["object.__enter__(self)", 'The "with" statement binds this method\'s return value.']
    assert code_names("It binds the return value of __exit__().", docs) == (
        "it names '__exit__', which the evidence does not"
    )
    assert code_names("It binds the return value of __enter__().", docs) == ""
    assert code_names("It binds the return value.", docs) == ""


def test_code_names_are_whole_identifiers() -> None:
    docs = ["Use the ok method on Result or the ok_or method on Option."]
    assert code_names("Call ok_or() on an Option.", docs) == ""
    assert code_names("Call ok_or_else() on an Option.", docs) != ""
    assert code_names("Call unwrap() on an Option.", docs) != ""


def test_the_verifier_refuses_a_claim_whose_code_name_is_missing() -> None:
    evidence = [
        "object.__enter__(self)",
        'Enter the runtime context. The "with" statement will bind this method\'s return '
        'value to the target(s) specified in the "as" clause of the statement, if any.',
    ]
    claim = (
        'The "with" statement binds the return value of __exit__() to the target(s) '
        'specified in the "as" clause of the statement, if any.'
    )
    ev = build_evidence(evidence)
    assert verify_answer(claim, ev, OFF.model_copy(update={"code_names": False})).label in VOUCHED
    assert verify_answer(claim, ev).label == "UNSUPPORTED"
    faithful = claim.replace("__exit__", "__enter__")
    assert verify_answer(faithful, ev).label in VOUCHED


def test_a_refused_passage_is_set_aside_and_the_other_objects_searched() -> None:
    wrong = "Rows are sorted from left to right to fill the grid in the wide mode."
    right = "Rows are sorted from right to left to fill the grid in that mode."
    claim = "In that mode, rows are sorted from right to left to fill the grid."
    evidence = build_evidence([wrong, right])
    # local support searches objects in evidence-id order: the wrong one comes first
    assert evidence[0].evidence_id < evidence[1].evidence_id
    assert _label(claim, wrong) == "UNSUPPORTED"
    assert verify_answer(claim, evidence).label == "SUPPORTED"
    assert verify_answer(claim, build_evidence([right, wrong])).label == "SUPPORTED"


def test_bound_support_returns_the_first_refusal_when_nothing_else_supports() -> None:
    objects = [("E1", build_evidence([PROFILES])[0].passage)]
    claim = "The test profile is used when you run make check --quick."
    calls: list[int] = []

    def search(objs):  # type: ignore[no-untyped-def]
        calls.append(len(objs))
        return SupportResult(True, "E1", 0, 0, 1.0)

    out = bound_support(claim, search, objects, DEFAULT_POLICY)
    assert not out.supported and "other terms across 'when'" in out.reason
    assert calls == [1]
