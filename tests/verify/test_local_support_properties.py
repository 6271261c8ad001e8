"""Hypothesis properties of local support (docs/verifier.md §19): a claim that differs from
its supporting sentence by one negation, one number or one swapped entity is never vouched
for (rung 1 or 2); a verbatim sentence of the evidence is still STRICT."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.verify.evidence import build_evidence
from aborist.verify.verify import verify_answer

NAMES = ["Anna Holm", "Erik Berg", "Maria Lund", "Olav Dahl", "Sigrid Moe", "Jonas Vik"]
PLACES = ["Bergen", "Oslo", "Tromsø", "Stavanger", "Drammen", "Hamar"]
VERBS = {"founded": "found", "designed": "design", "funded": "fund", "restored": "restore"}
VERBS |= {"opened": "open", "sold": "sell"}
NOUNS = ["museum", "library", "theatre", "harbour", "bridge", "school"]
# filler sentences share no content word with the templates
FILLER = [
    "Rain fell for weeks.",
    "Critics praised the weather reports.",
    "Tickets cost little during winter.",
    "Ferries connect many small islands.",
]
PROPS = settings(max_examples=60, deadline=None)


@st.composite
def facts(draw: st.DrawFn) -> dict[str, object]:
    return {
        "name": draw(st.sampled_from(NAMES)),
        "place": draw(st.sampled_from(PLACES)),
        "verb": draw(st.sampled_from(sorted(VERBS))),
        "noun": draw(st.sampled_from(NOUNS)),
        "year": draw(st.integers(1800, 2020)),
        "count": draw(st.integers(2, 900)),
        "negated": draw(st.booleans()),
    }


def render(f: dict[str, object]) -> str:
    verb = f"did not {VERBS[str(f['verb'])]}" if f["negated"] else str(f["verb"])
    return (
        f"{f['name']} {verb} the {f['noun']} of {f['count']} rooms in {f['place']} in {f['year']}."
    )


def _evidence(sentence: str, before: int, after: int) -> list[str]:
    return [" ".join([*FILLER[:before], sentence, *FILLER[before : before + after]])]


def _rungs(claim: str, evidence: list[str]) -> tuple[int, int]:
    ev = build_evidence(evidence)
    quote = verify_answer(claim, ev).rung
    lattice = verify_answer(claim + " [E1]", ev, mode="claim-lattice").rung
    return quote, lattice


@PROPS
@given(f=facts(), before=st.integers(0, 2), after=st.integers(0, 2))
def test_a_verbatim_evidence_sentence_is_strict(
    f: dict[str, object], before: int, after: int
) -> None:
    sentence = render(f)
    assert _rungs(sentence, _evidence(sentence, before, after)) == (1, 1)


@PROPS
@given(f=facts(), before=st.integers(0, 2), after=st.integers(0, 2))
def test_one_negation_added_or_dropped_is_never_vouched(
    f: dict[str, object], before: int, after: int
) -> None:
    evidence = _evidence(render(f), before, after)
    claim = render({**f, "negated": not f["negated"]})
    quote, lattice = _rungs(claim, evidence)
    assert quote >= 3 and lattice >= 3, claim


@PROPS
@given(
    f=facts(),
    field=st.sampled_from(["year", "count"]),
    delta=st.integers(1, 50),
    before=st.integers(0, 2),
)
def test_one_number_changed_is_never_vouched(
    f: dict[str, object], field: str, delta: int, before: int
) -> None:
    evidence = _evidence(render(f), before, 1)
    changed = {**f, field: int(f[field]) + delta}  # type: ignore[call-overload]
    quote, lattice = _rungs(render(changed), evidence)
    assert quote >= 3 and lattice >= 3


@PROPS
@given(
    f=facts(),
    field=st.sampled_from(["name", "place"]),
    data=st.data(),
    before=st.integers(0, 2),
)
def test_one_swapped_entity_is_never_vouched(
    f: dict[str, object], field: str, data: st.DataObject, before: int
) -> None:
    pool = NAMES if field == "name" else PLACES
    other = data.draw(st.sampled_from([x for x in pool if x != f[field]]))
    # the swapped-in entity may even occur elsewhere in the evidence, in another sentence
    evidence = [_evidence(render(f), before, 1)[0] + f" {other} is far away."]
    quote, lattice = _rungs(render({**f, field: other}), evidence)
    assert quote >= 3 and lattice >= 3


def render_pair(f: dict[str, object], other: str) -> str:
    return f"{f['name']} {f['verb']} the {f['noun']} for {other} in {f['place']} in {f['year']}."


@PROPS
@given(f=facts(), data=st.data(), before=st.integers(0, 2))
def test_two_entities_trading_roles_is_never_vouched(
    f: dict[str, object], data: st.DataObject, before: int
) -> None:
    other = data.draw(st.sampled_from([x for x in NAMES if x != f["name"]]))
    evidence = _evidence(render_pair(f, other), before, 1)
    swapped = render_pair({**f, "name": other}, str(f["name"]))
    quote, lattice = _rungs(swapped, evidence)
    assert quote >= 3 and lattice >= 3, swapped
    assert _rungs(render_pair(f, other), evidence) == (1, 1)


@PROPS
@given(f=facts(), data=st.data(), before=st.integers(0, 2))
def test_one_word_put_in_the_place_of_another_is_never_vouched(
    f: dict[str, object], data: st.DataObject, before: int
) -> None:
    noun = data.draw(st.sampled_from([x for x in NOUNS if x != f["noun"]]))
    evidence = _evidence(render(f), before, 1)
    quote, lattice = _rungs(render({**f, "noun": noun}), evidence)
    assert quote >= 3 and lattice >= 3


PARTICIPLES = ["designed", "funded", "restored", "painted", "planned", "opened"]


@PROPS
@given(
    names=st.lists(st.sampled_from(NAMES), min_size=2, max_size=2, unique=True),
    verbs=st.lists(st.sampled_from(PARTICIPLES), min_size=2, max_size=2, unique=True),
    noun=st.sampled_from(NOUNS),
    before=st.integers(0, 2),
)
def test_a_bare_name_that_is_the_agent_of_another_relation_is_never_strict(
    names: list[str], verbs: list[str], noun: str, before: int
) -> None:
    sentence = f"The {noun} was {verbs[0]} by {names[0]} and {verbs[1]} by {names[1]}."
    evidence = build_evidence(_evidence(sentence, before, 1))
    question = f"The {noun} was {verbs[0]} by whom?"
    assert verify_answer(names[1], evidence, question=question).rung >= 3
    assert verify_answer(names[0], evidence, question=question).rung == 1


@PROPS
@given(
    names=st.lists(st.sampled_from(NAMES), min_size=2, max_size=2, unique=True),
    noun=st.sampled_from(NOUNS),
    place=st.sampled_from(PLACES),
    word=st.sampled_from(["behind", "than", "unlike", "against"]),
    before=st.integers(0, 2),
)
def test_the_other_party_of_a_contrast_is_never_strict(
    names: list[str], noun: str, place: str, word: str, before: int
) -> None:
    sentence = f"{names[0]} runs the second largest {noun} in {place}, {word} {names[1]}."
    evidence = build_evidence(_evidence(sentence, before, 1))
    question = f"Who runs the second largest {noun} in {place}?"
    assert verify_answer(names[1], evidence, question=question).rung >= 3
    assert verify_answer(names[0], evidence, question=question).rung == 1


@PROPS
@given(
    names=st.lists(st.sampled_from(NAMES), min_size=2, max_size=2, unique=True),
    nouns=st.lists(st.sampled_from(NOUNS), min_size=2, max_size=2, unique=True),
    pick=st.integers(0, 1),
)
def test_a_choice_is_never_strict_on_names_alone(
    names: list[str], nouns: list[str], pick: int
) -> None:
    evidence = build_evidence(
        [f"{names[0]} restored a {nouns[0]}. {names[1]} funded a {nouns[1]}."]
    )
    question = f"Who was born first, {names[0]} or {names[1]}?"
    assert verify_answer(names[pick], evidence, question=question).rung >= 3
