"""A quotation written with backquotes and apostrophes standing alone (`` … '', as ClapNQ
and other tokenized corpora write it) is read as a quotation (docs/verifier.md §1, step
5): its title is whole, and the sentence it ends is a sentence of its own."""

from __future__ import annotations

from aborist.verify.evidence import build_evidence
from aborist.verify.text.sentences import split_sentences
from aborist.verify.verify import verify_answer

PASSAGE = (
    "As they performed , the recording of the song `` Girl You Know It 's True '' jammed "
    "and began to skip . Mercutio comments : `` That same pale wench torments him so . '' "
    "Benvolio urges Romeo to go ."
)


def _label(answer: str, question: str) -> str:
    v = verify_answer(answer, build_evidence([PASSAGE]), question=question)
    return f"{v.audit_mode} {v.label}"


def test_a_fragment_of_a_backquoted_title_is_no_title() -> None:
    q = "Which song's recording jammed on stage?"
    assert _label('"Girl You Know"', q) == "UNGROUNDED UNSUPPORTED"  # textcanon-1: STRICT
    assert _label('"Girl You Know It\'s True"', q) == "STRICT VERIFIED"


def test_a_quotation_that_ends_a_sentence_ends_it() -> None:
    sentences = split_sentences(PASSAGE)
    assert sentences[-1] == "Benvolio urges Romeo to go ."
    assert len(sentences) == 3


def test_a_soft_wrap_inside_the_quotation_changes_nothing() -> None:
    q = "Which song's recording jammed on stage?"
    wrapped = PASSAGE.replace("Girl You Know", "Girl You\nKnow")
    for text in (PASSAGE, wrapped):
        v = verify_answer('"Girl You Know"', build_evidence([text]), question=q)
        assert (v.audit_mode, v.label) == ("UNGROUNDED", "UNSUPPORTED")
