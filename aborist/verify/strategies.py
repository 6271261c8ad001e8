"""Strategies 1–4 of the layered verifier: quote, span,
entity, paraphrase. The first strategy that applies classifies the unit.

* **quote** applies to every unit holding a ``"…"`` quotation with a content token, and is
  authoritative: a quotation asserts verbatim text, so a quote that is not verbatim makes
  the unit unsupported (``QUOTE_NOT_VERBATIM``) instead of falling through to weaker
  strategies.
* **span** — the unit's whole token sequence occurs in one evidence object: verbatim grade.
* **entity** — a multi-word proper noun of the unit occurs in evidence (with two or more,
  two must occur within ``entity_proximity_chars`` of each other in one object): partial.
* **paraphrase** — prose-shaped unit whose distinct content tokens are covered >= 85 % by
  one evidence object: partial.

Only quote and span give verbatim grade; entity and paraphrase can never make an answer
STRICT.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
from collections.abc import Sequence

from aborist.verify.evidence import EvidenceObject
from aborist.verify.policy import VerifierPolicy
from aborist.verify.rules.cutoff import cut_reason
from aborist.verify.rules.polar import is_polar_question, particle_agrees, split_particle
from aborist.verify.rules.titles import stops_inside_heading
from aborist.verify.rules.warrant import proper_nouns
from aborist.verify.support import (
    Located,
    answers_question,
    failure_code,
    is_bare_span,
    local_support,
    stems_of,
    verbatim_passages,
    whole_title,
)
from aborist.verify.text.textcanon import canonicalize, content_tokens, match_form, tokens
from aborist.verify.units import (
    GRADE_NONE,
    GRADE_PARTIAL,
    GRADE_VERBATIM,
    SEVERITY_ADVISORY,
    SEVERITY_BLOCKING,
    Unit,
    UnitVerdict,
    Violation,
    extract_quotes,
    frame_tokens,
    verbatim_in,
)

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")

__all__ = [
    "ATTRIBUTION_CUES",
    "SOURCE_REFERENCES",
    "classify_prose_unit",
    "classify_prose_units",
    "is_title_span",
    "quote_grade",
]


ATTRIBUTION_CUES: frozenset[str] = frozenset(
    """
    according accordance add added adds argue argued argues claim claimed claims declare
    declared declares describe described describes explain explained explains mention
    mentioned mentions note noted notes put puts quote quoted quotes read reads report
    reported reports said say says state stated states write writes written wrote
    article book chapter docs document documentation evidence excerpt faq guide handbook
    manual page paper passage reference section source spec specification standard study
    text tutorial
    """.split()  # noqa: SIM905
)


#: Words that refer to the evidence itself: a frame made of these (and words of the
#: quoted object) is an attribution to the source, not a claim of its own.
SOURCE_REFERENCES: frozenset[str] = frozenset(
    """
    according article book chapter docs document documentation evidence excerpt faq guide
    handbook manual page paper passage reference section source spec specification
    standard study text tutorial
    """.split()  # noqa: SIM905
)


_ATTRIBUTION_VERBS = ATTRIBUTION_CUES - SOURCE_REFERENCES
#: Stems of the source references, computed once (ignored by a frame's local support).
_SOURCE_STEMS = stems_of(sorted(SOURCE_REFERENCES))
#: Quotations of up to this many tokens are checked for being whole (titles, names).
_TITLE_MAX_TOKENS = 12


def quote_grade(
    text: str,
    evidence: Sequence[EvidenceObject],
    policy: VerifierPolicy,
) -> tuple[str, tuple[str, ...], list[str]]:
    """Grade a unit holding quotations against ``evidence``.

    Returns ``(grade, evidence_ids, reasons)``:

    * none — some quotation does not occur verbatim in any object (``QUOTE_NOT_VERBATIM``),
      a quoted title is only a fragment of a longer title (``QUOTE_FRAGMENT``), or the text
      outside the quotations asserts something no passage supports (``FRAME_UNSUPPORTED``);
    * verbatim — every quotation occurs verbatim and either the whole unit occurs verbatim
      in one passage, or the *frame* (content tokens outside the quotes) is empty, or it is
      an attribution to the source: a source reference (``according``, ``the book``, ``the
      docs`` …), attribution verbs (said, states, wrote …) and at most
      ``quote_frame_max_content_tokens`` other tokens, each in an object that holds a
      quotation;
    * partial — the frame is a claim of its own (``"The Kingsmen" wrote the song``) and one
      passage holds it together with the quotation's words, polarity and numbers.
    """
    grade, ids, reasons, _whole = _quote_grade(text, evidence, policy)
    return grade, ids, reasons


def _quote_grade(
    text: str, evidence: Sequence[EvidenceObject], policy: VerifierPolicy
) -> tuple[str, tuple[str, ...], list[str], list[Located]]:
    """:func:`quote_grade`, with the passages in which the whole unit occurs verbatim
    (empty unless that is how it was graded)."""
    quotes = extract_quotes(text)
    ids, reasons = _quote_checks(quotes, text, evidence, policy)
    if reasons:
        return GRADE_NONE, tuple(sorted(ids)), reasons, []
    whole = [loc for loc in verbatim_passages(text, evidence, policy) if loc.polarity_ok]
    if whole:
        return (
            GRADE_VERBATIM,
            tuple(sorted(ids | {loc.evidence.evidence_id for loc in whole})),
            ["unit verbatim in one passage, quotations included"],
            whole,
        )
    frame = frame_tokens(text)
    if not frame:
        return GRADE_VERBATIM, tuple(sorted(ids)), ["all quotations verbatim; no frame"], []
    grade, reasons = _frame_grade(text, frame, quotes, ids, evidence, policy)
    return grade, tuple(sorted(ids)), reasons, []


def _quote_checks(
    quotes: list[str], text: str, evidence: Sequence[EvidenceObject], policy: VerifierPolicy
) -> tuple[set[str], list[str]]:
    """The evidence ids holding each quotation, and the reasons any quotation fails:
    not verbatim, a fragment of a longer title, or verbatim only against its polarity."""
    ids: set[str] = set()
    reasons: list[str] = []
    for q in quotes:
        found = verbatim_in(q, evidence)
        if not found:
            reasons.append(f"QUOTE_NOT_VERBATIM: {q!r}")
        elif len(tokens(q)) <= _TITLE_MAX_TOKENS and not whole_title(
            q, [ev for ev in evidence if ev.evidence_id in found], text
        ):
            reasons.append(f"QUOTE_FRAGMENT: {q!r} is only part of a longer title or name")
        elif (
            policy.answer_title_units
            and len(tokens(q)) <= _TITLE_MAX_TOKENS
            and (
                unit := stops_inside_heading(q, [ev for ev in evidence if ev.evidence_id in found])
            )
        ):
            reasons.append(f"QUOTE_FRAGMENT: {q!r} stops inside the heading {unit!r} (§19.20)")
        elif len(tokens(q)) >= policy.paraphrase_min_tokens:
            located = verbatim_passages(q, evidence, policy)
            if located and not any(loc.polarity_ok for loc in located):
                reasons.append(
                    f"POLARITY_MISMATCH: {q!r} is verbatim only as part of a sentence whose "
                    "polarity cue it leaves out"
                )
        ids.update(found)
    return ids, reasons


def _frame_grade(
    text: str,
    frame: list[str],
    quotes: list[str],
    ids: set[str],
    evidence: Sequence[EvidenceObject],
    policy: VerifierPolicy,
) -> tuple[str, list[str]]:
    """The grade and reasons of a unit whose quotations are all verbatim and whose frame
    (the content tokens outside them) is not empty: an attribution to the source, the
    quotation's own sentence, a claim of its own that one passage holds, or unsupported."""
    refs = [t for t in frame if t in SOURCE_REFERENCES]
    attributing = "according" in frame or any(t in _ATTRIBUTION_VERBS for t in frame)
    rest = [t for t in frame if t not in ATTRIBUTION_CUES and t not in SOURCE_REFERENCES]
    vocab: set[str] = set()
    for ev in evidence:
        if ev.evidence_id in ids:
            vocab |= ev.token_set
            vocab.update(tokens(ev.title))
    short = len(rest) <= policy.quote_frame_max_content_tokens
    if attributing and (refs or not rest) and short and all(t in vocab for t in rest):
        return GRADE_VERBATIM, ["all quotations verbatim; the frame attributes them to the source"]
    quoted = [ev for ev in evidence if ev.evidence_id in ids]
    ok, why, _ids = local_support(text, quoted, policy, ignore=_SOURCE_STEMS, must_contain=quotes)
    if ok and refs and short:
        return GRADE_VERBATIM, [
            "all quotations verbatim; the frame locates them in their own sentence",
            *why,
        ]
    if ok:
        return GRADE_PARTIAL, ["frame is a claim of its own", *why]
    return GRADE_NONE, [
        f"FRAME_UNSUPPORTED: the text outside the quotations is a claim of its own; {why[0]}"
    ]


