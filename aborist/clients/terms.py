"""The offline answerer's words: which tokens of a question and of a sentence count, and
what a question says about the corpus it is asked of. Pure and deterministic; the rules
are listed in docs/pipeline.md ("Extractive answerer") and in
:mod:`aborist.clients.extractive`.

- **Identifiers are whole tokens.** A run of letters, digits and underscores holding an
  underscore between or around letters (``__init__``, ``into_iter``, ``__slots__``) is
  one key, unstemmed. A sentence's keys hold the identifier and its parts, so a question
  saying "init" still meets ``__init__``; a question naming ``__init__`` meets only
  ``__init__``, never ``__init_subclass__``.
- **Code keywords the question names are anchors.** The keywords of Python and Rust that
  are also English function words (:data:`CODE_KEYWORDS`: ``if``, ``else``, ``for``,
  ``is``, ``in``, ``with``, ``not`` …) are stopwords, except where the question uses one
  as a name: in quotes or backticks (``"else"``), after an article or "between" ("the
  else block", "a for loop", "between is and =="), before "vs"/"versus", or next to an
  operator ("is and ==").
- **A keyword that abbreviates a word** (:data:`TRUNCATED_KEYWORDS`: ``const``, ``mut``,
  ``del`` …), named in quotes or after an article ("with a const"), is held by a word that
  spells it out ("constants"; at least three letters more, so not "mutex" for ``mut``).
- **An example's placeholders are not keys**: "chained comparisons like a < b < c" asks
  about chained comparisons; ``b`` and ``c`` need not be in the answer (``<`` must).
- **A language the question names is a corpus cue** (:data:`LANGUAGES`): when a question
  names exactly one ("What does await do in Python?"), a passage that names another and
  not it is not evidence for it; the name is never weighed in the coverage, and is a
  word the answer must hold unless the question only qualifies itself with it ("… in
  Python") and the evidence is of it.
- **Terms an answer must say** (extractive/8): the last name of a code term the question
  names (:func:`code_terms`: ``sort`` for ``list.sort()``; file and site names such as
  ``Cargo.lock`` are none), and the asker's action (:func:`action_verbs`: "how do I
  *sort* …", or the verb of its complement), in one of its forms (:func:`says_verb`).
"""

from __future__ import annotations

import re
from collections import Counter

from aborist.corpus.lexicon import content_keys, light_stem

__all__ = [
    "CODE_KEYWORDS",
    "LANGUAGES",
    "TRUNCATED_KEYWORDS",
    "action_verbs",
    "code_terms",
    "identifiers",
    "main_language",
    "named_keywords",
    "named_language",
    "passage_languages",
    "qualifier_language",
    "question_keys",
    "says_verb",
    "text_keys",
]

_TOKEN = re.compile(r"\w+")

#: Keywords of Python and Rust that are English function words too (lexicon.STOPWORDS):
#: a question may name one as code, and then it is a word the answer must hold.
CODE_KEYWORDS = frozenset(
    {"and", "as", "else", "for", "from", "if", "in", "is", "let", "not", "or", "where",
     "while", "with"}
)  # fmt: skip

#: Programming languages by the name a question uses; ambiguous names (C, Go, D) are not
#: here: "go" and "c" are also ordinary words and variable names.
LANGUAGES = frozenset(
    {"python", "rust", "java", "javascript", "typescript", "kotlin", "ruby", "haskell",
     "swift", "scala", "perl", "php", "elixir", "erlang", "ocaml", "julia", "lua"}
)  # fmt: skip

#: Keywords of Python and Rust spelled as the start of the English word they stand for
#: (``const``/constant, ``mut``/mutable, ``del``/deletion, ``impl``/implementation …):
#: the keywords of both languages that are the first letters of such a word.
TRUNCATED_KEYWORDS = frozenset(
    {"def", "del", "const", "mut", "impl", "mod", "pub", "enum", "ref", "dyn", "priv", "async"}
)  # fmt: skip
_BEFORE_NAME = frozenset({"the", "a", "an", "between"})
_AFTER_NAME = frozenset({"vs", "versus"})
_OPERATOR = re.compile(r"[-+*/%=<>!&|^~@]+")
_QUOTED = re.compile(r"[\"'`‘“]([A-Za-z]+)[\"'`’”]")


def identifiers(text: str) -> set[str]:
    """The identifiers of ``text`` with an underscore in them, lower-cased and whole."""
    return {t.lower() for t in _TOKEN.findall(text) if "_" in t and any(c.isalpha() for c in t)}


