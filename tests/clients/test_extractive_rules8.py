"""The extractive/8 rules of the offline answerer: a code term the question names
("list.sort()", "std::sync::mpsc") and the asker's action ("how do I *sort* …") must be
said by the answer, or it refuses. Pure functions of (question, evidence, mode)."""

from __future__ import annotations

import pytest

from aborist.clients.extractive import EXTRACTIVE_VERSION, asked_part, extract, named
from aborist.clients.terms import action_verbs, code_terms, says_verb
from aborist.prompts import CANNOT_ANSWER

MODE = "claim-lattice"


def answer(question: str, *evidence: tuple[str, str]) -> str:
    return extract(question, evidence, MODE)


def test_the_version_is_extractive_8() -> None:
    assert EXTRACTIVE_VERSION == "extractive/8"


@pytest.mark.parametrize(
    ("question", "terms"),
    [
        ("What is the time complexity of list.sort()?", ["sort"]),
        ("What does mpsc stand for in std::sync::mpsc?", ["mpsc"]),
        ("What does str.join do?", ["join"]),
        ("What is sorted() for?", ["sorted"]),
        ("What does `Rc::clone` do?", ["clone"]),
        ("Is the result, e.g. the value, copied?", []),  # an abbreviation
        ("What is a slice?", []),
    ],
)
def test_code_terms(question: str, terms: list[str]) -> None:
    assert code_terms(question) == terms


@pytest.mark.parametrize(
    ("question", "verbs"),
    [
        ("How do I sort a HashMap by its values?", ("sort",)),
        ("Can I share an Rc<T> between multiple threads?", ("share",)),
        ("How do I force an argument to be passed by keyword?", ("force", "passed")),
        ("How to run only the ignored tests?", ("run",)),
        ("Is it possible to sort a HashMap?", ("sort",)),
        ("Is there a way to stop a thread?", ("stop",)),
        ("How do I get the length of a vector?", ()),  # a light verb says nothing
        # "to Cargo" names a place: only "to be <participle>" gives a second action
        ("How do I add a dependency to Cargo?", ("add",)),
        ("How do I send data to threads?", ("send",)),
        ("What is a slice?", ()),
    ],
)
def test_action_verbs(question: str, verbs: tuple[str, ...]) -> None:
    assert action_verbs(question) == verbs


def test_says_verb_reads_forms_of_the_verb() -> None:
    assert says_verb("sort", {"sorting"})
    assert says_verb("make", {"making"})
    assert says_verb("run", {"ran"})
    assert not says_verb("sort", {"sorted_map", "order"})


HASHMAP = (
    "E1",
    "Like vectors, hash maps are homogeneous: all of the keys must have the same type, and "
    "all of the values must have the same type. A HashMap stores its values by their keys.",
)
# "sort" is common in this evidence, so it weighs little: without the rule the sentence
# holding "HashMap" and "values" passes the coverage gate
SORTING = (
    "E2",
    "The sort method sorts a vector in place. Sorting a slice keeps equal elements in order. "
    "A sort by key compares the keys only.",
)


def test_an_answer_must_say_the_askers_action() -> None:
    got = answer("How do I sort a HashMap by its values?", HASHMAP, SORTING)
    assert got.startswith(CANNOT_ANSWER)


def test_the_action_said_answers() -> None:
    said = ("E3", "You can sort a HashMap by its values after collecting it into a vector.")
    got = answer("How do I sort a HashMap by its values?", HASHMAP, SORTING, said)
    assert got.splitlines()[0] == f"{said[1]} [E3]"


def test_the_complements_verb_will_do() -> None:
    # "how do I force X to be passed by keyword": a sentence saying how it is passed answers
    kw = ("E1", "Parameters after a bare star are keyword-only and may only be passed by keyword.")
    other = ("E2", "We force the closure to take ownership of the values it uses.")
    got = answer("How do I force a parameter to be passed by keyword?", kw, other)
    assert got == f"{kw[1]} [E1]"


THREADS = (
    "E1",
    "Splitting the computation in your program into multiple threads to run multiple tasks "
    "at the same time can improve performance, but it also adds complexity.",
)


LISTS = ("E2", "The list type is mutable. A list holds any objects. You can sort a list.")


def test_an_answer_must_say_the_code_term() -> None:
    # "time" and "complexity" without "sort": about something else (without the rule the
    # two words, rare in the evidence, pass the gate)
    got = answer("What is the time complexity of list.sort()?", THREADS, LISTS)
    assert got.startswith(CANNOT_ANSWER)