def _entity_support(
    unit_text: str, evidence: Sequence[EvidenceObject], policy: VerifierPolicy
) -> tuple[tuple[str, ...], list[str]]:
    entities = proper_nouns(unit_text, multi_word_only=True)
    if not entities:
        return (), []
    forms = [match_form(tokens(e)) for e in entities]
    found = [
        e for e, f in zip(entities, forms, strict=True) if any(f in ev.form for ev in evidence)
    ]
    if not found:
        return (), []
    if len(entities) == 1:
        ids = tuple(sorted(ev.evidence_id for ev in evidence if forms[0] in ev.form))
        return ids, [f"entity {entities[0]!r} occurs in evidence"]
    ids_set: set[str] = set()
    pair = ""
    for ev in evidence:
        positions: list[tuple[int, int]] = []
        for k, f in enumerate(forms):
            start = ev.form.find(f)
            while start != -1:
                positions.append((start, k))
                start = ev.form.find(f, start + 1)
        positions.sort()
        for (p1, k1), (p2, k2) in itertools.pairwise(positions):
            if k1 != k2 and p2 - p1 <= policy.entity_proximity_chars:
                ids_set.add(ev.evidence_id)
                pair = pair or f"{entities[k1]!r} and {entities[k2]!r}"
                break
    if not ids_set:
        return (), []
    return tuple(sorted(ids_set)), [
        f"entities {pair} occur within {policy.entity_proximity_chars} chars"
    ]