def named_keywords(question: str) -> set[str]:
    """The :data:`CODE_KEYWORDS` the question uses as names (see the module doc), and the
    :data:`TRUNCATED_KEYWORDS` it names in quotes or after an article ("a const")."""
    found = {w.lower() for w in _QUOTED.findall(question)} & (CODE_KEYWORDS | TRUNCATED_KEYWORDS)
    raw = [w.strip(",;:()") for w in question.replace("?", " ").split()]
    # "the A in Arc<T>": a capital A inside the question is a letter, not an article
    words = [w.lower() if w != "A" or not i else "A" for i, w in enumerate(raw)]
    for i, w in enumerate(words):
        if w in TRUNCATED_KEYWORDS and i and words[i - 1] in ("the", "a", "an"):
            found.add(w)  # "with a const": the keyword, which a sentence may spell out
        if w not in CODE_KEYWORDS:
            continue
        before = words[i - 1] if i else ""
        after = words[i + 1] if i + 1 < len(words) else ""
        # "is ==", "x and y": an operator between operands; "between is and ==": the side
        # of a comparison is a name, the "and" joining the sides is not
        operator = w not in ("and", "or") and any(map(_OPERATOR.fullmatch, (before, after)))
        operands = len(before) == 1 and len(after) == 1 and before.isalpha() and after.isalpha()
        side = after == "and" and i + 2 < len(words) and _OPERATOR.fullmatch(words[i + 2])
        named = (before in _BEFORE_NAME and after) or after in _AFTER_NAME
        if named or operator or operands or side:
            found.add(w)
    return found


#: A code example the question gives of what it asks about — "chained comparisons like
#: a < b < c": its one- or two-letter operands are placeholders and "like" introduces it;
#: its operators stay words the answer must hold (aborist.clients.extractive._symbols).
_EXAMPLE = re.compile(
    r"(?i)\b(?:like|such\s+as|e\.g\.,?)\s+(?:\w{1,2}\s*[-+*/%=<>!&|^~@]+\s*)+\w{1,2}\b"
)


def question_keys(question: str) -> set[str]:
    """The question's keys: content keys, whole identifiers instead of their parts, and
    the code keywords it names; an example's placeholders are not keys (:data:`_EXAMPLE`)."""
    plain = _TOKEN.sub(lambda m: " " if "_" in m.group(0) else m.group(0), question)
    plain = _EXAMPLE.sub(" ", plain)
    return content_keys(plain) | identifiers(question) | named_keywords(question)


def text_keys(
    text: str, keywords: frozenset[str] = frozenset(), heading: str = ""
) -> frozenset[str]:
    """A sentence's keys: content keys (the parts of identifiers among them), its whole
    identifiers, and those of ``keywords`` it names as code (:func:`_coded`; an English
    "is" or "and" is not one) or its section ``heading`` names (``The "for" statement``:
    the construct the section is about)."""
    named = keywords & (_coded(text) | _coded(heading)) if keywords else set()
    return frozenset(content_keys(text) | identifiers(text) | named | _spelled(text, keywords))


def _spelled(text: str, keywords: frozenset[str]) -> set[str]:
    """Those of the :data:`TRUNCATED_KEYWORDS` among ``keywords`` that a word of ``text``
    holds or spells out: the keyword itself, or a word that starts with it and is at
    least three letters longer ("constants" for ``const``, "deletion" for ``del``; not
    "mutex" for ``mut``)."""
    short = keywords & TRUNCATED_KEYWORDS
    if not short:
        return set()
    words = {t.lower() for t in _TOKEN.findall(text)}
    return {
        k for k in short if any(w == k or (w.startswith(k) and len(w) >= len(k) + 3) for w in words)
    }


_CODE_SPAN = re.compile(r"[\"“`]([^\"“”`]{1,40})[\"”`]")
_AFTER_ARTICLE = re.compile(r"(?i)\b(?:the|an?)\s+([a-z]+)\s+[a-z]")


def _coded(text: str) -> set[str]:
    """The code keywords a sentence names: inside a quoted code span (``"x and y"``,
    ``"else"``) or after an article ("an if expression", "the else clause")."""
    spans = {w.lower() for span in _CODE_SPAN.findall(text) for w in _TOKEN.findall(span)}
    return (spans | {w.lower() for w in _AFTER_ARTICLE.findall(text)}) & CODE_KEYWORDS


def named_language(question: str) -> str | None:
    """The one language of :data:`LANGUAGES` the question names, if exactly one."""
    named = {w for w in re.findall(r"[a-z]+", question.lower()) if w in LANGUAGES}
    return next(iter(named)) if len(named) == 1 else None


def qualifier_language(question: str) -> str | None:
    """The language the question names as a qualifier of what it asks — "… in Python",
    "in a Rust program", "Python's …" — rather than as a word of it ("Python integers")."""
    language = named_language(question)
    if language is None:
        return None
    form = rf"(?i)\bin\s+(?:an?\s+)?{language}\b|\b{language}['’]s\b"
    return language if re.search(form, question) else None


def main_language(texts: list[str]) -> str | None:
    """The language the most passages name, if one is named by more than any other."""
    counts = Counter(lang for text in texts for lang in passage_languages(text))
    ranked = counts.most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def passage_languages(text: str) -> frozenset[str]:
    """The languages a passage names (as capitalized words, not in identifiers)."""
    return (
        frozenset(w.lower() for w in re.findall(r"(?<![\w.])[A-Z][a-zA-Z]+(?![\w])", text))
        & LANGUAGES
    )


