"""The extractive/5 rules of the offline answerer: identifiers as whole tokens, code keywords
a question names as anchors, a language as a corpus cue, subjectless descriptions after
their term, the frames "X supposed to", "X do when", "the A in X stand for", a definition's
whole anchor as its subject, comparisons, and keywords that abbreviate a word. Pure
functions of (question, evidence, mode)."""

from __future__ import annotations

import pytest

from aborist.clients.extractive import extract, question_relation
from aborist.clients.terms import (
    identifiers,
    named_keywords,
    named_language,
    qualifier_language,
    question_keys,
    text_keys,
)
from aborist.prompts import CANNOT_ANSWER

MODE = "claim-lattice"


def refused(answer: str) -> bool:
    return answer.startswith(CANNOT_ANSWER)


# ---------------------------------------------------------------------------------------
# Identifiers


def test_an_identifier_is_one_key_and_the_question_naming_it_meets_only_it() -> None:
    assert identifiers('Whenever "__init_subclass__()" runs, into_iter is called') == {
        "__init_subclass__",
        "into_iter",
    }
    assert "__init__" in question_keys("When is __init__ called?")
    assert "init" not in question_keys("When is __init__ called?")
    # a sentence holds the identifier whole and its parts, so "init" still meets it
    keys = text_keys('"__init_subclass__()" is called on the parent class.')
    assert {"__init_subclass__", "init", "subclass"} <= keys and "__init__" not in keys


def test_a_question_naming_init_is_not_answered_by_init_subclass() -> None:
    other = ("E1", 'Whenever a class inherits, "__init_subclass__()" is called on the parent.')
    described = ("E2", "object.__init__(self[, ...])\nCalled after the instance has been created.")
    assert refused(extract("When is __init__ called?", (other,), MODE))
    assert extract("When is __init__ called?", (other, described), MODE) == (
        "Called after the instance has been created. [E2]"
    )


# ---------------------------------------------------------------------------------------
# Code keywords


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("When does the else block of a for loop run?", {"else", "for"}),
        ("What is the difference between is and ==?", {"is"}),
        ("What value does x and y return?", {"and"}),
        ('What is "with" used for?', {"with"}),
        ("What is if vs match?", {"if"}),
        # English function words stay stopwords
        ("Is there a statement that does nothing, for a block?", set()),
        ("How do I write a tuple with only one element?", set()),
        ("What is the A in Arc<T>?", set()),
    ],
)
def test_a_code_keyword_is_named_in_quotes_after_an_article_or_beside_an_operator(
    question: str, named: set[str]
) -> None:
    assert named_keywords(question) == named


def test_a_sentence_holds_a_keyword_only_where_it_names_it_as_code() -> None:
    keywords = frozenset({"and", "else"})
    assert "and" in text_keys('The expression "x and y" first evaluates x.', keywords)
    assert "and" not in text_keys("It relates the lifetimes of x and y.", keywords)
    assert "else" in text_keys("The else clause runs last.", keywords)
    # the section heading names the construct every sentence of the section is about
    assert "else" in text_keys("It runs last.", keywords, heading='The "else" clause')


def test_a_keyword_the_question_names_decides_between_sentences() -> None:
    evidence = (
        ("E1", "With threads, the join method blocks until the thread is done running."),
        ("E2", 'The "for" statement\nThe "else" block of the loop runs when the iterator ends.'),
    )
    answer = extract("When does the else block of a for loop run?", evidence, MODE)
    assert answer == 'The "else" block of the loop runs when the iterator ends. [E2]'
    assert refused(extract("When does the else block of a for loop run?", evidence[:1], MODE))


# ---------------------------------------------------------------------------------------
# Languages

PY_AWAIT = ("E2", "Await expression\nSuspend the execution of coroutine on an awaitable object.")
PY_NAMED = ("E3", "Python coroutines can be suspended and resumed at many points.")
PY_ASYNC = ("E4", "In Python, async for and async with run in a coroutine.")
RUST_AWAIT = ("E1", "In Rust, await on a future suspends the execution of the async block.")


def test_the_language_a_question_names_and_how() -> None:
    assert named_language("What does await do in Python?") == "python"
    assert named_language("Is Rust a better first language than Python?") is None
    assert qualifier_language("What does await do in Python?") == "python"
    assert qualifier_language("What is Python's global interpreter lock?") == "python"
    assert qualifier_language("Is there a maximum size for Python integers?") is None


def test_a_passage_naming_another_language_is_not_evidence_for_the_question() -> None:
    # the Rust passage covers the question's words, but the question asks about Python
    assert refused(extract("What does await do in Python?", (RUST_AWAIT,), MODE))
    # more passages name Python than Rust: the evidence is of Python, and the description
    # of await need not say "Python"
    evidence = (RUST_AWAIT, PY_AWAIT, PY_NAMED, PY_ASYNC)
    answer = extract("What does await do in Python?", evidence, MODE)
    assert answer == "Suspend the execution of coroutine on an awaitable object. [E2]"
    # with as many passages naming Rust as Python the evidence is of neither: the answer
    # must hold "Python" itself
    assert refused(extract("What does await do in Python?", evidence[:3], MODE))