def is_title_span(text: str) -> bool:
    """A title made only of stopwords ("And There's More", "The Who"): two or more words,
    every word capitalized. Such a unit may be span-checked although it has no content
    token; a lower-case stopword run ("it is not") may not."""
    words = _WORD.findall(canonicalize(text))
    return len(words) >= 2 and all(w[0].isupper() for w in words)


def _prose_verdict(
    index: int,
    unit: Unit,
    strategy: str,
    grade: str,
    ids: tuple[str, ...],
    reasons: list[str],
    blocking: str = "",
) -> UnitVerdict:
    """The unit's verdict under ``strategy``: a partial grade is an advisory violation, a
    ``blocking`` code or no grade a blocking one."""
    violations: list[Violation] = []
    if grade == GRADE_PARTIAL:
        violations.append(
            Violation("PARTIAL_SUPPORT", SEVERITY_ADVISORY, index, f"{strategy}: not verbatim")
        )
    if blocking:
        violations.append(Violation(blocking, SEVERITY_BLOCKING, index, "; ".join(reasons)))
    elif grade == GRADE_NONE:
        code = failure_code(reasons, "QUOTE_NOT_VERBATIM" if strategy == "quote" else "UNSUPPORTED")
        if code == "NOT_LOCALLY_SUPPORTED":
            code = "UNSUPPORTED"
        violations.append(Violation(code, SEVERITY_BLOCKING, index, "; ".join(reasons)))
    return UnitVerdict(
        index=index,
        text=unit.text,
        strategy=strategy,
        verified=grade != GRADE_NONE,
        grade=grade,
        line_no=unit.line_no,
        evidence_ids=ids,
        reasons=tuple(reasons),
        violations=tuple(violations),
    )


