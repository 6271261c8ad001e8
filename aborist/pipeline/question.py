"""What makes a question answerable: the checks every run makes of its question before
any event is recorded (docs/pipeline.md), so a question that cannot be searched for is
refused with one plain line and no half-written run."""

from __future__ import annotations

from aborist.errors import InputError, require_question

__all__ = ["MAX_QUESTION_CHARS", "check_question"]

#: The longest question answered, in characters: longer is a document, not a question.
MAX_QUESTION_CHARS = 10_000


def check_question(question: object) -> str:
    """``question`` stripped, or an :class:`InputError` saying in plain words why it
    cannot be answered: empty, too long, not valid text, or nothing to search for (only
    punctuation, or only common words such as "what is the"). Runs before any event."""
    question = require_question(question)
    if len(question) > MAX_QUESTION_CHARS:
        raise InputError(
            f"the question is {len(question):,} characters long; the limit is "
            f"{MAX_QUESTION_CHARS:,} (ask about the document instead of pasting it)"
        )
    if "\x00" in question:
        raise InputError("the question contains a NUL character")
    if not question.isascii():
        try:
            question.encode("utf-8")
        except UnicodeEncodeError as e:
            code = ord(question[e.start])
            what = (
                f"the byte 0x{code - 0xDC00:02X}, which is not UTF-8"
                if 0xDC80 <= code <= 0xDCFF  # how Python carries an undecodable argv byte
                else f"half of a character (the lone surrogate U+{code:04X})"
            )
            raise InputError(
                f"the question is not valid text: character {e.start + 1} is {what}; "
                "check the encoding of your terminal or file"
            ) from None
    from aborist.corpus.lexicon import STOPWORDS, tokens
    from aborist.retrieval.fts import query_terms

    words = tokens(question)
    if not words:
        raise InputError(
            f"the question {question[:40]!r} has no words to search for, only punctuation"
        )
    if all(w in STOPWORDS for w in words) and not query_terms(question).kept:
        raise InputError(
            f"the question {question[:60]!r} has only common words (such as 'what', 'is', "
            "'the') and nothing to search for; name what you are asking about (write a "
            "keyword as code, e.g. `with`)"
        )
    return question