def test_a_language_the_evidence_is_not_of_stays_a_word_to_hold() -> None:
    # E4 covers two of the three words besides the language; whether that passes depends
    # on whether "Haskell" is a corpus cue (dropped) or a word the answer must hold
    question = "How do you declare a type class in Haskell?"
    answer = ("E4", "You declare a type with a trait.")
    rust = tuple((f"E{i}", f"Rust has class number {i}.") for i in (1, 2, 3))
    haskell = tuple((f"E{i}", f"Haskell has class number {i}.") for i in (1, 2, 3))
    assert refused(extract(question, (*rust, answer), MODE))
    assert extract(question, (*haskell, answer), MODE) == "You declare a type with a trait. [E4]"


# ---------------------------------------------------------------------------------------
# Frames and descriptions


def test_the_frames_of_a_definition() -> None:
    repr_ = question_relation("What is __repr__ supposed to return?")
    assert (repr_.kind, repr_.anchor, repr_.action) == ("definition", (("__repr__",),), True)
    assert {"suppos", "return"} <= repr_.frame
    op = question_relation("What does the ? operator do when the Result is an error?")
    assert (op.kind, op.anchor, op.action) == ("definition", (("the", "operator"),), True)
    assert question_relation("What does await do in Python?").anchor == (("await",),)
    arc = question_relation("What does the A in Arc<T> stand for?")
    assert (arc.kind, arc.anchor) == ("abbreviation", (("a",),))


def test_a_subjectless_description_after_its_signature_defines_it() -> None:
    evidence = (
        ("E1", "The join method of a thread handle waits for the thread to finish."),
        ("E2", "str.join(iterable)\nReturn a string which is the concatenation of the strings."),
    )
    answer = extract("What does str.join do?", evidence, MODE)
    assert answer.splitlines()[0] == (
        "Return a string which is the concatenation of the strings. [E2]"
    )
    # a noun phrase after a heading has a subject of its own: it describes nothing
    heading = ("E1", 'The "del" statement\nDeletion of a target list deletes each target.')
    assert refused(extract("What is the del statement used for?", (heading,), MODE))


def test_the_letter_of_an_abbreviation_is_answered_with_what_it_is_of() -> None:
    arc = (
        "E1",
        "Arc<T> is a type like Rc<T> that is safe to use in concurrent situations. "
        "The a stands for atomic, meaning it is an atomically reference-counted type.",
    )
    assert extract("What does the A in Arc<T> stand for?", (arc,), MODE).splitlines() == [
        "Arc<T> is a type like Rc<T> that is safe to use in concurrent situations. [E1]",
        "The a stands for atomic, meaning it is an atomically reference-counted type. [E1]",
    ]
    other = ("E1", "Mutex<T> is a lock. The a stands for atomic in another type.")
    assert refused(extract("What does the A in Arc<T> stand for?", (other,), MODE))


def test_a_definition_has_the_whole_anchor_as_its_subject() -> None:
    evidence = (
        ("E1", "The integer type is i32 because that is the default integer type here."),
        ("E2", "The default integer type is i32, a signed 32-bit integer."),
    )
    answer = extract("What is the default integer type?", evidence, MODE)
    assert answer == "The default integer type is i32, a signed 32-bit integer. [E2]"


# ---------------------------------------------------------------------------------------
# Comparisons and abbreviating keywords


def test_a_comparison_must_be_stated_and_a_stated_contrast_comes_first() -> None:
    question = "What is the difference between a tuple and an array?"
    weak = ("E1", "A tuple groups values, but an array is used here too.")
    strong = ("E2", "Unlike a tuple, every element of an array must have the same type.")
    assert extract(question, (weak, strong), MODE).splitlines()[0].endswith("[E2]")
    # sharing the words without a contrast or a definition is no answer
    plain = ("E1", "A tuple and an array are printed with a loop.")
    assert refused(extract(question, (plain,), MODE))


def test_a_keyword_after_an_article_meets_the_word_it_abbreviates() -> None:
    assert "const" in named_keywords("Can I use mut with a const?")
    assert "const" in text_keys(
        "You aren't allowed to use mut with constants.", frozenset({"const"})
    )
    assert "mut" not in text_keys("A mutex guards data.", frozenset({"mut"}))
    assert "mut" in text_keys("A mutable reference.", frozenset({"mut"}))
    # without the article "del" is only itself: "deleted" does not spell it out
    assert "del" not in named_keywords("What does del do to a name?")


def test_a_sentence_opening_with_instead_follows_the_one_it_continues() -> None:
    evidence = (
        (
            "E1",
            "In release mode, Rust does not include checks for integer overflow. "
            "Instead, if overflow occurs, Rust performs wrapping.",
        ),
    )
    answer = extract("What happens when an integer overflows in release mode?", evidence, MODE)
    assert answer.splitlines() == [
        "In release mode, Rust does not include checks for integer overflow. [E1]",
        "Instead, if overflow occurs, Rust performs wrapping. [E1]",
    ]
    # the continuation is scored as the sentence it continues: the two together hold
    # "raised" and "used", but the pair is not an answer for it (the second sentence,
    # holding the rarer word, answers alone)
    other = (("E1", "A TypeError is raised for an unfilled slot. Otherwise, the list is used."),)
    assert extract("What is raise used for?", other, MODE) == "Otherwise, the list is used. [E1]"


