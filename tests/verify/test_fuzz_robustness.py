"""Robustness fuzzing of the verifier and the extractive answerer.

A hostile document, answer or question must never crash the verifier, hang it or make it
nondeterministic, and the extractive answerer must never crash on what retrieval hands it.
Each property draws random and structured hostile text (unicode oddities, very long
tokens, repeated punctuation, huge or odd numbers, code-like tokens, markdown lines,
pointer tags, questions of every shape) and checks: no exception, a label of the four, a
rung 1..4, the same canonical verdict twice. A SIGALRM budget (generous: it only detects
a hang, it is no timing assertion) guards every call.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aborist.clients.extractive import closest_passages, extract
from aborist.verify.evidence import build_evidence
from aborist.verify.verify import verify_answer
from ledger.canonical import canonical_json

LABELS = {"VERIFIED", "SUPPORTED", "PARTIAL", "UNSUPPORTED"}
MODES = st.sampled_from(["quote", "claim-lattice"])
HANG_BUDGET_S = 20
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

WORDS = [
    "the", "of", "and", "a", "is", "was", "not", "never", "in", "to", "from", "before",
    "after", "than", "or", "by", "called", "named", "known", "as", "which", "share",
    "percent", "trait", "left", "right", "Bergen", "Anna", "Holm", "Museum", "River",
    "opened", "founded", "older", "younger", "Rust", "Python", "trait", "struct", "Vec<T>",
]  # fmt: skip
HOSTILE = [
    "\u0301", "e\u0301", "\u200b", "\u200d", "\u202e", "\u202d", "\ufeff", "\x00", "\\ud800",
    "\u00a0", "\u2028", "\u2029", "שלום", "مرحبا", "日本語", "𝔘𝔫𝔦", "ﬁ", "İ", "ß", "Σ", "ǅ",
    "x" * 3000, "A" * 2000, "_" * 500, "....", "((((", "))))", '""""', "''''", "“", "”", "‘",
    "’", "«", "»", "…", "—", "–", "-", "1e309", "9" * 500, "-0", "1,2,3,4,...", "NaN", "inf",
    "½", "1/0", "0x1F", "3.14.15", "1,000,000.5", "12th", "1902-1903", "a::b::<c<d>>",
    "f(g(h()))", "__init__", "--flag", "x_y_z", "#", "##", "###### h", "- ", "* ", "• ", "1. ",
    "| a | b |", "```", "[E1]", "[E2]", "[E1, E2]", "[E99]", "[E0]", "[e1]", "[E1]]", "[[E1]",
    "[...]", "(...)", "Mr.", "e.g.", "U.S.", "n't", "'s", "\n", "\n\n", "\t", "\r\n", " " * 300,
    "\\", "/", "|", "&", "*", "?", "!", ";", ":", ",", ".", "=", "->", "::", "<", ">", "`",
]  # fmt: skip
QUESTIONS = [
    "What share of the budget was approved?", "Which trait is implemented by Vec<T>?",
    "From right to left, which operator binds first?", "Who founded the Museum?",
    "When did the Museum open?", "How many percent were approved?", "What does NaN stand for?",
    "What is a::b?", "Why?", "?", "", "What is \"x\"?", "Is the Museum older than the River?",
    "What is the difference between a and b?", "Which is larger, 9 or 10?", "What is [E1]?",
    "What are the types of loops in Python?", "How do you define a class in Java?",
    "What is the abbreviation for United States?", "What is ABC short for?",
    "When would you ever use a trait?", "What is the letter x in math?", "A vs B?",
    "How does a struct differ from an enum?", "What happens when x is dropped?",
    "What does the struct do when dropped?", "What is it called?", "Name all the rivers.",
]  # fmt: skip

atom = st.sampled_from(WORDS) | st.sampled_from(HOSTILE) | st.text(max_size=12)
sep = st.sampled_from([" ", " ", " ", "", ". ", ", ", "\n", "? ", '" '])
chunk = st.lists(st.tuples(atom, sep).map("".join), max_size=60).map("".join)


@contextmanager
def hang_guard() -> Iterator[None]:
    """Fail (instead of hanging the suite) when one call runs past the budget."""

    def _hang(signum: int, frame: object) -> None:
        raise AssertionError(f"call ran past the {HANG_BUDGET_S} s hang budget")

    previous = signal.signal(signal.SIGALRM, _hang)
    signal.alarm(HANG_BUDGET_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@st.composite
def answers(draw: st.DrawFn, evidence: list[str]) -> str:
    """Answer lines: pieces cut out of the evidence (so the deeper rules fire), hostile
    text, wrapped in quotes, bullets or headings, with pointer tags well- and ill-formed."""
    lines = []
    for _ in range(draw(st.integers(1, 5))):
        n = draw(st.integers(0, len(evidence) - 1))
        source = evidence[n]
        if source and draw(st.booleans()):
            start = draw(st.integers(0, len(source) - 1))
            piece = source[start : start + draw(st.integers(1, 240))]
        else:
            piece = draw(chunk)
        if draw(st.booleans()):
            piece = piece + draw(atom) + " " + draw(atom)
        wrap = draw(st.sampled_from(['"{}"', "“{}”", "{}", "{}.", "- {}", "# {}", "{}, not x"]))
        tag = draw(st.sampled_from(["", f" [E{n + 1}]", f" [E{n + 1}, E2]", " [E99]", " [E0]"]))
        lines.append(wrap.format(piece) + tag)
    return draw(st.sampled_from(["\n", " ", "\n\n"])).join(lines)


def assert_sane_and_deterministic(
    answer: str, texts: list[str], question: str | None, mode: str, *, canonical: bool = True
) -> None:
    with hang_guard():
        first = verify_answer(answer, build_evidence(texts), question=question, mode=mode)
        second = verify_answer(answer, build_evidence(list(texts)), question=question, mode=mode)
    assert first.label in LABELS
    assert 1 <= first.rung <= 4
    if canonical:
        assert canonical_json(first.to_dict()) == canonical_json(second.to_dict())
    else:
        assert first.to_dict() == second.to_dict()


@FUZZ
@given(
    texts=st.lists(chunk, min_size=1, max_size=4),
    data=st.data(),
    mode=MODES,
    question=st.none() | st.sampled_from(QUESTIONS) | chunk,
)
def test_hostile_text_never_crashes_the_verifier(
    texts: list[str], data: st.DataObject, mode: str, question: str | None
) -> None:
    answer = data.draw(answers(texts))
    assert_sane_and_deterministic(answer, texts, question, mode)


@FUZZ
@given(
    texts=st.lists(chunk, min_size=1, max_size=4),
    question=st.sampled_from(QUESTIONS) | chunk,
    mode=MODES,
)
def test_extractive_answerer_never_crashes_and_its_answer_verifies_cleanly(
    texts: list[str], question: str, mode: str
) -> None:
    evidence = tuple((f"E{n}", t) for n, t in enumerate(texts, start=1))
    with hang_guard():
        answer = extract(question, evidence, mode)
        again = extract(question, evidence, mode)
    assert answer == again
    assert isinstance(answer, str) and answer
    assert set(closest_passages(answer)) <= {p for p, _ in evidence}
    assert_sane_and_deterministic(answer, texts, question, mode)


SENTENCE = st.lists(st.sampled_from(WORDS), min_size=1, max_size=10).map(
    lambda ws: " ".join(ws).capitalize() + "."
)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sentences=st.lists(SENTENCE, min_size=50, max_size=120),
    repeat=st.integers(5, 25),
    noise=st.sampled_from(HOSTILE),
    mode=MODES,
    question=st.sampled_from(QUESTIONS),
)
def test_thousands_of_sentences_and_long_runs_finish(
    sentences: list[str], repeat: int, noise: str, mode: str, question: str
) -> None:
    """A bounded (about 20 KB) document of thousands of sentences, with one hostile atom
    repeated into a long run, and an answer quoting its sentences, finishes in budget."""
    body = " ".join(sentences * repeat)[:16_000]
    texts = [body + " " + noise * (4_000 // max(1, len(noise))), noise * 50 + " " + body[:2_000]]
    answer = "\n".join(f'"{s}" [E1]' for s in sentences[:6]) + "\n" + noise * 20 + " [E2]"
    assert_sane_and_deterministic(answer, texts, question, mode)
    with hang_guard():
        extract(question, (("E1", texts[0]), ("E2", texts[1])), mode)


@FUZZ
@given(
    texts=st.lists(chunk, min_size=1, max_size=3),
    surrogate=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    mode=MODES,
)
def test_lone_surrogates_in_answer_and_question_never_crash(
    texts: list[str], surrogate: str, mode: str
) -> None:
    """A lone surrogate (an undecodable byte carried by ``surrogateescape``) in the answer
    or the question is text like any other to the verifier and the answerer. (The verdict
    quotes it and has no canonical JSON bytes then, so the two verdicts are compared as
    plain data here.)"""
    answer = f'"{texts[0][:80]}{surrogate}" [E1]\n{surrogate} x [E1]'
    question = f"What is {surrogate}?"
    evidence = tuple((f"E{n}", t) for n, t in enumerate(texts, start=1))
    with hang_guard():
        extract(question, evidence, mode)
    assert_sane_and_deterministic(answer, texts, question, mode, canonical=False)
