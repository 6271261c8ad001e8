"""Versioned prompt templates (prompt templates are part of the model profile)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aborist import prompts
from aborist.errors import InputError
from aborist.prompts import (
    CANNOT_ANSWER,
    MODE_CLAIM_LATTICE,
    MODE_QUOTE,
    MODES,
    NO_EVIDENCE_LINE,
    TEMPLATES,
    PromptParts,
    build_messages,
    parse_messages,
    prompt_profile,
)
from aborist.verify.claims import PARSE_OK, parse_claims
from aborist.verify.evidence import build_evidence
from aborist.verify.units import extract_quotes
from aborist.verify.verify import MODES as VERIFIER_MODES
from ledger.canonical import canonical_json

EVIDENCE = [
    ("E1", "Lists are mutable sequences, typically used to store collections."),
    ("E2", "Tuples are immutable sequences.\n\nThey can be dictionary keys."),
]


def test_modes_match_the_verifier() -> None:
    assert set(MODES) == set(VERIFIER_MODES)
    assert set(TEMPLATES) == set(MODES)


@pytest.mark.parametrize("mode", MODES)
def test_build_messages_layout(mode: str) -> None:
    messages = build_messages("  What is a tuple?  ", EVIDENCE, mode)
    assert messages == [
        {"role": "system", "content": TEMPLATES[mode].system},
        {
            "role": "user",
            "content": (
                "Evidence:\n\n"
                "[E1]\nLists are mutable sequences, typically used to store collections.\n[/E1]\n\n"
                "[E2]\nTuples are immutable sequences.\n\nThey can be dictionary keys.\n[/E2]\n\n"
                "Question: What is a tuple?"
            ),
        },
    ]


def test_build_messages_is_pure_and_accepts_evidence_objects() -> None:
    objects = build_evidence([text for _, text in EVIDENCE])
    copy = list(EVIDENCE)
    first = build_messages("q?", EVIDENCE, MODE_QUOTE)
    assert build_messages("q?", EVIDENCE, MODE_QUOTE) == first
    assert build_messages("q?", objects, MODE_QUOTE) == first
    assert copy == EVIDENCE


def test_no_evidence_still_builds_a_prompt() -> None:
    (_, user) = build_messages("Anything?", [], MODE_CLAIM_LATTICE)
    assert user["content"] == f"Evidence:\n\n{NO_EVIDENCE_LINE}\n\nQuestion: Anything?"


@pytest.mark.parametrize(
    ("question", "evidence", "mode", "fragment"),
    [
        ("  ", EVIDENCE, MODE_QUOTE, "question is empty"),
        ("q", EVIDENCE, "essay", "mode must be one of quote, claim-lattice"),
        ("q", [("1", "x")], MODE_QUOTE, "pointer id must look like E1"),
        ("q", [("E1", "x"), ("E1", "y")], MODE_QUOTE, "E1 appears twice"),
        ("q", [("E1", None)], MODE_QUOTE, "text must be a string"),
    ],
)
def test_build_messages_rejects_bad_input(
    question: str, evidence: object, mode: str, fragment: str
) -> None:
    with pytest.raises(InputError, match=fragment):
        build_messages(question, evidence, mode)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", MODES)
def test_every_template_states_the_abstention(mode: str) -> None:
    assert f'"{CANNOT_ANSWER}"' in TEMPLATES[mode].system


def test_claim_lattice_examples_parse_as_tagged_claims() -> None:
    """The format the prompt teaches is the format parse_claims accepts."""
    system = TEMPLATES[MODE_CLAIM_LATTICE].system
    examples = [line.strip() for line in system.splitlines() if line.startswith("  ")]
    assert len(examples) == 2
    claims = parse_claims("\n".join(examples))
    assert [(c.parse_status, c.pointer_ids) for c in claims] == [
        (PARSE_OK, ("E1",)),
        (PARSE_OK, ("E1", "E3")),
    ]


def test_quote_example_has_quotes_the_verifier_extracts() -> None:
    system = TEMPLATES[MODE_QUOTE].system
    (example,) = [line.strip() for line in system.splitlines() if line.startswith("  ")]
    assert extract_quotes(example) == ["lists are mutable", "tuples are immutable"]


def test_prompt_profile_versions_and_hashes() -> None:
    profile = prompt_profile()
    assert json.loads(canonical_json(profile)) == profile
    assert profile["set_version"] == prompts.PROMPT_SET_VERSION
    templates = profile["templates"]
    assert templates[MODE_QUOTE]["version"] == prompts.QUOTE_PROMPT_VERSION
    assert templates[MODE_CLAIM_LATTICE]["version"] == prompts.CLAIM_LATTICE_PROMPT_VERSION
    assert templates[MODE_QUOTE]["sha256"] != templates[MODE_CLAIM_LATTICE]["sha256"]
    assert all(len(t["sha256"]) == 64 for t in templates.values())


def test_template_hash_covers_text_and_version() -> None:
    t = TEMPLATES[MODE_QUOTE]
    assert prompts.PromptTemplate(t.mode, t.version, t.system).sha256() == t.sha256()
    assert prompts.PromptTemplate(t.mode, t.version, t.system + " ").sha256() != t.sha256()
    assert prompts.PromptTemplate(t.mode, "quote/2", t.system).sha256() != t.sha256()


pointer_ids = st.lists(st.integers(1, 999), unique=True, max_size=6).map(
    lambda ns: [f"E{n}" for n in ns]
)


@settings(max_examples=60, deadline=None)
@given(
    question=st.text(min_size=1).filter(lambda q: q.strip() != ""),
    ids=pointer_ids,
    texts=st.lists(
        st.text(alphabet=st.characters(codec="utf-8"), max_size=80)
        | st.text(alphabet="[]/E12\n Q:", max_size=40),
        max_size=6,
    ),
    mode=st.sampled_from(MODES),
)
def test_parse_messages_inverts_build_messages(
    question: str, ids: list[str], texts: list[str], mode: str
) -> None:
    evidence = [
        (pid, text) for pid, text in zip(ids, texts, strict=False) if f"[/{pid}]" not in text
    ]
    parts = parse_messages(build_messages(question, evidence, mode))
    assert parts == PromptParts(mode=mode, question=question.strip(), evidence=tuple(evidence))


def test_parse_messages_keeps_bracket_lookalikes_inside_evidence() -> None:
    evidence = [("E1", "[E2]\nnot a header\n[/E2]\n"), ("E2", ""), ("E3", "x\n[/E3] inline")]
    parts = parse_messages(build_messages("q", evidence, MODE_CLAIM_LATTICE))
    assert parts.evidence == tuple(evidence)


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": "user", "content": "hi"}],
        [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "hi"}],
        [
            {"role": "system", "content": TEMPLATES[MODE_QUOTE].system},
            {"role": "user", "content": "Question: no evidence header"},
        ],
        [
            {"role": "system", "content": TEMPLATES[MODE_QUOTE].system},
            {"role": "user", "content": "Evidence:\n\n[E1]\nnever closed\n\nQuestion: q"},
        ],
        [
            {"role": "system", "content": TEMPLATES[MODE_QUOTE].system},
            {"role": "user", "content": "Evidence:\n\n[E1]\nx\n[/E1]\n\nno question"},
        ],
    ],
)
def test_parse_messages_rejects_foreign_messages(messages: list[dict[str, str]]) -> None:
    with pytest.raises(InputError):
        parse_messages(messages)
