"""Comparisons the evidence states in figures (docs/verifier.md §19.11): the question's
comparison and alternatives, the figures read for each, the decision, and what they do to
a bare answer and to a comparison claim; Hypothesis properties of the decision."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.verify.evidence import build_evidence
from aborist.verify.policy import VerifierPolicy
from aborist.verify.rules.compare import (
    Comparison,
    choice_alternatives,
    claim_comparison,
    compare_alternatives,
    decide,
    figure_of,
    names_alternative,
    question_comparison,
)
from aborist.verify.text.figures import Figure, count_figures, parenthetical, time_figures
from aborist.verify.text.sentences import continues, split_sentences
from aborist.verify.text.textcanon import tokens
from aborist.verify.verify import verify_answer

OFF = VerifierPolicy(answer_comparisons=False)
OLDER = "Who is older, Glenn Hughes or Ross Lynch?"
PROPS = settings(max_examples=60, deadline=None)


def rung(answer: str, evidence: list[str], question: str, **kw: object) -> int:
    return verify_answer(answer, build_evidence(evidence), question=question, **kw).rung  # type: ignore[arg-type]


# -- the question ----------------------------------------------------------------------------


def test_the_alternatives_of_a_choice_question() -> None:
    assert choice_alternatives(OLDER) == ("Glenn Hughes", "Ross Lynch")
    assert choice_alternatives("Who is older Glenn Hughes or Ross Lynch?") == (
        "Glenn Hughes",
        "Ross Lynch",
    )
    # a leading auxiliary is not part of the first name; the second stops at lower case
    assert choice_alternatives(
        "Was Beyond the Gates of Splendor or Jesus Camp released first?"
    ) == (
        "Beyond the Gates of Splendor",
        "Jesus Camp",
    )
    assert choice_alternatives("Who is oldest, Ann Lee, Bob Ray or Carl Fox?") is None
    assert choice_alternatives("Who wrote the script?") is None


@pytest.mark.parametrize(
    ("question", "kind", "low_wins", "words"),
    [
        (OLDER, "time", True, "older"),
        ("Who is younger, Mary Ramsey or Lee Ranaldo?", "time", False, "younger"),
        ("Who was born first, Martin Heidegger or Lydia Davis?", "time", True, "first"),
        ("Was Beyond the Gates of Splendor or Jesus Camp released first?", "time", True, "first"),
        ("Which band was formed later, Muse or Blur?", "time", False, "later"),
        ("Which genus has more species, Fir or Chelone?", "count", False, "more species"),
        ("Which band has fewer members, Muse or Blur?", "count", True, "fewer members"),
    ],
)
def test_the_comparison_a_question_asks(
    question: str, kind: str, low_wins: bool, words: str
) -> None:
    comp = question_comparison(question)
    assert comp is not None
    assert (comp.kind, comp.low_wins, comp.words) == (kind, low_wins, words)


@pytest.mark.parametrize(
    "question",
    [
        "Which is more valuable, Temagami Mine or Meadowbank Gold Mine?",  # no counted noun
        "Who has more scope of profession, Richard Ford or Robert Howard?",  # singular noun
        "Which came first, Harry Potter or Dune?",  # no event word
        "Who died first, Anne Frank or John Toole?",  # an end, not an origin
        "Who is the older brother, Tom Smith or Bob Smith?",  # "older" modifies a noun
        "Which was not released first, Jesus Camp or Dune?",  # negated
        "Which was founded after 1990, Muse or Blur?",  # a threshold, not a comparison
        "Who is older?",  # no alternatives
    ],
)
def test_questions_that_compare_nothing(question: str) -> None:
    assert question_comparison(question) is None


def test_a_name_with_middle_words_or_an_honorific_names_the_alternative() -> None:
    assert names_alternative("Lee Ranaldo", "Lee Mark Ranaldo")
    assert names_alternative("Francis Nethersole", "Sir Francis Nethersole")
    assert names_alternative("Fir", "Firs")
    assert names_alternative("The Raconteurs", "Raconteurs")
    assert not names_alternative("Glenn Hughes", "Glenn Hughes Band")
    assert not names_alternative("Ross Lynch", "Ross Geller")


# -- the figures -----------------------------------------------------------------------------


def _years(figs: list[Figure | None]) -> list[tuple[float, float] | None]:
    return [None if f is None else (f.lo[0], f.hi[0]) for f in figs]


def test_life_and_run_parentheticals_give_their_start() -> None:
    assert _years(
        parenthetical("Glenn Hughes", "Glenn Hughes (born 21 August 1951) is a bassist.")
    ) == [(1951, 1951)]
    elytis = "Odysseas Elytis (Greek: x; 2 November 1911 - 18 March 1996) was a poet."
    assert _years(parenthetical("Odysseas Elytis", elytis)) == [(1911, 1911)]
    ford = "Aleksander Ford (born Mosze Lifszyc; 24 November 1908 in Kiev - 4 April 1980) was."
    assert _years(parenthetical("Aleksander Ford", ford)) == [(1908, 1908)]
    assert _years(
        parenthetical("Arthur's Magazine", "Arthur's Magazine (1844-1846) was a periodical.")
    ) == [(1844, 1844)]
    # a glued death date ("188926 May 1976") is no birth date, and a hedged one decides nothing
    assert (
        parenthetical("Martin Heidegger", "Martin Heidegger (26 September 188926 May 1976) was.")
        == []
    )
    assert parenthetical("Anita Lane", "Anita Lane (born ca. 1959) is a singer.") == [None]
    # a bracket that is not right after the name is not read
    assert parenthetical("Glenn Hughes", "Glenn Hughes of Trapeze (born 1951) is a bassist.") == []


def test_a_date_keeps_its_precision() -> None:
    fig = parenthetical("Mary Ramsey", "Mary Ramsey (born 24 December 1963) is a violinist.")[0]
    assert fig is not None and fig.lo == fig.hi == (1963, 12, 24)
    fig = time_figures(
        "", "It was launched in September 1997 to collect fares.", frozenset(["launch"])
    )[0]
    assert fig is not None and (fig.lo, fig.hi) == ((1997, 9, 1), (1997, 9, 31))


def test_event_verbs_and_kind_years() -> None:
    events = question_comparison("Which band was formed first, Muse or Blur?")
    assert events is not None
    text = "Muse are an English rock band from Teignmouth, formed in 1994."
    assert _years(time_figures("Muse", text, events.events)) == [(1994, 1994)]
    # a verb outside the relation's events is not read
    assert time_figures("Muse", "Muse toured in 1999.", events.events) == []
    film = "Jesus Camp is a 2006 American documentary film."
    assert _years(time_figures("Jesus Camp", film, events.events)) == [(2006, 2006)]
    # a bracket about someone else in the sentence is set aside
    two = "Glenn Hughes (born 1951) played with the Mk. Ross Lynch (born 1995) is an actor."
    assert _years(time_figures("Glenn Hughes", two, events.events)) == [(1951, 1951)]


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("Firs are a genus of 48-56 species of trees.", [(48, 56)]),
        ("Chelone is a genus of four species of plants.", [(4, 4)]),
        ("It is represented by four accepted species.", [(4, 4)]),
        ("The genus has more than 300 species.", [(300, float("inf"))]),
        ("The genus has up to 12 species.", [(0, 12)]),
        ("The genus has about 40 species.", [None]),
        ("It is one of the 12 species of the genus.", [None]),
        ("The genus has 3 million species.", [(3e6, 3e6)]),
        ("The genus grows in 30 countries.", []),
    ],
)
def test_counts_before_the_counted_noun(text: str, want: list[tuple[float, float] | None]) -> None:
    assert _years(count_figures(text, "specy")) == want


# -- the decision ----------------------------------------------------------------------------

_TIME = Comparison("time", True, frozenset(), "", "older")
_MORE = Comparison("count", False, frozenset(), "specy", "more species")


def _fig(lo: float, hi: float) -> Figure:
    return Figure((lo,), (hi,), f"{lo}-{hi}")


def test_decide_needs_the_intervals_apart() -> None:
    assert decide(_TIME, _fig(1951, 1951), _fig(1995, 1995)) == "wins"
    assert decide(_TIME, _fig(1995, 1995), _fig(1951, 1951)) == "loses"
    assert decide(_MORE, _fig(48, 56), _fig(4, 4)) == "wins"
    assert decide(_MORE, _fig(40, 50), _fig(45, 45)) == "unknown"  # overlap
    assert decide(_TIME, None, _fig(1951, 1951)) == "unknown"
    assert decide(_TIME, _fig(1951, 1951), None) == "unknown"


intervals = st.tuples(st.integers(0, 60), st.integers(0, 20)).map(lambda t: _fig(t[0], t[0] + t[1]))
comparisons = st.sampled_from([_TIME, _MORE, Comparison("time", False, frozenset(), "", "younger")])
FLIP = {"wins": "loses", "loses": "wins", "unknown": "unknown"}


@PROPS
@given(comparisons, intervals, intervals)
def test_swapping_the_figures_flips_the_verdict(comp: Comparison, a: Figure, b: Figure) -> None:
    assert decide(comp, b, a) == FLIP[decide(comp, a, b)]


@PROPS
@given(comparisons, intervals, intervals, intervals)
def test_a_stray_figure_never_reverses_a_decision(
    comp: Comparison, a: Figure, b: Figure, stray: Figure
) -> None:
    widened = Figure(min(a.lo, stray.lo), max(a.hi, stray.hi), "")
    before, after = decide(comp, a, b), decide(comp, widened, b)
    assert after in {before, "unknown"}


years = st.integers(1800, 2020)


@PROPS
@given(years, years, st.booleans())
def test_swapping_the_years_in_the_evidence_flips_the_rung(
    y1: int, y2: int, ask_older: bool
) -> None:
    question = OLDER if ask_older else "Who is younger, Glenn Hughes or Ross Lynch?"
    ev = lambda a, b: [  # noqa: E731
        f"Glenn Hughes (born {a}) is an English bassist. Ross Lynch (born {b}) is an actor."
    ]
    here, swapped = (
        rung("Glenn Hughes", ev(y1, y2), question),
        rung("Glenn Hughes", ev(y2, y1), question),
    )
    if y1 == y2:
        assert here == swapped == 3
    else:
        assert {here, swapped} == {1, 3}
        assert (here == 1) == ((y1 < y2) == ask_older)


names = st.sampled_from(["Glenn Hughes", "Ross Lynch"])


@PROPS
@given(names, years, st.sampled_from(["is an actor", "(born) is an actor", "(born c. 1950) is"]))
def test_a_missing_figure_never_yields_strict(span: str, year: int, rest: str) -> None:
    evidence = [f"Glenn Hughes (born {year}) is a bassist. Ross Lynch {rest}."]
    assert rung(span, evidence, OLDER) == 3
    verdict = verify_answer(span, build_evidence(evidence), question=OLDER)
    assert "do not decide" in " ".join(verdict.units[0].reasons)


# -- what it does to answers -----------------------------------------------------------------

HUGHES = [
    "Glenn Hughes (born 21 August 1951) is an English rock bassist.Ross Shor Lynch (born "
    "December 29, 1995) is an American singer."
]


def test_the_winner_by_the_figures_is_strict_the_loser_rung_3() -> None:
    # the middle name and the glued sentence end do not hide Ross Shor Lynch's birth date
    assert rung("Glenn Hughes", HUGHES, OLDER) == 1
    plain = ["Glenn Hughes (born 1951) is a bassist. Ross Lynch (born 1995) is an actor."]
    assert rung("Ross Lynch", plain, OLDER) == 3
    verdict = verify_answer("Ross Lynch", build_evidence(plain), question=OLDER)
    assert "the figures contradict it" in " ".join(verdict.units[0].reasons)
    # the switch off: the 2.1 rule (the sentence shares no term of the relation)
    assert rung("Glenn Hughes", HUGHES, OLDER, policy=OFF) == 3


def test_sharing_a_term_of_the_relation_is_not_winning() -> None:
    evidence = ["Ross Lynch (born 1995) is an actor. Glenn Hughes (born 1951) is a bassist."]
    q = "Who was born first, Glenn Hughes or Ross Lynch?"
    # "born" is in both sentences: before 2.2 both answers were STRICT
    assert rung("Ross Lynch", evidence, q, policy=OFF) == 1
    assert rung("Ross Lynch", evidence, q) == 3
    assert rung("Glenn Hughes", evidence, q) == 1


def test_a_count_decides_a_more_question() -> None:
    evidence = [
        "Firs (Abies) are a genus of 48-56 species of evergreen trees.Chelone is a genus of "
        "four species of perennial plants."
    ]
    q = "Which genus has more species, Fir or Chelone?"
    assert rung("Firs", evidence, q) == 1
    assert rung("Chelone", evidence, q) == 3


def test_an_age_compares_births_not_other_dates() -> None:
    # A's only date is a founding: A's birth is not stated, so nothing is decided
    evidence = ["Ann Lee is a singer, founded in 1990 as a duo. Bob Ray (born 1985) is a drummer."]
    assert rung("Bob Ray", evidence, "Who is older, Ann Lee or Bob Ray?") == 3
    assert rung("Bob Ray", evidence, "Who was born first, Ann Lee or Bob Ray?") == 3
    # things without births compare by their founding
    bands = ["Muse is a rock band, formed in 1994. Blur is a rock band, formed in 1988."]
    assert rung("Blur", bands, "Which band is older, Muse or Blur?") == 1
    assert rung("Muse", bands, "Which band is older, Muse or Blur?") == 3


def test_an_order_the_evidence_states_in_words() -> None:
    q = "Who was born first, Glenn Hughes or Ross Lynch?"
    assert rung("Glenn Hughes", ["Glenn Hughes was born in 1951, before Ross Lynch."], q) == 1
    assert rung("Glenn Hughes", ["Glenn Hughes was born after Ross Lynch."], q) == 3


def test_a_comparison_claim_the_figures_contradict_is_not_supported() -> None:
    ev = build_evidence(HUGHES)
    assert claim_comparison("Ross Lynch is older than Glenn Hughes.", ev)[0] == "loses"
    assert claim_comparison("Glenn Hughes is older than Ross Lynch.", ev)[0] == "wins"
    assert claim_comparison("Ross Lynch was born before Glenn Hughes.", ev)[0] == "loses"
    assert (
        claim_comparison(
            "Ross Lynch was born first.", ev, OLDER.replace("is older", "was born first")
        )[0]
        == "loses"
    )
    assert claim_comparison("Ross Lynch is not older than Glenn Hughes.", ev)[0] == ""
    # the claim is never vouched for, and the reason names the figures
    verdict = verify_answer("Ross Lynch is older than Glenn Hughes.", ev, question=OLDER)
    assert verdict.rung >= 3
    assert "figures contradict" in " ".join(r for u in verdict.units for r in u.reasons)


def test_a_claim_whose_words_are_all_there_is_still_contradicted_by_the_figures() -> None:
    ev = build_evidence(
        [
            "Jesus Camp (2006) was released two years after Beyond the Gates of Splendor "
            "(2004), before the election."
        ]
    )
    wrong = "Jesus Camp was released before Beyond the Gates of Splendor."
    right = "Jesus Camp was released after Beyond the Gates of Splendor."
    # the order rules (§19.13) see "before" put in the place of "after" on their own now;
    # the figures refuse it too
    assert verify_answer(wrong, ev, OFF).rung == 3
    assert verify_answer(wrong, ev).rung == 3
    # the figures never vouch for more than the words did
    assert verify_answer(right, ev).rung == verify_answer(right, ev, OFF).rung == 2


def test_a_figure_needs_the_sentence_about_the_alternative() -> None:
    comp = question_comparison(OLDER)
    assert comp is not None
    ev = build_evidence(["The band met Glenn Hughes in 1951. Ross Lynch (born 1995) is an actor."])
    assert figure_of("Glenn Hughes", ev, comp) is None
    assert compare_alternatives("Glenn Hughes", OLDER, ev)[0] == "unknown"
    assert compare_alternatives("Tom Jones", OLDER, ev) == ("", "")


# -- sentences: a.k.a. and the kind that continues a subject ----------------------------------


def test_aka_is_an_abbreviation() -> None:
    text = "The Chien-gris a.k.a. Gris de Saint-Louis was a breed of dog, now extinct."
    assert len(split_sentences(text)) == 1
    q = "Which breed of dog is now extinct: Chinese Crested Dog or the Chien-gris?"
    assert rung("Chien-gris", [text], q) == 1


def test_the_kind_of_the_subject_continues_it() -> None:
    before = tokens("Liverpool Football Club is a professional association football club.")
    assert continues(before, tokens("The club has won 3 UEFA Super Cups."))
    assert continues(before, tokens("It has won 3 UEFA Super Cups."))
    assert not continues(before, tokens("The league has 20 clubs."))
    evidence = [
        "Liverpool Football Club is a professional association football club based in "
        "Liverpool. The club has won 3 UEFA Super Cups."
    ]
    q = "Which football club has won 3 UEFA Super Cups?"
    assert rung("Liverpool Football Club", evidence, q) == 1
    assert (
        rung("Liverpool Football Club", evidence, q, policy=VerifierPolicy(answer_subject_bridge=0))
        == 3
    )