def classify_prose_unit(
    index: int,
    unit: Unit,
    evidence: Sequence[EvidenceObject],
    policy: VerifierPolicy,
    question: str | None = None,
) -> UnitVerdict:
    """Run quote → span → paraphrase → entity on one unit; the first that applies wins."""
    text = unit.text
    toks = tokens(text)
    content = content_tokens(toks)
    verdict = functools.partial(_prose_verdict, index, unit)

    if extract_quotes(text):
        grade, ids, reasons, whole = _quote_grade(text, evidence, policy)
        if whole and question and len(toks) <= policy.bare_span_max_tokens:
            # a bare quoted answer ("The Tuple Type", Kerkor "Kirk" Kerkorian) answers the
            # question only where a bare span would (§19.5)
            ok, why = answers_question(text, whole, question, policy, evidence)
            if not ok:
                return verdict(
                    "quote", GRADE_PARTIAL, ids, [*reasons, why], blocking="NOT_ANSWER_ANCHORED"
                )
        return verdict("quote", grade, ids, reasons)
    polarity_reason = ""
    if len(content) >= policy.span_min_content_tokens or is_title_span(text):
        spanned, polarity_reason = _span_verdict(index, unit, evidence, policy, question)
        if spanned is not None:
            return spanned
    if (
        len(toks) >= policy.paraphrase_min_tokens
        and len(set(content)) >= policy.paraphrase_min_content_tokens
        and not polarity_reason
    ):
        ok, support_why, ids = local_support(text, evidence, policy)
        if ok and question and policy.answer_bare_paraphrase and is_bare_span(text, toks, policy):
            return verdict(
                "paraphrase",
                GRADE_PARTIAL,
                ids,
                [
                    *support_why,
                    "NOT_ANSWER_ANCHORED: a bare span the evidence does not hold "
                    "word for word: where it stands, and so whether it answers the question, "
                    "cannot be read",
                ],
                blocking="NOT_ANSWER_ANCHORED",
            )
        if ok:
            return verdict("paraphrase", GRADE_PARTIAL, ids, support_why)
        polarity_reason = support_why[0]
    ids, reasons = _entity_support(text, evidence, policy)
    if ids:
        return verdict(
            "entity",
            GRADE_PARTIAL,
            ids,
            reasons + ([polarity_reason] if polarity_reason else ["names only"]),
            blocking="ENTITY_ONLY",
        )
    if not content:
        return verdict("none", GRADE_NONE, (), ["no content token (nothing to check)"])
    if polarity_reason:
        return verdict("none", GRADE_NONE, (), [polarity_reason])
    return verdict("none", GRADE_NONE, (), ["no strategy found evidence"])


