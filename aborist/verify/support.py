"""Local support over evidence objects: the tests both modes share (docs/verifier.md §19).

* :func:`local_support` — one passage of ``support_window_sentences`` adjacent sentences
  of one object holds the claim's words, anchors and polarity; or, failing that, every
  clause of the claim (:func:`aborist.verify.rules.locality.claim_parts`) has such a passage
  of its own (the multi-sentence rule).
* :func:`verbatim_passages` — where a unit occurs verbatim *inside* one passage (a token
  run that crosses a passage boundary is not verbatim support), and whether its polarity
  agrees with its sentence: a prose-shaped fragment of a sentence whose polarity cue lies
  outside the fragment asserts the opposite of that sentence.
* :func:`answers_question` — a bare span (at most ``bare_span_max_tokens`` tokens) is an
  answer only where its sentence shares a term with the question.
* :func:`whole_title` (from :mod:`aborist.verify.rules.titles`) — a quoted title is a whole
  Title-Case run of the evidence, not a piece of a longer one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from aborist.verify.evidence import EvidenceObject
from aborist.verify.policy import VerifierPolicy
from aborist.verify.rules.bindings import bound_support
from aborist.verify.rules.compare import claim_comparison, compare_alternatives
from aborist.verify.rules.compete import competing_candidate
from aborist.verify.rules.coref import support_context
from aborist.verify.rules.cutoff import (
    cuts_list,
    has_symbol_words,
    inside_identifier,
    symbols_agree,
    unit_pattern,
)
from aborist.verify.rules.frames import (
    named_elsewhere,
    outside_list,
    qualified_elsewhere,
    reversed_direction,
    same_frame,
    typed_elsewhere,
)
from aborist.verify.rules.locality import (
    Sentence,
    SupportResult,
    claim_parts,
    content_stems,
    find_support,
    negated_outside,
    question_anchors,
    relative_clause,
    split_sentences,
    stem,
)
from aborist.verify.rules.polar import is_polar_question
from aborist.verify.rules.recall import (
    continues_after_fronted,
    definite_reach,
    demonstrative_back,
    first_hop,
    restates_question,
    same_filler,
    whole_sentence,
)
from aborist.verify.rules.rival import other_member, rival_clause
from aborist.verify.rules.roles import echoes_question, other_alternative, role_conflict
from aborist.verify.rules.swaps import REARRANGED
from aborist.verify.rules.titles import is_title_like, whole_title
from aborist.verify.text.quantity import signs_agree
from aborist.verify.text.sentences import COPULAS, continues
from aborist.verify.text.sentences import PRONOUNS as _PRONOUNS
from aborist.verify.text.textcanon import STOPWORDS, match_form, tokens

__all__ = [
    "Located",
    "answers_question",
    "failure_code",
    "is_bare_span",
    "is_title_like",
    "local_support",
    "verbatim_passages",
    "whole_title",
]


@dataclass(frozen=True)
class Located:
    """A verbatim occurrence of a unit inside one passage of one object."""

    evidence: EvidenceObject
    first: int
    last: int
    polarity_ok: bool


def local_support(
    text: str,
    evidence: Sequence[EvidenceObject],
    policy: VerifierPolicy,
    *,
    ignore: frozenset[str] = frozenset(),
    must_contain: Sequence[str] = (),
) -> tuple[bool, list[str], tuple[str, ...]]:
    """``(supported, reasons, evidence_ids)`` for ``text`` over ``evidence`` (whole, then
    by parts)."""
    # by evidence id, so the passage found does not depend on the order evidence is given in
    if policy.answer_comparisons:
        outcome, compared = claim_comparison(text, evidence, bridge=policy.answer_subject_bridge)
        if outcome == "loses":
            return False, [f"ANCHOR_MISMATCH: the figures contradict it ({compared})"], ()
    objects = sorted(((ev.evidence_id, ev.passage) for ev in evidence), key=lambda o: o[0])
    window, cov = policy.support_window_sentences, policy.local_min_coverage
    # the document context (§19.12) reads the evidence in the order it was given
    ctx = support_context([(ev.evidence_id, ev.passage) for ev in evidence], policy)
    whole = bound_support(text, partial(
        find_support, text, window=window, min_coverage=cov, ignore=ignore,
        must_contain=must_contain, context=ctx, whole_names=policy.claim_names,
    ), objects, policy)  # fmt: skip
    if whole.supported:
        return (
            True,
            [f"local support: {whole.where()} (coverage {whole.coverage:.2f})"],
            (whole.evidence_id,),
        )
    parts = claim_parts(text) if not must_contain and REARRANGED not in whole.reason else []
    if len(parts) > 1:
        found: list[SupportResult] = []
        for k, part in enumerate(parts):
            # a relative clause ("…, in which two threads wait") is said of the clause before
            # it: its passage must name something of that clause too
            also = (
                content_stems(tokens(parts[k - 1])) if k and relative_clause(part) else frozenset()
            )
            r = bound_support(part, partial(
                find_support, part, window=window, min_coverage=cov, ignore=ignore,
                antecedent=also, context=ctx, whole_names=policy.claim_names,
            ), objects, policy)  # fmt: skip
            if not r.supported:
                break
            found.append(r)
        else:
            where = "; ".join(f"part {k + 1}: {r.where()}" for k, r in enumerate(found))
            apart = _parts_apart(found, policy.parts_max_gap)
            if apart:
                return False, [f"NOT_LOCALLY_SUPPORTED: {apart} ({where})"], ()
            ids = tuple(sorted({r.evidence_id for r in found}))
            return True, [f"multi-sentence support, every part local: {where}"], ids
    why = whole.reason or "no passage supports it"
    where = f" (best: {whole.where()})" if whole.evidence_id else ""
    code = why.split(":", 1)[0] if why.startswith(_CODES) else "NOT_LOCALLY_SUPPORTED"
    return False, [f"{code}: {why.removeprefix(code + ': ')}{where}"], ()


_CODES = ("POLARITY_MISMATCH", "ANCHOR_MISMATCH")


def _parts_apart(found: Sequence[SupportResult], max_gap: int) -> str:
    """Why the parts of a claim, each supported on its own, do not make one statement:
    two of them found in sentences of one evidence object more than ``max_gap`` sentences
    apart (first to last, §19.7); ``""`` when they do. Parts found in different objects
    are each a source of their own and are not held to a distance."""
    spans: dict[str, tuple[int, int]] = {}
    for r in found:
        lo, hi = spans.get(r.evidence_id, (r.first, r.last))
        spans[r.evidence_id] = (min(lo, r.first), max(hi, r.last))
    for ev_id, (lo, hi) in sorted(spans.items()):
        if hi - lo > max_gap:
            return (
                f"its parts are found in sentences {lo + 1} and {hi + 1} of {ev_id}, more "
                f"than {max_gap} apart: each part is there, but not shown to hold together"
            )
    return ""


def failure_code(reasons: Sequence[str], default: str) -> str:
    """The violation code a failed support test names first (or ``default``)."""
    head = reasons[0].split(":", 1)[0] if reasons else ""
    return head if head in _NAMED else default


_NAMED = frozenset(
    {
        "NOT_LOCALLY_SUPPORTED",
        "POLARITY_MISMATCH",
        "ANCHOR_MISMATCH",
        "QUOTE_NOT_VERBATIM",
        "QUOTE_FRAGMENT",
        "FRAME_UNSUPPORTED",
        "NOT_ANSWER_ANCHORED",
    }
)


def verbatim_passages(
    text: str, evidence: Sequence[EvidenceObject], policy: VerifierPolicy
) -> list[Located]:
    """Every passage in which ``text``'s token sequence occurs, with its polarity check
    (applied to prose-shaped units of at least ``paraphrase_min_tokens`` tokens)."""
    pieces = split_sentences(text)
    if len(pieces) > 1:
        # a unit of several sentences: each sentence verbatim in a passage of its own
        per = [verbatim_passages(p, evidence, policy) for p in pieces]
        if not all(per):
            return []
        return [loc for found in per for loc in found]
    toks = tokens(text)
    if not toks:
        return []
    prose = len(toks) >= policy.paraphrase_min_tokens
    form = match_form(toks)
    sentence_shaped = prose and text.rstrip().endswith((".", "!", "?"))
    unit: tuple[bool, re.Pattern[str] | None] | None = None  # once per unit, when it occurs
    found: list[Located] = []
    for ev in evidence:
        if form not in ev.form:
            continue
        for first, last in ev.passage.occurrences(toks, policy.support_window_sentences):
            if unit is None:
                unit = has_symbol_words(text), unit_pattern(toks) if sentence_shaped else None
            symbols, pattern = unit
            ok = True
            sents = ev.passage.sentences[first : last + 1]
            joined = " ".join(s.text for s in sents)
            if not signs_agree(text, joined) or (symbols and not symbols_agree(text, joined)):
                continue  # the same tokens, another sign or symbol: not verbatim
            if pattern is not None and cuts_list(text, joined, pattern):
                continue  # it stops inside its sentence's list (§19.15)
            if inside_identifier(text, joined):
                continue  # "max" of config_max: another name than the unit's (§19.15)
            if prose and any(s.negated for s in sents):
                ok = not negated_outside([t for s in sents for t in s.toks], toks)
            found.append(Located(ev, first, last, ok))
    return found


def answers_question(
    text: str,
    located: Sequence[Located],
    question: str | None,
    policy: VerifierPolicy,
    evidence: Sequence[EvidenceObject] = (),
) -> tuple[bool, str]:
    """Does a bare span stand in the question's relation somewhere it occurs? ``(ok,
    reason)``; always ok for a longer unit, without a question, or when every content
    word of the question is in the unit itself."""
    toks = tokens(text)
    if not question or _is_clause(text, toks):
        return True, ""
    turned = _reversed(question, located, policy)
    if turned or len(toks) > policy.bare_span_max_tokens:
        return not turned, turned
    anchors = question_anchors(question, toks, policy.question_relation_verbs)
    if not anchors:
        return True, ""
    own = _own_statement(text, toks, located, question, policy)
    if own:
        return True, own
    if policy.answer_comparisons:
        decided = _by_figures(text, located, question, policy, evidence)
        if decided is not None:
            return decided
    other = other_alternative(question, toks)
    offered = bool(other)  # a choice question names the span: nothing to compete with
    if policy.answer_echo and not offered and echoes_question(question, text, toks):
        return False, (
            "NOT_ANSWER_ANCHORED: the span only repeats the question's own words, and the "
            "question offers no choice among them"
        )
    anchors -= other
    if not anchors:
        return False, (
            "NOT_ANSWER_ANCHORED: the question offers a choice and names no other term to "
            "find beside the span"
        )
    best = 0
    need = _need(anchors, located, policy)
    dist = policy.question_anchor_distance
    conflict = ""
    for loc in located:
        stems: set[str] = set()
        lo, hi = _reach(text, toks, loc, policy)
        for s in loc.evidence.passage.sentences[lo:hi]:
            stems |= s.stems
        n = len(anchors & stems)
        reached = set(range(lo, hi))
        if n < need and policy.answer_entity_bridge:
            via, where_from = _entity_bridge(toks, loc, anchors, policy.answer_entity_pronoun)
            if via > n:
                n, reached = via, reached | where_from
        if dist and n >= policy.question_anchor_min:
            n = _near(toks, loc, anchors, dist)
        best = max(best, n)
        if n < need:
            continue
        own = " ".join(s.text for s in loc.evidence.passage.sentences[loc.first : loc.last + 1])
        conflict = (
            role_conflict(
                text, question, own, loc.evidence.canonical_text, policy.answer_role_clauses
            )
            if policy.answer_roles
            else ""
        )
        if not conflict and policy.answer_roles and not offered:
            conflict = _stated_elsewhere(anchors, loc, reached)
        if not conflict and policy.answer_rivals:
            conflict = _rivals(text, question, anchors, loc, reached, offered, evidence, policy)
        if not conflict:
            where = "its sentence" if hi <= loc.last + 1 else "its sentence and what follows"
            return True, f"answers the question: shares {n} question term(s) in {where}"
    if conflict:
        return False, f"NOT_ANSWER_ANCHORED: the span fills another slot ({conflict})"
    return False, (
        f"NOT_ANSWER_ANCHORED: a bare span whose sentence shares {best} of the question's "
        f"terms {sorted(anchors)} (needs {need})"
    )


def _need(anchors: frozenset[str], located: Sequence[Located], policy: VerifierPolicy) -> int:
    """How many of the question's terms a bare span's sentence must share: at least
    ``question_anchor_min``, and with ``question_anchor_share`` that share of the most any
    sentence of the located objects shares (the span's sentence must be among the best)."""
    need = policy.question_anchor_min
    if policy.question_anchor_share > 0:
        top = max(
            (len(anchors & s.stems) for loc in located for s in loc.evidence.passage.sentences),
            default=0,
        )
        need = max(need, math.ceil(policy.question_anchor_share * top))
    return need


def _reach(text: str, toks: Sequence[str], loc: Located, policy: VerifierPolicy) -> tuple[int, int]:
    """``(lo, hi)``: the sentences of the span's object whose terms count for it — its own,
    ``question_anchor_neighbours`` on each side, and what the bridges of §19.5 and §19.18
    reach."""
    reach, chain = policy.question_anchor_neighbours, policy.answer_subject_bridge
    sents = loc.evidence.passage.sentences
    lo = min(max(0, loc.first - reach), _back(loc, chain, policy.answer_fronted_subject))
    if policy.answer_demonstrative_bridge and chain > 0:
        lo = min(lo, demonstrative_back(sents, loc.first))
    hi = max(loc.last + 1 + reach, _bridge(toks, loc, chain))
    if policy.answer_definite_reference and chain > 0 and loc.first == loc.last:
        hi = max(hi, definite_reach(text, sents, loc.first))
    return lo, hi


#: Finite auxiliaries and copulas: a short unit that holds one and ends a sentence is a
#: clause ("Calling a function is not a statement."), not a bare span.
_FINITE = frozenset(
    "is are was were has have had does did can could will would shall should must".split()  # noqa: SIM905
)


def is_bare_span(text: str, toks: Sequence[str], policy: VerifierPolicy) -> bool:
    """A bare span: at most ``bare_span_max_tokens`` tokens and not a clause."""
    return len(toks) <= policy.bare_span_max_tokens and not _is_clause(text, toks)


def _is_clause(text: str, toks: Sequence[str]) -> bool:
    """Is the unit a whole sentence of at least three tokens with a finite auxiliary or
    copula? It then states something of its own, checked like any longer claim."""
    return (
        len(toks) >= 3
        and text.rstrip().endswith((".", "!", "?"))
        and any(t in _FINITE for t in toks[1:])
    )


def _own_statement(
    text: str,
    toks: Sequence[str],
    located: Sequence[Located],
    question: str,
    policy: VerifierPolicy,
) -> str:
    """Why a short unit states a relation of its own (§19.18), or ``""``."""
    if policy.answer_whole_sentences and any(
        loc.first == loc.last
        and whole_sentence(
            text, toks, loc.evidence.passage.sentences[loc.first], policy.answer_whole_min_tokens
        )
        for loc in located
    ):
        return "a whole sentence of the evidence: it states that sentence's claim"
    if policy.answer_restated_question and restates_question(question, toks):
        return "it restates the question's relation with the gap filled"
    return ""


def _rivals(
    text: str,
    question: str,
    anchors: frozenset[str],
    loc: Located,
    reached: set[int],
    offered: bool,
    evidence: Sequence[EvidenceObject],
    policy: VerifierPolicy,
) -> str:
    """The rival tests of :mod:`aborist.verify.rules.rival`: the span's sentence may not name
    another member of the series the question's ordinal picks (not for a choice between
    named alternatives, which the comparison rules read), and no other clause may state
    the question's relation with another filler."""
    sents = loc.evidence.passage.sentences
    mine = sorted(i for i in reached if 0 <= i < len(sents))  # a reach may run past the end
    if not offered:
        other = other_member(question, text, [sents[i] for i in mine])
        if other:
            return f"series: its sentence names another member than the question's {other[0]}"
    others = [s for ev in evidence if ev is not loc.evidence for s in ev.passage.sentences]
    mine = [*mine, *_agreeing(text, question, anchors, sents, mine, policy)]
    found = rival_clause(
        text, question, anchors, sents, mine, others, policy.answer_initials, policy.answer_agents
    )
    own = [s.text for s in sents[loc.first : loc.last + 1]]
    if not found and policy.answer_type_words:
        typed = typed_elsewhere(question, text, own)
        if typed:
            found = f"type: its sentence gives the question's type word to {typed!r} (§19.17)"
        nxt = [s.text for s in sents[loc.last + 1 : loc.last + 3]]
        name = "" if found else named_elsewhere(question, text, own, nxt)
        if name:
            found = f"name: the evidence calls what the question describes {name!r} (§19.17)"
    if not found and policy.answer_qualifiers:
        said = qualified_elsewhere(question, text, own)
        if said:
            found = (
                f"qualifier: its sentence says it {said[0]!r}, and says another value "
                f"of a term of the question: {said[1]!r} (§19.17)"
            )
    if not found and policy.answer_frames:
        found = same_frame(text, question, anchors, sents, mine, others)
    if not found and policy.answer_lists and not is_polar_question(question):
        named = outside_list(question, text, [s.text for s in sents[loc.first : loc.last + 1]])
        if named:
            found = f"list: the question names {named} of a list the span is not in (§19.17)"
    if not found and policy.answer_competition and not offered:
        cited = [s for ev in evidence for s in ev.passage.sentences] or list(sents)
        near = [sents[i] for i in mine if not loc.first <= i <= loc.last]
        won = competing_candidate(
            text,
            question,
            anchors,
            sents[loc.first : loc.last + 1],
            near,
            cited,
            policy.answer_competition_margin,
        )
        if won:
            found = f"competition: the evidence answers it better with {won} (§19.20)"
    return found


def _reversed(question: str, located: Sequence[Located], policy: VerifierPolicy) -> str:
    """The ``NOT_ANSWER_ANCHORED`` reason when every sentence of ``located`` states the
    question's ordered pair reversed (:func:`aborist.verify.rules.frames.
    reversed_direction`; not for a yes/no question), or ``""``."""
    if not policy.answer_directions or not located or is_polar_question(question):
        return ""
    turned = ""
    for loc in located:
        own = [s.text for s in loc.evidence.passage.sentences[loc.first : loc.last + 1]]
        turned = reversed_direction(question, own)
        if not turned:
            return ""
    return (
        f"NOT_ANSWER_ANCHORED: the span's sentence states the question's '{turned}' the "
        "other way round (§19.17)"
    )


def _agreeing(
    text: str,
    question: str,
    anchors: frozenset[str],
    sents: Sequence[Sentence],
    mine: Sequence[int],
    policy: VerifierPolicy,
) -> list[int]:
    """Sentences of the span's object that lead to or agree with its own (§19.18): the
    first hop naming its subject (:func:`first_hop`), or its own word in another form
    (:func:`same_filler`). They are read with the span's sentence, not against it."""
    if not mine or not (policy.answer_first_hop or policy.answer_rival_same_stem):
        return []
    toks = tokens(text)
    own = sents[mine[0]]
    return [
        i
        for i, s in enumerate(sents)
        if i not in mine
        and (
            (policy.answer_first_hop and first_hop(question, anchors, own, s))
            or (policy.answer_rival_same_stem and same_filler(toks, s))
        )
    ]


def _by_figures(
    text: str,
    located: Sequence[Located],
    question: str,
    policy: VerifierPolicy,
    evidence: Sequence[EvidenceObject] = (),
) -> tuple[bool, str] | None:
    """A span that is one alternative of a comparison question ("Who is older, A or
    B?") answers it only when the figures its objects state win (§19.11): STRICT then,
    rung 3 when they lose (a contradiction) or decide nothing; ``None`` when the
    question compares nothing or the span is no alternative. The figures are read from
    every cited object (``evidence``), else from the objects the span occurs in."""
    found = [*evidence] or [loc.evidence for loc in located]
    objects = list({ev.evidence_id: ev for ev in found}.values())
    outcome, why = compare_alternatives(text, question, objects, policy.answer_subject_bridge)
    if outcome == "wins":
        return True, f"answers the question by the figures: {why}"
    if outcome == "loses":
        return False, f"NOT_ANSWER_ANCHORED: the figures contradict it ({why})"
    if outcome == "unknown":
        return False, f"NOT_ANSWER_ANCHORED: a comparison the figures do not decide ({why})"
    return None


def _stated_elsewhere(anchors: frozenset[str], loc: Located, reached: set[int]) -> str:
    """A sentence of the span's object that holds *every* term of the question (three or
    more) states the relation asked about; a span outside it and its neighbours answers
    something else ("A "break" statement … terminates the loop without executing the
    else clause" for a span "continue" from the next sentence)."""
    if len(anchors) < 3:
        return ""
    sents = loc.evidence.passage.sentences
    full = [i for i, s in enumerate(sents) if anchors <= s.stems]
    if full and not any(i in reached for i in full):
        return f"another: sentence {full[0] + 1} holds every term of the question"
    return ""


_LEAD = re.compile(
    r"^[\"'(]*((?:[A-Z][^\s,;:()\"]*)(?:\s+(?:of|de|van|von|[A-Z][^\s,;:()\"]*)){0,4})"
)


def _entity_bridge(
    toks: Sequence[str], loc: Located, anchors: frozenset[str], pronoun: bool = False
) -> tuple[int, set[int]]:
    """Question terms reached through the *subject* of the span's sentence: when the
    sentence opens with a name ("Deadwood (…) is a city … the county seat of Lawrence
    County") that another sentence of the object names together with the question's terms
    ("It is on display at the Adams Museum in Deadwood"), that sentence's terms count —
    the answer is a fact about the thing the question leads to (a two-hop question)."""
    sents = loc.evidence.passage.sentences
    m = _LEAD.match(sents[loc.first].text)
    if m is None:
        return 0, set()
    lead = [t for t in tokens(m.group(1)) if t not in STOPWORDS]
    if not lead or set(lead) & set(toks):
        return 0, set()
    form = match_form(lead)
    best, where = 0, set()
    for i, s in enumerate(sents):
        if not loc.first <= i <= loc.last and form in s.form:
            # with ``pronoun``, a pronoun-led bridging sentence is read with the sentence
            # that names its subject ("He received his Ph.D. at Northwestern University"
            # after "Duane Swank … is a scholar"), §19.18
            back = _back_of(sents, i) if pronoun else i
            stems = s.stems | sents[back].stems if back < i else s.stems
            n = len(anchors & stems)
            if n > best:
                best, where = n, set(range(back, i + 1))
    return best, where


def _back_of(sents: Sequence[Sentence], k: int) -> int:
    """``k - 1`` when sentence ``k`` continues the subject its predecessor names (a
    pronoun-led sentence after one that is not); else ``k``."""
    if k == 0 or not continues(sents[k - 1].toks, sents[k].toks):
        return k
    return k if sents[k - 1].toks[0] in _PRONOUNS else k - 1


_ARTICLES = frozenset(["a", "an", "the"])


def _complement(toks: Sequence[str], sentence: Sequence[str]) -> bool:
    """Is the span the complement of its sentence's first copula ("Peggy Seeger (born
    1935) is an *American* folksinger")? Then it is said of the sentence's subject."""
    k = next((i for i, t in enumerate(sentence) if t in COPULAS), -1)
    if k < 0:
        return False
    at = k + 1 + (k + 1 < len(sentence) and sentence[k + 1] in _ARTICLES)
    return list(sentence[at : at + len(toks)]) == list(toks)


def _bridge(toks: Sequence[str], loc: Located, chain: int) -> int:
    """End (exclusive) of the sentences a span that *opens* its sentence (its subject,
    after an optional "the"), or is its first copula's complement, reaches through the
    pronoun-led sentences after it ("Walter Coy (1909-1974) was an actor. He was best
    known for narrating "Frontier"."): up to ``chain`` of them; ``0`` when the span is
    not said of its sentence's subject."""
    sents = loc.evidence.passage.sentences
    first = list(sents[loc.first].toks)
    if first[:1] == ["the"] and toks[:1] != ["the"]:
        first = first[1:]
    if chain <= 0 or not (first[: len(toks)] == list(toks) or _complement(toks, first)):
        return 0
    end = loc.last + 1
    while (
        end < len(sents)
        and end - loc.last <= chain
        and continues(sents[end - 1].toks, sents[end].toks)
    ):
        end += 1
    return end


def _back(loc: Located, chain: int, fronted: bool = False) -> int:
    """Start of the sentences a span in a pronoun-led sentence reaches back to: the
    sentence before, when that one names the subject the pronoun continues ("Junkers was
    a German aircraft manufacturer. It produced airplanes in Dessau."); else its own."""
    sents = loc.evidence.passage.sentences
    k = loc.first
    if chain <= 0 or k == 0:
        return k
    if not continues(sents[k - 1].toks, sents[k].toks) and not (
        fronted and continues_after_fronted(sents[k - 1].toks, sents[k])  # §19.18
    ):
        return k
    return k if sents[k - 1].toks[0] in _PRONOUNS else k - 1


def _near(toks: Sequence[str], loc: Located, anchors: frozenset[str], dist: int) -> int:
    """How many question anchors stand within ``dist`` tokens of an occurrence of ``toks``
    in the located passage."""
    seq: list[str] = []
    for s in loc.evidence.passage.sentences[loc.first : loc.last + 1]:
        seq.extend(s.toks)
    n, k, best = len(seq), len(toks), 0
    want = list(toks)
    for i in range(n - k + 1):
        if seq[i : i + k] == want:
            window = seq[max(0, i - dist) : i] + seq[i + k : i + k + dist]
            best = max(best, len(anchors & {stem(t) for t in window}))
    return best


def stems_of(words: Sequence[str]) -> frozenset[str]:
    """Stems of ``words`` (for the ``ignore`` set of :func:`local_support`)."""
    return frozenset(stem(w) for w in words)