def stemmed(word: str) -> str:
    """The key of one word: whole for an identifier, else its light stem."""
    return word if "_" in word else light_stem(word)


# ---------------------------------------------------------------------------------------
# Terms an answer must hold (extractive/8)

#: A code term the question names: a dotted or path name (``list.sort()``,
#: ``std::sync::mpsc``, ``str.join``), a call (``sorted()``) or a backticked span.
_CODE_TERM = re.compile(
    r"`([^`\s]{2,40})`"
    r"|(?<![\w.:])([A-Za-z_]\w*(?:(?:\.|::)[A-Za-z_]\w*)+(?:\(\))?|[A-Za-z_]\w*\(\))(?![\w(])"
)
#: "how do I sort …", "how can I stop …", "can I share …", "how to run …": the asker's
#: action, a verb the answer must say (or a form of it)
_ACTION = re.compile(
    r"(?i)^(?:how\s+(?:do|can|could|should|would|might|may)\s+(?:i|you|we|one)"
    r"|how\s+to|(?:can|could|may)\s+(?:i|you|we|one)"
    r"|is\s+it\s+possible\s+to|is\s+there\s+a\s+way\s+to)"
    r"\s+(?:ever\s+|still\s+|actually\s+|just\s+)?([a-z]+)\b"
)
#: Verbs too general to be the question's point ("how do I get …", "how can I use …"
#: say no more than "how do I …"), and the auxiliaries the pattern may reach.
_LIGHT_VERBS = frozenset({"do", "be", "get", "have", "use", "make", "go", "not", "also"})
#: The irregular forms of common verbs a sentence may say instead of the question's.
_IRREGULAR = {
    "run": ("ran",), "write": ("wrote", "written"), "find": ("found",), "take": ("took", "taken"),
    "give": ("gave", "given"), "tell": ("told",), "send": ("sent",), "build": ("built",),
    "keep": ("kept",), "leave": ("left",), "choose": ("chose", "chosen"), "hold": ("held",),
    "bind": ("bound",), "catch": ("caught",), "throw": ("threw", "thrown"),
    "begin": ("began", "begun"), "break": ("broke", "broken"), "hide": ("hid", "hidden"),
    "show": ("shown",),
}  # fmt: skip

#: The endings of file and site names: "Cargo.lock", "crates.io" name no code.
_EXTENSIONS = frozenset(
    {"io", "com", "org", "net", "dev", "rs", "py", "toml", "lock", "md", "txt", "json",
     "yaml", "yml", "cfg", "ini", "html", "pyc", "so", "exe", "zip", "gz", "tar"}
)  # fmt: skip


def code_terms(question: str) -> list[str]:
    """The final name of each code term the question names, lower-cased: ``sort`` for
    ``list.sort()``, ``mpsc`` for ``std::sync::mpsc``, ``join`` for ``str.join``."""
    out: list[str] = []
    for m in _CODE_TERM.finditer(question):
        term = (m.group(1) or m.group(2)).removesuffix("()")
        names = [n for n in re.split(r"\.|::", term) if re.fullmatch(r"\w+", n)]
        if term.lower() in ("e.g", "i.e") or not names or len(names[-1]) < 2:
            continue  # an abbreviation, or a one-letter name ("x.y" placeholders)
        if "." in term and names[-1].lower() in _EXTENSIONS:
            continue  # a file or a site ("Cargo.lock", "crates.io"), not a name in code
        if not (len(names) == 1 and m.group(1) is None and "(" not in m.group(2)):
            out.append(names[-1].lower())
    return list(dict.fromkeys(out))


def action_verbs(question: str) -> tuple[str, ...]:
    """The verb of "how do I <verb> …", "can I <verb> …", "how to <verb> …" (none when it
    is a light verb, :data:`_LIGHT_VERBS`, or a function word), and the verb of its
    complement: "how do I force an argument to be *passed* by keyword" asks how it is
    passed, so either verb will do."""
    m = _ACTION.match(question.strip())
    if m is None:
        return ()
    verb = m.group(1).lower()
    if verb in _LIGHT_VERBS or not content_keys(verb):
        return ()
    rest = question[m.end() :]
    # only "to be <participle>": "… to Cargo" names a place, not a second action
    then = re.search(r"(?i)\bto\s+be\s+([a-z]+)\b", rest)
    second = then.group(1).lower() if then else ""
    return (verb, second) if second and content_keys(second) else (verb,)


def says_verb(verb: str, words: set[str]) -> bool:
    """Whether one of ``words`` (lower-cased) is a form of ``verb``: its stem, the stem
    without a final "e" ("making" for "make"), or an irregular form ("ran" for "run")."""
    stem = light_stem(verb)
    stems = {stem, stem[:-1] if stem.endswith("e") and len(stem) > 3 else stem}
    return any(w in _IRREGULAR.get(verb, ()) or light_stem(w) in stems for w in words)