def test_an_operator_is_held_by_the_word_its_passage_glosses_it_with() -> None:
    glossed = (
        "E1",
        'The "%" (modulo) operator yields the remainder. '
        "The modulo operator always yields a result with the sign of its second operand.",
    )
    question = "What sign does the result of % have?"
    assert extract(question, (glossed,), MODE).splitlines()[0] == (
        "The modulo operator always yields a result with the sign of its second operand. [E1]"
    )
    # without the gloss in its passage, "modulo" does not name "%"
    bare = ("E1", "The modulo operator always yields a result with the sign of its operand.")
    assert refused(extract(question, (bare,), MODE))


def test_the_placeholders_of_an_example_are_not_words_to_hold() -> None:
    assert question_keys("How do chained comparisons like a < b < c work?") == {
        "chain",
        "comparison",
        "work",
    }
    evidence = (("E1", 'Comparisons can be chained, e.g., "x < y <= z" means "x < y and y <= z".'),)
    question = "How do chained comparisons like a < b < c work?"
    assert extract(question, evidence, MODE).endswith("[E1]")
    # the example's operator is still one the answer must hold
    without = (("E1", "Comparisons can be chained arbitrarily in an expression."),)
    assert refused(extract(question, without, MODE))


def test_how_it_works_in_a_language_and_a_by_sentence_says_how() -> None:
    evidence = (
        (
            "E1",
            "It is possible to make a relative import within the same package. "
            "By using leading dots you can specify how high to traverse up.",
        ),
        ("E2", "Python packages are directories of modules."),
    )
    # "work" is the frame's verb with or without "in Python" after it; the "By using …"
    # sentence says how, so it follows the sentence it continues
    answer = extract("How do relative imports work in Python?", evidence, MODE)
    assert answer.splitlines() == [
        "It is possible to make a relative import within the same package. [E1]",
        "By using leading dots you can specify how high to traverse up. [E1]",
    ]


def test_a_this_technique_sentence_gives_the_reason_for_the_one_before() -> None:
    evidence = (
        (
            "E1",
            "You can write the move keyword before the parameter list of a closure.\n"
            "This technique is useful so that the new thread owns the data.",
        ),
    )
    question = "Why would I write move before a closure's parameter list?"
    assert extract(question, evidence, MODE).splitlines() == [
        "You can write the move keyword before the parameter list of a closure. [E1]",
        "This technique is useful so that the new thread owns the data. [E1]",
    ]
    # without the reason, the sentence naming the construct does not say why
    assert refused(extract(question, (("E1", evidence[0][1].splitlines()[0]),), MODE))


def test_when_would_i_use_x_asks_what_x_is_used_for() -> None:
    rel = question_relation("When would I use Box<T>?")
    # the generic parameter is not part of the anchor; "use" is the frame's verb
    assert (rel.kind, rel.anchor, rel.action, rel.frame) == (
        "definition",
        (("box",),),
        True,
        frozenset({"use"}),
    )
    evidence = (
        ("E1", "Next, we put a value of type Box<T> in a listing of our own."),
        ("E2", "Boxes allow you to store data on the heap rather than the stack."),
    )
    # "Boxes allow …": a plural subject takes the defining verb's base form
    assert extract("When would I use Box<T>?", evidence, MODE) == (
        "Boxes allow you to store data on the heap rather than the stack. [E2]"
    )
    # an abbreviation keeps its generic parameter in the sentence that expands it
    rc = (("E1", "Rc<T>, which is an abbreviation for reference counting, counts owners."),)
    assert extract("What does Rc<T> stand for?", rc, MODE).endswith("[E1]")
    # the generic parameter makes no word pair of the question: "Box<T> is" does not
    # outrank "The Box type is" for holding the pair (box, t)
    pair = (("E1", "The Box type is a pointer."), ("E2", "Box<T> is a pointer type."))
    assert extract("What is Box<T>?", pair, MODE).splitlines()[0].endswith("[E1]")


def test_a_language_is_never_weighed_in_the_coverage() -> None:
    # the evidence is of Python, not Java: "Java" must be in the answer itself, and a
    # sentence that holds it but nothing else of the question is no answer
    evidence = (
        ("E1", "Python passes self to __init__ and __init__ returns None."),
        ("E2", "Python extension modules may be written in C or Java."),
        ("E3", "Python objects are created by __new__."),
    )
    assert refused(extract("What is __init__ supposed to return in Java?", evidence, MODE))
    java = (*evidence, ("E4", "In Java and Python alike, __init__ returns nothing."))
    answer = extract("What is __init__ supposed to return in Java?", java, MODE)
    assert answer == "In Java and Python alike, __init__ returns nothing. [E4]"
