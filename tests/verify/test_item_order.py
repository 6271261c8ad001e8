"""Two items of one kind that trade slots (docs/verifier.md §19.22): a reworded claim that
puts two numbers, two code tokens or two names of its sentence in the other order is not
vouched for; a list, a passive's agent and a relative clause's subject may be reordered.
Each test has its control: the right order, or the rule switched off."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.verify.evidence import build_evidence
from aborist.verify.policy import VerifierPolicy
from aborist.verify.text.items import claim_items, item_order
from aborist.verify.verify import verify_answer

OFF = VerifierPolicy(claim_item_order=False)


def rung(answer: str, evidence: list[str], **kw: object) -> int:
    return verify_answer(answer, build_evidence(evidence), **kw).rung  # type: ignore[arg-type]


NODES = (
    "Next, we create one Node instance named leaf with the value 3 and no children, and "
    "another instance named branch with the value 5 and leaf as one of its children."
)
STRAINS = (
    "SAIBK is a chimera virus, with recombination by the SC021202 strain as a major parent "
    "and the H120 vaccine strain as a minor parent."
)
ROLE = (
    "On September 23, 2017, Harmon announced that executive producer Bradley Bell "
    "intended to recast the role of Thorne."
)


def test_items_are_numbers_code_and_names_not_a_first_word() -> None:
    kinds = [(k, key) for k, key, _s, _e in claim_items(STRAINS)]
    assert ("code", "sc021202") in kinds and ("code", "h120") in kinds
    assert all(key != "saibk" for _k, key in kinds)  # the sentence's first word
    assert ("name", "saibk") in [(k, key) for k, key, _s, _e in claim_items(STRAINS, True)]
    # a number's key is the verifier's value key: "10,000" and "10000" are one number
    assert [key for k, key, _s, _e in claim_items("It holds 10,000 or 1.4 units.")] == [
        "n:10000",
        "n:1.4",
    ]
    assert claim_items("10000")[0][1] == claim_items("10,000")[0][1]


def test_two_numbers_that_trade_slots_are_refused() -> None:
    swapped = "leaf has the value 5 and no children; branch has the value 3."
    right = "leaf has the value 3 and no children; branch has the value 5."
    assert item_order(swapped, NODES)
    assert not item_order(right, NODES)
    assert rung(swapped, [NODES]) > 2
    assert rung(right, [NODES]) == 2
    assert rung(swapped, [NODES], policy=OFF) == 2  # the control: the rule off


def test_two_code_tokens_and_two_names_that_trade_slots_are_refused() -> None:
    swapped = (
        "The H120 vaccine strain is its major parent and the SC021202 strain its minor parent."
    )
    right = "The SC021202 strain is its major parent and the H120 vaccine strain its minor parent."
    assert rung(swapped, [STRAINS]) > 2 and rung(right, [STRAINS]) == 2
    said = "On September 23, 2017, Bradley Bell announced that Harmon intended to recast Thorne."
    kept = "On September 23, 2017, Harmon announced that Bradley Bell intended to recast Thorne."
    assert "'Bell' before 'Harmon'" in item_order(said, ROLE)
    assert rung(said, [ROLE]) > 2 and rung(kept, [ROLE]) == 2


def test_a_list_a_passive_and_a_relative_clause_may_be_reordered() -> None:
    cast = "The season ends with Kepner, Avery, Karev and Webber waiting at the airport."
    assert not item_order("The season ends with Webber, Karev, Avery and Kepner waiting.", cast)
    film = "The film Jaws was directed by Spielberg and produced by Zanuck in 1975."
    assert not item_order("Spielberg directed Jaws in 1975.", film)
    assert not item_order("Jaws was directed by Spielberg.", "Spielberg directed Jaws.")
    octal = "This is for disambiguation with C-style octal literals, which Python used before 3.0."
    assert not item_order("Python used C-style octal literals before version 3.0.", octal)
    # an item the sentence holds twice has no one place: its order is not read
    twice = "Oslo is north of Rome and Rome is south of Oslo."
    assert not item_order("Rome is south of Oslo.", twice)


def test_a_verbatim_sentence_keeps_its_order() -> None:
    for sentence in (NODES, STRAINS, ROLE):
        assert not item_order(sentence, sentence)
        assert rung(sentence, [sentence]) == 1


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(min_value=2, max_value=9999), min_size=2, max_size=2, unique=True),
    st.sampled_from(["leaf", "root", "node"]),
    st.sampled_from(["branch", "stem", "twig"]),
)
def test_a_reworded_claim_that_swaps_two_numbers_is_never_vouched(
    values: list[int], first: str, second: str
) -> None:
    """Property: read against "… named <first> with the value <m> …, and … named <second>
    with the value <n> …", the reworded claim that gives <first> the value n and <second>
    the value m is never vouched for; the same claim in the sentence's order is rung 2,
    and the sentence itself is STRICT. With the rule off the swap is vouched for: it is
    this rule that refuses it."""
    m, n = values
    sentence = (
        f"We create one instance named {first} with the value {m} and no children, and "
        f"another instance named {second} with the value {n} and one child."
    )
    right = f"{first} has the value {m} and no children; {second} has the value {n}."
    swapped = f"{first} has the value {n} and no children; {second} has the value {m}."
    assert rung(sentence, [sentence]) == 1
    assert rung(right, [sentence]) == 2
    assert rung(swapped, [sentence]) > 2
    assert rung(swapped, [sentence], policy=OFF) == 2


def test_an_identity_across_a_copula_reads_both_ways() -> None:
    park = (
        "Presque Isle State Park is a 3112 acre Pennsylvania state park on an arching, "
        "sandy peninsula that juts into Lake Erie."
    )
    assert not item_order(
        "The peninsula that juts into Lake Erie is in Presque Isle State Park.", park
    )
    # a copula in the claim alone is not an identity of the sentence's
    assert item_order(
        "The H120 vaccine strain is its major parent and the SC021202 strain its minor parent.",
        STRAINS,
    )


def test_a_passive_auxiliary_is_no_identity() -> None:
    band = "The Raconteurs is an American rock supergroup formed in Detroit."
    swapped = "Detroit was formed in The Raconteurs."
    # "was formed" is a passive, not "X was Y": the two names traded slots (2.5.1)
    assert item_order(swapped, band)
    assert rung(swapped, [band]) > 2
    assert rung(swapped, [band], policy=OFF) == 2  # what 2.5.0 said: SUPPORTED
    # the control: the same passive with the names in the sentence's order
    assert not item_order("The Raconteurs was formed in Detroit.", band)
    assert rung("The Raconteurs was formed in Detroit.", [band]) == 2
    # an adverb between auxiliary and participle keeps it a passive
    assert item_order("Detroit was first formed in The Raconteurs.", band)
    # a copula of identity still reads both ways
    assert not item_order("An American rock supergroup in Detroit is The Raconteurs.", band)


def test_a_passive_agent_of_two_words_is_read_as_one() -> None:
    sentence = "The museum in Bergen was designed by Anna Holm in 1800."
    assert not item_order("Anna Holm designed the museum in Bergen in 1800.", sentence)
    # the control: without "by", the order of two-word names is read
    assert item_order(
        "Erik Berg hired Anna Holm in Bergen.", "Anna Holm hired Erik Berg in Bergen."
    )


def test_the_check_gives_up_after_max_inversions() -> None:
    """A claim that lists a sentence's items in reverse order (each inversion inside one
    list, so none is a swap) is read for MAX_INVERSIONS inversions and then given up:
    a real swap after them is not reported (giving up keeps the rung the other checks
    gave; it never vouches). The same swap after fewer inversions is found."""
    from aborist.verify.text.items import MAX_INVERSIONS

    def texts(n: int) -> tuple[str, str]:
        listed = ", ".join(f"X{i}" for i in range(n))
        backwards = ", ".join(f"X{i}" for i in reversed(range(n)))
        tail = "; then Y1 hired Y2 at the lab."
        swapped = "; then Y2 hired Y1 at the lab."
        return f"The codes are {listed}{tail}", f"The codes are {backwards}{swapped}"

    sentence, claim = texts(MAX_INVERSIONS + 2)
    assert item_order(claim, sentence) == ""
    sentence, claim = texts(MAX_INVERSIONS - 2)
    assert "'Y2' before 'Y1'" in item_order(claim, sentence)
