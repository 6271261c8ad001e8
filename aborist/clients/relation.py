"""The question's relation (:func:`question_relation`) and whether a sentence states it
(:func:`_in_relation`): the part of the offline answerer that reads what a question asks
of its anchor (the table is in docs/pipeline.md, "Extractive answerer";
:mod:`aborist.clients.extractive` ranks the sentences). Pure and deterministic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from aborist.clients.terms import LANGUAGES
from aborist.corpus.lexicon import STOPWORDS, light_stem

__all__ = ["Relation", "Stated", "question_relation"]

_WORD = re.compile(r"\w*[^\W_]\w*")  # identifiers whole: "__init__", not "init"


class Stated(Protocol):
    """What :func:`_in_relation` reads of a candidate."""

    @property
    def kind(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def context(self) -> str: ...
    @property
    def keys(self) -> frozenset[str]: ...


# ---------------------------------------------------------------------------------------
# The question's relation

_WHEN_USE = re.compile(
    r"^(?:when|why)\s+(?:would|should|do|does|can|might)\s+(?:i|you|we|one)\s+(?:ever\s+)?use"
    r"\s+(?:an?\s+|the\s+)?(?P<x>.+)$",
    re.IGNORECASE,
)
_USE = frozenset({light_stem("use")})
_USED_FOR = re.compile(
    r"^(?:what\s+(?:is|are)|how\s+(?:is|are))\s+(?:an?\s+|the\s+)?(?P<x>.+?)\s+used(?:\s+for)?$",
    re.IGNORECASE,
)
_STANDS_FOR = re.compile(
    r"^what\s+(?:does|do|is)\s+(?P<x>.+?)\s+(?:stand\s+for|short\s+for|an\s+abbreviation\s+for)$",
    re.IGNORECASE,
)
_SUPPOSED = re.compile(  # "what is __repr__ supposed to return": what X does
    r"^what\s+(?:is|are)\s+(?:an?\s+|the\s+)?(?P<x>.+?)\s+(?P<frame>(?:supposed|meant|expected)\s+to"
    r"\s+[a-z]+)$"
    r"|^what\s+(?:does|do)\s+(?P<y>.+?)\s+do\s+(?:when|if|to|with|on|for|after|once)\s.+$",
    re.IGNORECASE,
)
_DEFINITION = re.compile(
    r"^(?:what|who)\s+(?:is|are|was|were)\s+(?!the\s+difference\b)(?:an?\s+|the\s+)?(?P<x>.+)$"
    r"|^what\s+(?:does|do)\s+(?P<y>.+?)\s+(?:mean|do)$"
    r"|^(?:define|what\s+is\s+meant\s+by)\s+(?P<z>.+)$",
    re.IGNORECASE,
)
#: "when does the else block of a for loop run", "when is __init__ called": the time or
#: condition of X's closing verb; the verb is the frame when a word not a function word
#: is before it ("… a for loop run", not "… drop a value")
_WHEN = re.compile(
    r"^when\s+(?:is|are|was|were|does|do|did|will|would|should|can|could|might|must)\s+"
    r"(?P<x>.+?)\s+(?P<v>[a-z]+)$",
    re.IGNORECASE,
)
_COUNT = re.compile(
    r"^how\s+(?P<measure>many|much|long|big|large|small|old|often|far|wide|deep|high|fast)\s+"
    r"(?P<x>.+)$",
    re.I,
)
#: "… in Python", "… in a Rust program": which corpus is asked, not part of the anchor
_QUALIFIER = re.compile(
    r"(?i)(?<!\s)\s+in\s+(?:an?\s+)?(?:"
    + "|".join(sorted(LANGUAGES))
    + r")(?:\s+(?:programs?|code))?$"
)
_GENERIC = re.compile(r"<[A-Z][\w, ]*>")  # a type's generic parameters
#: "the A in Arc<T>": the letter is what stands for something
_LETTER = re.compile(r"^(?:the\s+)?(?:letter\s+)?[\"'`‘“]?([a-z])[\"'`’”]?\s+in\s+\S", re.I)
_CAUSE = re.compile(r"^why\s+(?P<x>.+)$", re.IGNORECASE)
_COMPARISON = re.compile(
    r"(?:difference|differences)\s+between\s+(?P<a>.+?)\s+and\s+(?P<b>.+)$"
    r"|^how\s+(?:does|do|is|are)\s+(?P<c>.+?)\s+(?:differ|different)\s+from\s+(?P<d>.+)$"
    r"|^(?P<e>.+?)\s+(?:vs\.?|versus)\s+(?P<f>.+)$",
    re.IGNORECASE,
)
_FRAME_WORDS = frozenset(
    light_stem(w)
    for w in (
        "many",
        "number",
        "mean",
        "meant",
        "difference",
        "differ",
        "different",
        "versus",
        "stand",
        # the asker's hedges (extractive/8): "what does yanking *actually* do"
        "actually",
        "exactly",
        "really",
        "precisely",
        "basically",
    )
)
_DEFINING_VERBS = frozenset(
    light_stem(w)
    for w in (
        "is", "are", "was", "were", "means", "refers", "denotes", "describes",
        "represents", "lets", "allows", "enables", "provides", "consists", "stands",
        "defines",
    )
)  # fmt: skip
_CATEGORY = frozenset(
    light_stem(w)
    for w in (
        "statement", "expression", "keyword", "type", "function", "method", "operator",
        "clause", "object", "construct", "syntax",
    )
)  # fmt: skip
_ARTICLES = frozenset({"the", "a", "an"})
_DETERMINERS = frozenset({"the", "a", "an", "s", "rust", "python", "in", "this", "these", "its"})
_AUXILIARIES = frozenset({"is", "are", "was", "were", "can", "may", "must", "will", "has", "have"})
_ASIDE = re.compile(r"\([^()]*\)|,\s[^,]{1,40},\s")
_PRONOUN = re.compile(r"^(?:It|They|This)\s+([a-z]+)\b")
_NUMBER_WORDS = frozenset(
    (
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "twenty", "thirty", "forty", "fifty", "hundred", "thousand",
        "million", "billion", "dozen", "single",
    )
)  # fmt: skip
_CAUSE_CUE = re.compile(
    r"\b(?:because|since|so\s+that|due\s+to|the\s+reason|reasons?\s+(?:is|are|why)|in\s+order"
    r"\s+to|that['’]s\s+why|this\s+is\s+why|therefore|thus|as\s+a\s+result|as\s+such|to\s+"
    r"(?:prevent|avoid|ensure|guarantee|make\s+sure)|which\s+means|otherwise|so\s+we)\b",
    re.IGNORECASE,
)
#: What says when: a condition or a time ("When the iterator is exhausted, …", "… is
#: executed if …", "… after the instance has been created", "at compile time").
_CONDITION_CUE = re.compile(
    r"\b(?:when|whenever|if|unless|until|after|before|once|as\s+soon\s+as|during|at\s+"
    r"(?:compile|run)\s*time|at\s+runtime|(?:each|every|the\s+first)\s+time)\b",
    re.IGNORECASE,
)
_CONTRAST_CUE = re.compile(
    r"\b(?:unlike|whereas|while|but|differ\w*|instead|rather\s+than|than|same|both|however|"
    r"contrast|compared?|similar\w*|versus|vs)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Relation:
    """What the question asks of its anchor: ``kind`` is one of definition, count, cause,
    abbreviation, condition, comparison, or ``None``; ``anchor`` the anchor's word sequences
    (two for a comparison)."""

    kind: str | None
    anchor: tuple[tuple[str, ...], ...] = ()
    plural: bool = False
    action: bool = False  # "what does X do": any verb after X states it
    frame: frozenset[str] = frozenset()  # question words an answer need not repeat
    # question words that rank an answer holding them higher but that no answer must hold
    # (the closing verb of "when does X run": "… is executed" says when it runs)
    optional: frozenset[str] = frozenset()


def _words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(text.lower()))


def question_relation(question: str) -> Relation:
    """The relation the question asks for and its anchor (the table in the module doc)."""
    q = _QUALIFIER.sub("", " ".join(question.split()).rstrip("?.! "))
    q = _GENERIC.sub("", q)  # "Box<T>" is the type Box: "Boxes allow …" defines it
    if m := _COMPARISON.search(q):
        a, b = (g for g in m.groups() if g is not None)
        return Relation("comparison", (_words(a), _words(b)))
    if m := _COUNT.match(q):
        # "how many X does Y contain": the closing verb asks for the count, it is not a
        # word the answer must hold ("… a sequence counting 30,847 nucleotides")
        verb = re.search(r"\s(?:does|do|did|can|will)\s.+\s([a-z]+)$", m.group("x"), re.I)
        words = {light_stem(verb.group(1).lower())} if verb else set()
        # "how big is a Boolean": the measure asks for the number ("one byte in size"),
        # it is not a word the answer must hold
        words.add(light_stem(m.group("measure").lower()))
        return Relation("count", (_words(m.group("x")),), frame=frozenset(words))
    if m := _CAUSE.match(q):
        return Relation("cause", (_words(m.group("x")),))
    if m := _STANDS_FOR.match(q):
        letter = _LETTER.match(m.group("x"))
        return Relation(
            "abbreviation", ((letter.group(1).lower(),) if letter else _words(m.group("x")),)
        )
    if m := _SUPPOSED.match(q):  # "supposed to return" asks what X does: a frame
        frame = frozenset(light_stem(w) for w in _words(m.group("frame") or "") if w != "to")
        x = m.group("x") or m.group("y")
        return Relation("definition", (_words(x),), action=True, frame=frame)
    if m := _WHEN_USE.match(q):  # "when would I use Box<T>": what X is used for
        return Relation("definition", (_words(m.group("x")),), action=True, frame=_USE)
    if m := _WHEN.match(q):  # "when does X run": a condition or a time
        x, v = m.group("x"), m.group("v").lower()
        last = _words(x)[-1:] or ("",)
        closing = frozenset({light_stem(v)} if last[0] not in STOPWORDS else ())
        return Relation("condition", (_words(x),), optional=closing)
    if m := _USED_FOR.match(q):  # "what is the if statement used for": "X is used for …"
        return Relation("definition", (_words(m.group("x")),), action=True)
    if m := _DEFINITION.match(q):
        x = next(g for g in m.groups() if g is not None)
        plural = bool(re.match(r"(?i)^what\s+are\b", q))
        action = bool(re.search(r"(?i)\sdoe?s?\s.+\sdo$", q))
        return Relation("definition", (_words(x),), plural=plural, action=action)
    return Relation(None)


def _in_relation(rel: Relation, c: Stated) -> bool:
    """Whether candidate ``c`` states the question's relation; the coverage gate has
    already checked that it holds most of the question."""
    if c.kind == "list":
        return rel.kind == "definition" and rel.plural and _holds_anchor(rel, c.context)
    if c.kind == "described" and rel.kind == "definition":  # "str.join(…)" / "Return …"
        return _holds_anchor(rel, c.context)
    if c.kind == "paired":  # the second sentence states it, the first names X
        return rel.kind == "abbreviation" and _expands(rel, c.context)
    if c.kind == "continued":  # "X may …. It terminates …": X is the subject of both
        if rel.kind == "cause":  # "… use move before the list. This technique is useful so
            return bool(_CAUSE_CUE.search(c.text))  # that …": the two give the reason
        return rel.kind == "definition" and _defines(rel, c.context, verbish=True)
    sentence = c.context if c.kind == "followed" else c.text  # "X …. Instead, …": X states it
    if rel.kind == "definition":
        return _defines(rel, sentence, verbish=rel.action)
    if rel.kind == "abbreviation":
        return _expands(rel, sentence)
    if rel.kind == "count":
        return any(w.isdigit() or w in _NUMBER_WORDS for w in _words(sentence))
    if rel.kind == "cause":
        return bool(_CAUSE_CUE.search(sentence))
    if rel.kind == "condition":
        return bool(_CONDITION_CUE.search(sentence))
    if rel.kind == "comparison":
        a, b = ({light_stem(w) for w in part if w not in STOPWORDS} for part in rel.anchor)
        if bool(a & c.keys) and bool(b & c.keys) and bool(_CONTRAST_CUE.search(sentence)):
            return True
        # defining either side answers "the difference between X and Y" too
        return _defines_side(rel, sentence)
    return False


def _defines_side(rel: Relation, sentence: str) -> bool:
    """Whether ``sentence`` defines a side of comparison ``rel`` ("Statements are …")."""
    return any(_defines(Relation("definition", (part,)), sentence) for part in rel.anchor)


_STRONG_CONTRAST = re.compile(
    r"\b(?:unlike|whereas|differ\w*|instead\s+of|rather\s+than|in\s+contrast|contrary)\b", re.I
)


def contrasts(rel: Relation, c: Stated) -> bool:
    """Whether candidate ``c`` sets the two sides of comparison ``rel`` apart in so many
    words ("Unlike a tuple, every element of an array …"), or defines one of them: more
    than a sentence naming both with a "but" or a "than"."""
    if _defines_side(rel, c.text):
        return True
    a, b = ({light_stem(w) for w in part if w not in STOPWORDS} for part in rel.anchor)
    return bool(a & c.keys and b & c.keys and _STRONG_CONTRAST.search(c.text))


def _expands(rel: Relation, sentence: str) -> bool:
    """ "X stands for", "X, which is an abbreviation for", "X is short for"."""
    phrase = r"\W+".join(re.escape(w) for w in rel.anchor[0])
    expands = r"\W+(?:\w+\W+){0,3}?(?:stands\s+for|abbreviation\s+(?:for|of)|short\s+for)"
    generic = r"(?:<[\w, ]*>)?"  # "Rc<T>, which is an abbreviation for …"
    return re.search(rf"(?i)\b{phrase}{generic}{expands}", sentence) is not None


def _core(anchor: tuple[str, ...]) -> list[str]:
    """The anchor's distinctive stems: no article or count ("the three rules"), and no
    category noun ("statement", "type") unless nothing else is left."""
    want = [light_stem(w) for w in anchor if w not in _ARTICLES and w not in _NUMBER_WORDS]
    want = [w for w in want if not w.isdigit()]
    return (
        [w for w in want if w not in _CATEGORY and w not in STOPWORDS]
        or [w for w in want if w not in _CATEGORY]  # "the with statement"
        or want
    )


def _holds_anchor(rel: Relation, text: str) -> bool:
    core = _core(rel.anchor[0])
    return bool(core) and set(core) <= {light_stem(w) for w in _words(text)}


def _verb(word: str, verbish: bool) -> bool:
    if light_stem(word) in _DEFINING_VERBS:  # "allows", and "allow" after a plural subject
        return True
    if not verbish:
        return False
    return word in _AUXILIARIES or (len(word) > 3 and word.endswith("s") and word[-2] != "s")


def _defines(rel: Relation, sentence: str, *, verbish: bool = False) -> bool:
    """ "X is …" with X as the subject — only articles before it, a category noun such as
    "statement" may follow it ("The nonlocal statement causes …"), asides in brackets or
    commas skipped ("Smart pointers, on the other hand, are …") — or "… X, which is …",
    "… X that compares …", or "… called X". With ``verbish`` ("what does X do") any verb
    after X will do, else a defining one (is, are, means, lets, allows …)."""
    core = _core(rel.anchor[0])
    words = list(_words(_ASIDE.sub(" ", sentence)))
    stems = [light_stem(w) for w in words]
    if not core or not set(core) <= set(stems):
        return False
    anchor = set(core) | _CATEGORY
    for i, s in enumerate(stems):
        if s != core[-1]:
            continue
        j = i + 1
        while j < len(stems) and (stems[j] in _CATEGORY or len(words[j]) == 1):
            j += 1  # "Rust’s char type is", "The pass statement does", "Box<T> allows"
        related = j < len(words) and words[j] in ("which", "that", "who")
        j += related
        # the whole anchor is the subject ("The integer type is" does not define "the
        # default integer type"), or the phrase just before "which"/"that"
        before = stems[: i + 1] if not related else stems[max(0, i - 2 * len(core)) : i + 1]
        whole = set(core) <= set(before)
        subject = whole and all(w in _DETERMINERS or light_stem(w) in anchor for w in words[:i])
        related = related and whole
        negated = words[j + 1 : j + 2] in (["t"], ["not"], ["never"])
        if (subject or related) and j < len(words) and _verb(words[j], verbish) and not negated:
            return True  # a definition says what X is or does, not what it cannot do
    phrase = r"\W+".join(re.escape(w) for w in rel.anchor[0])
    named = rf"(?i)\b(?:called|named|termed|known\s+as)\W+{phrase}s?(?![^\W_]|\s+[a-z])"
    return re.search(named, sentence) is not None