def _span_verdict(
    index: int,
    unit: Unit,
    evidence: Sequence[EvidenceObject],
    policy: VerifierPolicy,
    question: str | None,
) -> tuple[UnitVerdict | None, str]:
    """The span strategy: the unit's verdict when its token sequence occurs verbatim with
    the passage's polarity, else None and the polarity reason (empty when the unit is not
    verbatim anywhere at all)."""
    located = verbatim_passages(unit.text, evidence, policy)
    agreeing = [loc for loc in located if loc.polarity_ok]
    if agreeing:
        ids = tuple(sorted({loc.evidence.evidence_id for loc in agreeing}))
        ok, why = answers_question(unit.text, agreeing, question, policy, evidence)
        if not ok:
            return _prose_verdict(
                index,
                unit,
                "span",
                GRADE_PARTIAL,
                ids,
                ["token sequence occurs verbatim", why],
                blocking="NOT_ANSWER_ANCHORED",
            ), ""
        reasons = ["token sequence occurs verbatim in one passage"] + ([why] if why else [])
        return _prose_verdict(index, unit, "span", GRADE_VERBATIM, ids, reasons), ""
    if located:
        return None, (
            "POLARITY_MISMATCH: verbatim only as part of a sentence whose polarity cue "
            "it leaves out"
        )
    toks = tokens(unit.text)
    window = policy.support_window_sentences
    stretches = [
        " ".join(s.text for s in ev.passage.sentences[a : b + 1])
        for ev in evidence
        for a, b in ev.passage.occurrences(toks, window)
    ]
    return None, cut_reason(unit.text, stretches)


def classify_prose_units(
    segments: Sequence[Unit],
    evidence: Sequence[EvidenceObject],
    policy: VerifierPolicy,
    question: str | None = None,
) -> list[UnitVerdict]:
    """:func:`classify_prose_unit` for every unit, with a yes/no particle that opens a
    unit ("No. Rust does not …", or "Yes." alone before its claim) read as the answer to
    the question, not as a word of the claim (docs/verifier.md §19.16)."""
    out: list[UnitVerdict] = []
    for i, unit in enumerate(segments):
        split = split_particle(unit.text) if policy.polar_particles else None
        if split is None:
            out.append(classify_prose_unit(i, unit, evidence, policy, question))
            continue
        particle, rest = split
        if rest:
            inner = classify_prose_unit(i, Unit(rest, unit.line_no), evidence, policy, question)
            out.append(_with_particle(i, unit, inner, _agrees(particle, question, rest)))
            continue
        following = segments[i + 1].text if i + 1 < len(segments) else ""
        agrees = _agrees(particle, question, following) if following else None
        if agrees is None:
            out.append(classify_prose_unit(i, unit, evidence, policy, question))
        elif agrees:
            why = f"the answer's {particle!r} agrees with the claim after it"
            out.append(_prose_verdict(i, unit, "polar", GRADE_VERBATIM, (), [why]))
        else:
            why = f"POLAR_MISMATCH: the answer's {particle!r} contradicts the claim after it"
            out.append(_prose_verdict(i, unit, "polar", GRADE_NONE, (), [why], "POLAR_MISMATCH"))
    return out


def _agrees(particle: str, question: str | None, claim: str) -> bool | None:
    if not is_polar_question(question):
        return None
    return particle_agrees(particle, question or "", claim)


def _with_particle(index: int, unit: Unit, inner: UnitVerdict, agrees: bool | None) -> UnitVerdict:
    """The verdict of a claim after a particle, on the whole unit: as the claim's when the
    particle agrees; refused when it contradicts; at most rung 3 when unchecked."""
    ids, reasons = inner.evidence_ids, list(inner.reasons)
    if agrees is False:
        why = "POLAR_MISMATCH: the particle contradicts what the claim says of the question"
        return _prose_verdict(
            index, unit, inner.strategy, GRADE_NONE, ids, [*reasons, why], "POLAR_MISMATCH"
        )
    if agrees is None and inner.verified:
        why = "POLAR_UNCHECKED: the claim does not restate the question its particle answers"
        return _prose_verdict(
            index, unit, inner.strategy, GRADE_PARTIAL, ids, [*reasons, why], "POLAR_UNCHECKED"
        )
    extra = ["the particle agrees with what the claim says of the question"] if agrees else []
    return dataclasses.replace(inner, text=unit.text, reasons=(*inner.reasons, *extra))
