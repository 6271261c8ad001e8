"""Versioned prompt templates for the two answer modes (docs/pipeline.md).

The model sees the evidence as tagged blocks and the question after them::

    Evidence:

    [E1]
    <evidence text, verbatim>
    [/E1]

    [E2]
    ...
    [/E2]

    Question: <question>

* ``claim-lattice`` asks for one claim per line, each ending in pointer tags (``[E1]`` or
  ``[E1,E3]``), the shape :func:`aborist.verify.claims.parse_claims` reads;
* ``quote`` asks for prose that supports every statement with a ``"verbatim quotation"``,
  the shape the verifier's quote strategy checks.

Both ask the model to reply with :data:`CANNOT_ANSWER` and nothing else when the evidence
does not answer the question.

The template text is part of the model profile (:func:`prompt_profile`, folded into
``ChatClient.profile()`` and so into ``model_profile_hash``): editing a template without
bumping its version still changes the profile, because the profile carries the sha256 of
each template's text, not only its version string.

:func:`build_messages` is pure. :func:`parse_messages` is its inverse, so a client that
works from the evidence itself (the extractive client) can recover question, evidence and
mode from the messages it is handed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from aborist.errors import InputError, require_question
from aborist.events import MODES
from ledger.canonical import canonical_json, sha256_hex

__all__ = [
    "CANNOT_ANSWER",
    "CLAIM_LATTICE_PROMPT_VERSION",
    "MODES",
    "MODE_CLAIM_LATTICE",
    "MODE_QUOTE",
    "NO_EVIDENCE_LINE",
    "PROMPT_SET_VERSION",
    "QUOTE_PROMPT_VERSION",
    "TEMPLATES",
    "EvidenceLike",
    "PromptParts",
    "PromptTemplate",
    "build_messages",
    "parse_messages",
    "prompt_profile",
    "template_for",
]

PROMPT_SET_VERSION = "aborist-prompts/1"
QUOTE_PROMPT_VERSION = "quote/1"
CLAIM_LATTICE_PROMPT_VERSION = "claim-lattice/1"

MODE_QUOTE, MODE_CLAIM_LATTICE = MODES  # aborist.events.Mode, the one spelling

CANNOT_ANSWER = "I cannot answer this question from the evidence provided."
NO_EVIDENCE_LINE = "(no evidence was found for this question)"

_EVIDENCE_HEADER = "Evidence:"
_QUESTION_PREFIX = "Question: "
_POINTER = re.compile(r"E\d+")

_COMMON_RULES = (
    "You answer questions using only the evidence passages the user supplies. Each passage "
    "starts with a pointer tag such as [E1] on its own line and ends with [/E1].\n"
    "Do not use any knowledge that is not in the evidence, and do not guess.\n"
    f'If the evidence does not answer the question, reply with exactly "{CANNOT_ANSWER}" '
    "and nothing else."
)

_CLAIM_LATTICE_SYSTEM = (
    _COMMON_RULES + "\n\n"
    "Answer format (claim lattice):\n"
    "- Write one claim per line: a single sentence followed by the tags of the passages that "
    "support it, for example:\n"
    "  Lists are mutable sequences. [E1]\n"
    "  Tuples are immutable and can be used as dictionary keys. [E1,E3]\n"
    "- Copy the wording of the evidence verbatim wherever you can.\n"
    "- Every line must end with at least one tag and at most three; cite only the passages "
    "that state the claim.\n"
    "- No introduction, no summary, no headings, no blank lines, no text without a tag "
    "(the one exception is the cannot-answer reply above)."
)

_QUOTE_SYSTEM = (
    _COMMON_RULES + "\n\n"
    "Answer format (quotes):\n"
    "- Support every statement with a verbatim quotation from the evidence in double quotes, "
    "followed by the tag of its passage, for example:\n"
    '  The tutorial says that "lists are mutable" [E1], while "tuples are immutable" [E2].\n'
    "- Copy quotations character for character: no ellipses, no changed words, no added "
    "emphasis.\n"
    "- Keep the text outside the quotations short; do not state anything you cannot quote."
)


class EvidenceLike(Protocol):
    """What :func:`build_messages` needs from an evidence object (e.g. ``EvidenceObject``)."""

    @property
    def pointer_id(self) -> str: ...

    @property
    def text(self) -> str: ...


@dataclass(frozen=True)
class PromptTemplate:
    """One mode's template: its version and the exact system instructions."""

    mode: str
    version: str
    system: str

    def to_dict(self) -> dict[str, str]:
        return {"mode": self.mode, "version": self.version, "system": self.system}

    def sha256(self) -> str:
        """sha256 of the canonical JSON of the template (version and text)."""
        return sha256_hex(canonical_json(self.to_dict()))


