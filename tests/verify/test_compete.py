"""answer_competition (docs/verifier.md §19.20): a bare span against every candidate of its
kind in the cited evidence."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from aborist.verify.evidence import build_evidence
from aborist.verify.policy import VerifierPolicy
from aborist.verify.rules.compete import clause_pieces, competing_candidate, term_weights
from aborist.verify.rules.locality import build_sentence, stem
from aborist.verify.rules.titles import stops_inside_heading
from aborist.verify.verify import verify_answer

EVIDENCE = (
    "The debug server of the test harness listens on port 8080 unless told otherwise. "
    "Every server logs to stderr. The metrics server uses port 9090."
)
QUESTION = (
    "Which port does the test harness's debug server listen on when nothing else is configured?"
)


def _label(answer: str, on: bool, evidence: str = EVIDENCE, question: str = QUESTION) -> str:
    v = verify_answer(
        answer, build_evidence([evidence]), VerifierPolicy(answer_competition=on), question=question
    )
    return f"{v.audit_mode} {v.label}"


def test_a_wrong_number_the_evidence_also_holds_loses_the_competition() -> None:
    assert _label("9090", on=False) == "STRICT VERIFIED"
    assert _label("9090", on=True) == "HYBRID PARTIAL"


def test_the_candidate_with_the_best_context_keeps_its_rung() -> None:
    assert _label("8080", on=True) == "STRICT VERIFIED"


def test_a_two_hop_bridge_is_no_rival() -> None:
    # the first sentence names what the span's sentence is about: it leads to the span
    ev = (
        "Old School is a 2003 comedy film directed by Todd Phillips. "
        "Todd Phillips was born in Brooklyn."
    )
    q = "Where was the director of the 2003 comedy film Old School born?"
    assert _label("Brooklyn", on=True, evidence=ev, question=q) == "STRICT VERIFIED"


def test_clauses_are_cut_at_contrast_words() -> None:
    assert clause_pieces("A holds 3; B holds 4, but C holds 5 whereas D holds 6") == [
        "A holds 3",
        "B holds 4",
        "C holds 5",
        "D holds 6",
    ]


def test_a_span_the_question_names_has_no_rivals() -> None:
    sents = [
        s
        for s in (build_sentence(x) for x in ["Kim was born in 1983.", "Mary was born in 1975."])
        if s
    ]
    anchors = frozenset({stem("born"), stem("older")})
    assert (
        competing_candidate("1975", "Born 1975 or 1983?", anchors, sents[1:], [], sents, 1.5) == ""
    )


texts = st.lists(
    st.sampled_from(["alpha beta.", "alpha gamma.", "alpha delta beta.", "epsilon."]),
    min_size=1,
    max_size=6,
)


@given(texts)
def test_a_rarer_term_never_weighs_less(sentences: list[str]) -> None:
    sents = [s for s in (build_sentence(x) for x in sentences) if s]
    w = term_weights(frozenset({"alpha", "beta", "gamma"}), sents)
    df = {a: sum(a in s.stems for s in sents) for a in w}
    for a in w:
        assert w[a] > 0
        for b in w:
            if df[a] < df[b]:
                assert w[a] > w[b]


PEP = (
    "**PEP 492** - Coroutines with async and await syntax The proposal that made "
    "coroutines a proper standalone concept in Python."
)


def _title_label(answer: str, on: bool, ev: object = PEP) -> str:
    v = verify_answer(
        answer,
        build_evidence([ev]),
        VerifierPolicy(answer_title_units=on),
        question="What is the title of PEP 492?",
    )
    return f"{v.audit_mode} {v.label}"


def test_a_quote_that_stops_inside_a_numbered_heading_is_a_fragment() -> None:
    assert _title_label('"Coroutines with async"', on=False) == "STRICT VERIFIED"
    assert _title_label('"Coroutines with async"', on=True) == "UNGROUNDED UNSUPPORTED"
    assert _title_label('"await syntax"', on=True) == "UNGROUNDED UNSUPPORTED"


def test_the_whole_heading_title_is_no_fragment() -> None:
    assert _title_label('"Coroutines with async and await syntax"', on=True) == "STRICT VERIFIED"


def test_a_whole_quotation_inside_an_object_title_is_no_fragment() -> None:
    ev = {"text": 'The "nonlocal" statement rebinds names.', "title": 'The "nonlocal" statement'}
    assert stops_inside_heading("nonlocal", build_evidence([ev])) == ""
    assert stops_inside_heading('"nonlocal" statement', build_evidence([ev])) == ""
    assert stops_inside_heading("statement", build_evidence([ev])) == 'The "nonlocal" statement'


#: The question's type word ("Which *friend* …") in the span's sentence but not its clause.
FRIENDS = (
    "Romeo loves Rosaline. This is why he makes his friends unhappy; Mercutio mocks him for "
    "it. Benvolio urges Romeo to go to a feast where, he claims, Rosaline will look like a "
    "crow beside the other women."
)
FRIEND_Q = "Which friend claims Rosaline will look like a crow beside the other women?"
#: The type word in the span's own clause ("Vestfold is a *county*"): said of the span.
COUNTY = (
    'Anna Berg Holm (1 May 1866 - 3 October 1950), born "Anna Lise Dahl", was a Norwegian '
    "politician for the Liberal Party, being the first female board member of the party, "
    "Norway's first female factory inspector, and a member of the feminist movement. Holm was "
    "born in Svelvik, Vestfold. Vestfold is a county in Norway, bordering Buskerud and "
    "Telemark."
)
COUNTY_Q = (
    "The first female board member for the Liberal Party, she was born in which county in Norway?"
)


def test_a_type_word_apart_from_the_span_does_not_hold_a_rival_off() -> None:
    # "his friends" stands in Mercutio's sentence, not in his clause: it says what kind of
    # thing answers, not which; the rival clause holds the question's relation (2.5.1)
    assert _label("Mercutio", True, FRIENDS, FRIEND_Q) == "HYBRID PARTIAL"
    assert _label("Mercutio", False, FRIENDS, FRIEND_Q) == "STRICT VERIFIED"
    assert _label("Benvolio", True, FRIENDS, FRIEND_Q) == "STRICT VERIFIED"


def test_a_type_word_in_the_span_s_clause_is_said_of_the_span() -> None:
    # "Vestfold is a county in Norway": the rival name of the first sentence is no county
    assert _label("Vestfold", True, COUNTY, COUNTY_Q) == "STRICT VERIFIED"
