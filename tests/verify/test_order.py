"""Word order and roles (docs/verifier.md §19.10, §19.13): terms that trade sides of a
relation, a word moved into another slot of its sentence, a clause joined to a parallel
one, a negator dropped while another stays — none is vouched for; a verbatim sentence
stays STRICT and a passive turned active keeps rung 2."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.verify.evidence import build_evidence
from aborist.verify.rules.order import parallel_clause, role_swap
from aborist.verify.rules.swaps import REARRANGED, dropped_cue, rearranged, substitution
from aborist.verify.text.textcanon import tokens
from aborist.verify.verify import verify_answer

VOUCHED = {"VERIFIED", "SUPPORTED"}
PROPS = settings(max_examples=60, deadline=None)


def _label(answer: str, *evidence: str) -> str:
    return verify_answer(answer, build_evidence(list(evidence))).label


# --- role_swap -------------------------------------------------------------------------


def test_terms_trading_sides_of_a_verb_are_a_swap() -> None:
    s = tokens("In a kitchen a sharp knife cuts a ripe tomato with ease.")
    assert "trade sides" in role_swap(tokens("A ripe tomato cuts a sharp knife with ease."), s)
    assert role_swap(tokens("A sharp knife cuts a ripe tomato with ease."), s) == ""


def test_terms_trading_sides_of_a_preposition_are_a_swap() -> None:
    s = tokens("The ferry sails from north to south every morning.")
    assert role_swap(tokens("The ferry sails from south to north every morning."), s) != ""


def test_passive_turned_active_is_not_a_swap() -> None:
    s = tokens("The old bridge was designed by Maria Lund in 1901.")
    assert role_swap(tokens("Maria Lund designed the old bridge in 1901."), s) == ""
    # the same reading the other way round
    s2 = tokens("Maria Lund designed the old bridge in 1901.")
    assert role_swap(tokens("The old bridge was designed by Maria Lund in 1901."), s2) == ""


def test_one_moved_term_is_not_a_swap() -> None:
    s = tokens("When the tide turns, the harbour gates close slowly.")
    assert role_swap(tokens("The harbour gates close slowly when the tide turns."), s) == ""


def test_a_repeated_pivot_is_read_where_it_agrees() -> None:
    s = tokens("Within a module, the module path names the module items.")
    assert role_swap(tokens("The module path names the module items within a module."), s) == ""


# --- substitution (§19.10, widened) ----------------------------------------------------


def test_a_word_moved_from_elsewhere_in_the_sentence_is_a_substitution() -> None:
    s = tokens("If the valve is open the pump stops; a closed valve lets the pump run.")
    claim = tokens("If the valve is closed the pump stops; a closed valve lets the pump run.")
    assert "belongs elsewhere" in substitution(claim, s)
    # the same run with four tokens of its context elsewhere in the sentence: ambiguous
    s2 = tokens("If the valve is open the pump stops, and if it is closed the pump runs.")
    claim2 = tokens("If the valve is closed the pump stops, and if it is closed the pump runs.")
    assert substitution(claim2, s2) == ""


def test_a_comparative_trading_places_is_a_substitution() -> None:
    s = tokens("Steel bends more easily than glass; it bends less easily than rubber.")
    claim = tokens("Steel bends less easily than glass; it bends more easily than rubber.")
    assert substitution(claim, s) != ""


def test_a_replaced_tail_where_both_end_is_a_substitution() -> None:
    s = tokens("Maps are in chapter Travel, and notes about planning are in chapter Budget.")
    claim = tokens("Notes about planning are in chapter Travel.")
    assert substitution(claim, s) != ""


def test_a_misaligned_run_that_stands_elsewhere_is_not_a_substitution() -> None:
    s = tokens(
        "Return the mean (when sorted, the value in the middle) and mode (the value that "
        "occurs most often) of the list."
    )
    claim = tokens("Return the mean and mode (the value that occurs most often) of the list.")
    assert substitution(claim, s) == ""


def test_a_topicalized_phrase_is_not_a_substitution() -> None:
    s = tokens("This use of the new syntax we discussed in the section on traits.")
    assert substitution(tokens("We discussed the new syntax in the section on traits."), s) == ""


# --- parallel_clause -------------------------------------------------------------------

WOOD = (
    "Oak burns slowly with little smoke; pine burns fast with much smoke; "
    "Birch burns fast with little smoke."
)


def test_a_head_joined_to_a_parallel_clause() -> None:
    s = WOOD
    names = frozenset({"oak", "pine", "birch"})
    assert parallel_clause(tokens("Oak burns fast with little smoke."), tokens(s), names) != ""
    assert parallel_clause(tokens("Oak burns slowly with little smoke."), tokens(s), names) == ""


def test_a_plain_omission_is_not_a_parallel_clause() -> None:
    s = tokens("The function takes a value and returns the value doubled.")
    assert parallel_clause(tokens("The function returns the value doubled."), s, frozenset()) == ""


# --- polarity per cue ------------------------------------------------------------------


def test_dropped_cue() -> None:
    assert dropped_cue(frozenset({"giv"}), frozenset({"giv", "rais"}), frozenset({"giv", "rais"}))
    assert not dropped_cue(frozenset({"giv", "rais"}), frozenset({"giv", "rais"}), frozenset())
    assert not dropped_cue(frozenset({"giv"}), frozenset({"giv", "other"}), frozenset({"giv"}))


def test_a_negated_claim_that_drops_one_of_two_cues_is_not_vouched() -> None:
    ev = "If no key is given, the lookup uses the default, so that it never fails loudly."
    assert (
        _label("If no key is given, the lookup uses the default, so it never fails loudly.", ev)
        in VOUCHED
    )
    assert (
        _label("If no key is given, the lookup uses the default, so that it fails loudly.", ev)
        not in VOUCHED
    )


# --- the multi-sentence rule does not rebuild a rearranged claim -------------------------


def test_parts_do_not_rebuild_a_swapped_claim() -> None:
    # each clause alone is held by the sentence; together they swap its subjects
    ev = "Granite is hard and grey, while chalk is soft and white."
    swapped = "Chalk is hard and grey, while granite is soft and white."
    assert _label("Granite is hard and grey, while chalk is soft.", ev) in VOUCHED
    assert _label(swapped, ev) not in VOUCHED
    why = verify_answer(swapped, build_evidence([ev])).units[0].reasons
    assert any(REARRANGED in r for r in why)


def test_a_swap_around_a_verb_is_not_vouched() -> None:
    ev = "Both oak and pine boards are sold, and a pine board outlasts an oak board in wet weather."
    assert _label("A pine board outlasts an oak board in wet weather.", ev) in VOUCHED
    why = verify_answer("An oak board outlasts a pine board in wet weather.", build_evidence([ev]))
    assert why.label not in VOUCHED
    assert "trade sides" in why.units[0].reasons[0]


def test_a_head_joined_to_a_parallel_clause_is_not_vouched() -> None:
    ev = WOOD
    assert _label("Birch burns fast with little smoke.", ev) == "VERIFIED"
    why = verify_answer("Oak burns fast with little smoke.", build_evidence([ev]))
    assert why.label not in VOUCHED
    assert "parallel clause" in why.units[0].reasons[0]


def test_rearranged_is_empty_for_the_sentence_itself() -> None:
    text = "A sharp knife cuts a ripe tomato with ease."
    assert rearranged(text, tokens(text), [(text, tokens(text))]) == ""


# --- properties --------------------------------------------------------------------------

NOUNS = ["museum", "library", "theatre", "harbour", "bridge", "school", "tower", "market"]
RELATIONS = ["than", "before", "after", "into", "from", "over", "under", "replaced", "hides"]
NAMES = ["Anna Holm", "Erik Berg", "Maria Lund", "Olav Dahl", "Sigrid Moe", "Jonas Vik"]
VERBS = ["designed", "restored", "funded", "opened", "founded"]
FILLER = "Rain fell for weeks. Ferries connect many small islands."


@PROPS
@given(
    st.lists(st.sampled_from(NOUNS), min_size=2, max_size=2, unique=True),
    st.sampled_from(RELATIONS),
    st.sampled_from(["was chosen", "seemed larger", "stood higher", "was moved"]),
)
def test_property_swapping_terms_around_a_relation_is_never_vouched(
    pair: list[str], rel: str, pred: str
) -> None:
    x, y = pair
    sentence = f"In the old town the {x} {pred} {rel} the {y} during the long winter."
    swapped = f"In the old town the {y} {pred} {rel} the {x} during the long winter."
    assert _label(sentence, sentence, FILLER) == "VERIFIED"
    assert _label(swapped, sentence, FILLER) not in VOUCHED


@PROPS
@given(
    st.sampled_from(NAMES),
    st.sampled_from(VERBS),
    st.sampled_from(NOUNS),
    st.sampled_from(["Bergen", "Oslo", "Hamar", "Drammen"]),
    st.integers(1800, 2020),
)
def test_property_a_passive_turned_active_keeps_rung_2(
    name: str, verb: str, noun: str, place: str, year: int
) -> None:
    sentence = f"The {noun} in {place} was {verb} by {name} in {year}."
    active = f"{name} {verb} the {noun} in {place} in {year}."
    assert _label(sentence, sentence, FILLER) == "VERIFIED"
    assert _label(active, sentence, FILLER) == "SUPPORTED"
    # ... and an active sentence read back as passive
    assert _label(sentence, active, FILLER) == "SUPPORTED"
    # a passive turned active with its adverbial moved to the front
    later = f"The {noun} in {place} was {verb} by {name} before the war."
    fronted = f"Before the war, {name} {verb} the {noun} in {place}."
    assert _label(fronted, later, FILLER) == "SUPPORTED"
