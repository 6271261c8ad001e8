"""Strategies 1-4 of the layered verifier, each with its near misses."""

from __future__ import annotations

import pytest

from aborist.verify.evidence import build_evidence
from aborist.verify.units import segment_prose
from aborist.verify.verify import VerifierPolicy, verify_answer

KNOWLEDGE = (
    "Arthur's Magazine (1844–1846) was an American literary periodical published in "
    "Philadelphia in the 19th century. First for Women is a woman's magazine published by "
    "Bauer Media Group in the USA. The handbook states that annual leave must be approved "
    "by a line manager before it is taken."
)
EV = build_evidence(
    [KNOWLEDGE, {"text": "Remote work requires written consent.", "title": "Remote Policy"}]
)


def one(answer: str, **kw: object) -> tuple[str, str, bool, str]:
    v = verify_answer(answer, EV, **kw)  # type: ignore[arg-type]
    assert v.n_units == 1, [u.text for u in v.units]
    u = v.units[0]
    return u.strategy, u.grade, u.verified, v.audit_mode


# -- quote ---------------------------------------------------------------------------------
def test_quote_with_curly_marks_is_verbatim() -> None:
    assert one("“annual leave must be approved by a line manager”") == (
        "quote",
        "verbatim",
        True,
        "STRICT",
    )


def test_quote_with_attribution_frame_is_verbatim() -> None:
    answer = 'The handbook states: "annual leave must be approved by a line manager".'
    assert one(answer) == ("quote", "verbatim", True, "STRICT")


def test_quote_frame_title_counts_as_anchor() -> None:
    answer = 'According to the Remote Policy, "remote work requires written consent".'
    assert one(answer)[:2] == ("quote", "verbatim")


def test_quote_with_claiming_frame_is_unsupported() -> None:
    # near miss: verbatim quotes, but the frame asserts a relation no sentence states
    answer = 'Bauer Media Group published "an American literary periodical".'
    assert one(answer) == ("quote", "none", False, "UNGROUNDED")


def test_quote_with_a_frame_its_sentence_states_is_partial() -> None:
    answer = 'Bauer Media Group published "First for Women".'
    assert one(answer) == ("quote", "partial", True, "HYBRID")


def test_quote_frame_over_the_cap_is_a_claim_of_its_own() -> None:
    answer = (
        "The handbook states, in Philadelphia magazine American literary periodical terms, "
        '"line manager".'
    )
    assert one(answer)[:2] == ("quote", "none")


def test_non_verbatim_quote_is_unsupported_and_does_not_fall_through() -> None:
    # one word changed; entity/paraphrase would find support, but a quote claims verbatim text
    strategy, grade, verified, mode = one('"annual leave must be approved by a senior manager"')
    assert (strategy, grade, verified, mode) == ("quote", "none", False, "UNGROUNDED")


def test_two_quotes_with_prose_between_are_verbatim() -> None:
    answer = '"annual leave must be approved" ... "before it is taken"'
    assert one(answer) == ("quote", "verbatim", True, "STRICT")


# -- span ----------------------------------------------------------------------------------
@pytest.mark.parametrize("answer", ["Arthur’s Magazine", "1844", "Philadelphia.", "a line manager"])
def test_short_prose_answers_that_occur_verbatim_are_span_verified(answer: str) -> None:
    assert one(answer) == ("span", "verbatim", True, "STRICT")


def test_span_is_token_bounded() -> None:
    # near miss: "Phila" is a substring of "Philadelphia" but not a token sequence of it
    assert one("Phila")[2] is False


@pytest.mark.parametrize("answer", ["yes", "No.", "it is"])
def test_stopword_only_units_are_never_verified(answer: str) -> None:
    assert one(answer) == ("none", "none", False, "UNGROUNDED")


def test_stopword_title_is_span_checked() -> None:
    ev = build_evidence(["Her second album, And There's More, sold well."])
    v = verify_answer("And There's More", ev)
    assert (v.units[0].strategy, v.audit_mode) == ("span", "STRICT")
    assert verify_answer("and there's more", ev).audit_mode == "UNGROUNDED"


# -- entity --------------------------------------------------------------------------------
def test_entity_cooccurrence_gives_partial_only() -> None:
    assert one("First for Women was started first.") == ("entity", "partial", True, "HYBRID")


def test_entity_proximity_gating() -> None:
    far = (
        "Acme Holdings was founded in Ohio. "
        + "Nothing else happened here. " * 20
        + "Globex Corporation sells paper."
    )
    ev = build_evidence([far])
    v = verify_answer("Acme Holdings bought Globex Corporation outright", ev)
    assert v.units[0].strategy != "entity"
    tight = VerifierPolicy(entity_proximity_chars=10_000)
    v2 = verify_answer("Acme Holdings bought Globex Corporation outright", ev, tight)
    assert (v2.units[0].strategy, v2.units[0].grade) == ("entity", "partial")


# -- paraphrase ----------------------------------------------------------------------------
def test_paraphrase_at_threshold_is_partial() -> None:
    answer = "Before it is taken, a line manager must approve annual leave."
    assert one(answer) == ("paraphrase", "partial", True, "HYBRID")


def test_paraphrase_below_threshold_is_unsupported() -> None:
    # near miss: 5 of 7 content tokens (71 %) < 85 %
    answer = "A line manager must approve annual leave for contractors and interns."
    strategy, _grade, verified, _ = one(answer)
    assert (strategy, verified) == ("none", False)


def test_paraphrase_needs_prose_shape() -> None:
    # near miss: two tokens is not prose-shaped, even with full coverage in scrambled order
    assert one("manager line")[0] == "none"


# -- segmentation --------------------------------------------------------------------------
def test_segmentation_bullets_sentences_quotes_and_abbreviations() -> None:
    text = (
        "Intro sentence one. Dr. Smith met Mr. Jones in the U.S. Army. Then left!\n"
        '- bullet "with a quote. Inside" here\n'
        "1. numbered item [E3]\n"
        "---\n"
    )
    units = [(u.text, u.line_no) for u in segment_prose(text)]
    assert units == [
        ("Intro sentence one.", 1),
        ("Dr. Smith met Mr. Jones in the U.S. Army.", 1),
        ("Then left!", 1),
        ('bullet "with a quote. Inside" here', 2),
        ("numbered item", 3),
    ]


def test_mixed_answer_is_hybrid() -> None:
    v = verify_answer(
        "Arthur's Magazine was an American literary periodical. It sold ten million copies.", EV
    )
    assert [u.verified for u in v.units] == [True, False]
    assert v.audit_mode == "HYBRID" and v.label == "PARTIAL"


def test_quote_mode_ignores_evidence_with_a_denied_role() -> None:
    ev = build_evidence(
        [
            "The Oberoi Group is a hotel company with its head office in Delhi.",
            {"text": "Forum post: the head office moved to Mumbai.", "source_role": "untrusted"},
        ]
    )
    assert verify_answer("the head office moved to Mumbai", ev).audit_mode == "UNGROUNDED"
    assert verify_answer("head office in Delhi", ev).audit_mode == "STRICT"


def test_the_prompt_templates_quote_example_is_strict() -> None:
    """The quote-mode prompt (aborist.prompts) shows this answer shape; it must verify."""
    ev = build_evidence(["Lists are mutable sequences.", "Tuples are immutable sequences."])
    answer = 'The tutorial says that "lists are mutable" [E1], while "tuples are immutable" [E2].'
    v = verify_answer(answer, ev)
    assert (v.units[0].strategy, v.audit_mode) == ("quote", "STRICT")
    assert v.units[0].evidence_ids == tuple(sorted(e.evidence_id for e in ev))