def test_the_code_term_said_answers() -> None:
    said = ("E3", 'The "sort()" method of a list takes time in proportion to its complexity.')
    got = answer("What is the time complexity of list.sort()?", THREADS, LISTS, said)
    assert got.splitlines()[0] == f"{said[1]} [E3]"


def test_a_snake_case_code_term_said_answers() -> None:
    """A code term with an underscore ("Vec::sort_by" → "sort_by") is said by a sentence
    that writes it: the words read from the candidate used to split it into "sort" and
    "_by", so no sentence could say it."""
    said = ("E1", "On a Vec, the sort_by method sorts the elements with a comparator function.")
    got = answer("What does Vec::sort_by do?", said)
    assert got.splitlines()[0] == f"{said[1]} [E1]"


def test_a_file_or_site_name_is_no_code_term() -> None:
    assert code_terms("Does every crate get its own Cargo.lock file?") == []
    assert code_terms("What does yanking a version published to crates.io do?") == []


@pytest.mark.parametrize(
    ("question", "asked", "context"),
    [
        (
            "Coming from C, where a bool is often an int: how big is a Boolean in Rust?",
            "How big is a Boolean in Rust?",
            {"bool", "int", "often"},
        ),
        ("In C I can write x = y = 6; can I chain them?", "Can I chain them?", {"writ", "6"}),
        (
            "Is it true that an unsafe block disables checks?",
            "An unsafe block disables checks?",
            set(),
        ),
        ("What is a slice?", "What is a slice?", set()),
        # a context that is itself a question is asked too
        (
            "What is the difference between Rc and Arc; which should I use?",
            "What is the difference between Rc and Arc; which should I use?",
            set(),
        ),
        (
            "What does the ? operator do: return early?",
            "What does the ? operator do: return early?",
            set(),
        ),
    ],
)
def test_asked_part(question: str, asked: str, context: set[str]) -> None:
    got, keys = asked_part(question)
    assert got == asked
    assert context <= keys


BOOL = ("E1", "Booleans are one byte in size. The Boolean type is specified using bool.")
PROGRAMS = (
    "E2",
    "C programs often treat an int as a truth value, and an int where a bool is expected "
    "is accepted. In C, where a value is often an int, the size varies.",
)


def test_the_askers_context_is_not_required() -> None:
    # "Coming from C, where a bool is often an int:" is the asker's; the question is how big
    # a Boolean is ("big" is the measure asked for, not a word the answer must hold)
    got = answer(
        "Coming from C, where a bool is often an int: how big is a Boolean?", BOOL, PROGRAMS
    )
    assert got.splitlines()[0] == f"{BOOL[1].split('. ')[0]}. [E1]"


def test_a_count_measure_is_not_required() -> None:
    got = answer("How big is a Boolean?", BOOL, PROGRAMS)
    assert got.splitlines()[0] == f"{BOOL[1].split('. ')[0]}. [E1]"


def test_a_hedge_is_not_a_word_to_find() -> None:
    sync = ("E1", "The Sync marker trait indicates that a type is safe to share between threads.")
    other = ("E2", "Exactly one thread may own the value, and the value is exactly the same.")
    got = answer("What exactly does the Sync marker trait promise about a type?", sync, other)
    assert got.splitlines()[0] == f"{sync[1]} [E1]"


def test_named_reads_the_capitalized_words_after_the_first() -> None:
    assert named("How do I find memory leaks in a Rust program with Valgrind?") == {"valgrind"}
    assert named("Which is faster, BTreeMap or HashMap?") == {"btreemap", "hashmap"}
    assert named("What is a slice?") == set()


LEAKS = ("E1", "You can find memory leaks in a program by counting the references it holds.")
# sentences sharing none of the question's words: its words are rare in the evidence, so
# without the rule the sentence above passes the gate although it never names Valgrind
FILLER = tuple(
    (f"E{i}", f"Chapter {i} covers the {topic} of the standard library in detail.")
    for i, topic in enumerate(
        ("iterators", "closures", "traits", "modules", "crates", "errors", "macros", "slices",
         "strings", "vectors", "threads", "channels", "patterns", "generics"),
        start=2,
    )
)  # fmt: skip


def test_a_name_no_passage_holds_is_refused() -> None:
    # every other word of the question is in the passage, Valgrind is not: not about it
    question = "How do I find memory leaks in a program with Valgrind?"
    assert answer(question, LEAKS, *FILLER).startswith(CANNOT_ANSWER)


def test_a_name_a_passage_holds_answers() -> None:
    tool = ("E99", "You find memory leaks in a program by running it under Valgrind.")
    question = "How do I find memory leaks in a program with Valgrind?"
    assert answer(question, LEAKS, tool, *FILLER).splitlines()[0] == f"{tool[1]} [E99]"