TEMPLATES: Mapping[str, PromptTemplate] = {
    MODE_QUOTE: PromptTemplate(MODE_QUOTE, QUOTE_PROMPT_VERSION, _QUOTE_SYSTEM),
    MODE_CLAIM_LATTICE: PromptTemplate(
        MODE_CLAIM_LATTICE, CLAIM_LATTICE_PROMPT_VERSION, _CLAIM_LATTICE_SYSTEM
    ),
}


@dataclass(frozen=True)
class PromptParts:
    """What :func:`parse_messages` recovers: the inverse of :func:`build_messages`."""

    mode: str
    question: str
    evidence: tuple[tuple[str, str], ...]


def template_for(mode: str) -> PromptTemplate:
    try:
        return TEMPLATES[mode]
    except KeyError:
        raise InputError(f"mode must be one of {', '.join(MODES)}; found {mode!r}") from None


def prompt_profile() -> dict[str, Any]:
    """The prompt part of the model profile: set version plus each template's version and hash."""
    return {
        "set_version": PROMPT_SET_VERSION,
        "templates": {
            mode: {"version": t.version, "sha256": t.sha256()} for mode, t in TEMPLATES.items()
        },
    }


def _pairs(evidence: Sequence[tuple[str, str] | EvidenceLike]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    seen: set[str] = set()
    for item in evidence:
        pointer_id, text = item if isinstance(item, tuple) else (item.pointer_id, item.text)
        if not isinstance(pointer_id, str) or not _POINTER.fullmatch(pointer_id):
            raise InputError(f"evidence pointer id must look like E1, E2, …; found {pointer_id!r}")
        if pointer_id in seen:
            raise InputError(f"evidence pointer id {pointer_id} appears twice")
        if not isinstance(text, str):
            raise InputError(f"evidence {pointer_id}: text must be a string")
        seen.add(pointer_id)
        pairs.append((pointer_id, text))
    return pairs


def _user_message(question: str, pairs: list[tuple[str, str]]) -> str:
    blocks = [f"[{pid}]\n{text}\n[/{pid}]" for pid, text in pairs] or [NO_EVIDENCE_LINE]
    return "\n\n".join([_EVIDENCE_HEADER, *blocks, _QUESTION_PREFIX + question])


def build_messages(
    question: str, evidence: Sequence[tuple[str, str] | EvidenceLike], mode: str
) -> list[dict[str, str]]:
    """The chat messages for ``question`` over ``evidence`` in ``mode`` (pure).

    ``evidence`` is a sequence of ``(pointer_id, text)`` pairs or objects with
    ``pointer_id`` and ``text`` (such as :class:`aborist.verify.evidence.EvidenceObject`), in the
    order the model should see them. Evidence text is passed through unchanged so the model
    can quote it verbatim.
    """
    template = template_for(mode)
    require_question(question)
    return [
        {"role": "system", "content": template.system},
        {"role": "user", "content": _user_message(question.strip(), _pairs(evidence))},
    ]


def _parse_user(content: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    head = _EVIDENCE_HEADER + "\n\n"
    if not content.startswith(head):
        raise InputError("user message does not start with the evidence block")
    pos = len(head)
    pairs: list[tuple[str, str]] = []
    opener = re.compile(r"\[(E\d+)\]\n")
    while m := opener.match(content, pos):
        pid = m.group(1)
        closer = f"\n[/{pid}]\n\n"
        end = content.find(closer, m.end())
        if end < 0:
            raise InputError(f"evidence block [{pid}] is not closed")
        pairs.append((pid, content[m.end() : end]))
        pos = end + len(closer)
    if not pairs:
        if not content.startswith(NO_EVIDENCE_LINE + "\n\n", pos):
            raise InputError("user message has neither evidence blocks nor the no-evidence line")
        pos += len(NO_EVIDENCE_LINE) + 2
    if not content.startswith(_QUESTION_PREFIX, pos):
        raise InputError("user message has no question after the evidence")
    return content[pos + len(_QUESTION_PREFIX) :], tuple(pairs)


def parse_messages(messages: Sequence[Mapping[str, str]]) -> PromptParts:
    """Recover mode, question and evidence from messages :func:`build_messages` made (pure).

    Raises :class:`InputError` when the messages were not built by this module's templates.
    The block format is not self-delimiting: an evidence text that contains its own closing
    tag on a line of its own (``[/E1]`` inside E1's text) may be cut short there.
    """
    if len(messages) != 2 or [m.get("role") for m in messages] != ["system", "user"]:
        raise InputError("expected one system and one user message built by build_messages")
    system = messages[0].get("content", "")
    modes = [mode for mode, t in TEMPLATES.items() if t.system == system]
    if not modes:
        raise InputError("system message matches no known prompt template")
    question, evidence = _parse_user(messages[1].get("content", ""))
    return PromptParts(mode=modes[0], question=question, evidence=evidence)
