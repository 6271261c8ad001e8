"""Hypothesis properties of the verifier."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.verify.evidence import build_evidence
from aborist.verify.support import whole_title
from aborist.verify.text.textcanon import STOPWORDS
from aborist.verify.verify import UnitVerdict, verify_answer
from ledger.canonical import canonical_json

VOCAB = [
    "the", "of", "and", "river", "Bergen", "museum", "opened", "1902", "Anna", "Holm",
    "founder", "budget", "approved", "committee", "ten", "percent", "Oslo", "was", "in", "is",
]  # fmt: skip
ALIEN = ["zorblat", "quixle", "vrenth", "plonk", "snarfed", "gribbet"]
RANK = {"UNGROUNDED": 0, "HYBRID": 1, "STRICT": 2}
MODES = st.sampled_from(["quote", "claim-lattice"])
PROPS = settings(max_examples=40, deadline=None)

words = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=12)
sentence = words.map(lambda ws: " ".join(ws) + ".")
evidence_texts = st.lists(
    st.lists(sentence, min_size=1, max_size=4).map(" ".join), min_size=1, max_size=4
)


@st.composite
def answers(draw: st.DrawFn, n_evidence: int) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        text = " ".join(draw(words))
        tags = draw(st.lists(st.integers(1, n_evidence + 1), max_size=3))
        tag = f" [{', '.join(f'E{t}' for t in tags)}]" if tags else ""
        lines.append(text + tag)
    return "\n".join(lines)


@PROPS
@given(data=st.data(), texts=evidence_texts, mode=MODES, question=st.none() | sentence)
def test_verdict_is_a_pure_function(
    data: st.DataObject, texts: list[str], mode: str, question: str | None
) -> None:
    answer = data.draw(answers(len(texts)))
    first = verify_answer(answer, build_evidence(texts), question=question, mode=mode)
    second = verify_answer(answer, build_evidence(list(texts)), question=question, mode=mode)
    assert canonical_json(first.to_dict()) == canonical_json(second.to_dict())


@PROPS
@given(texts=evidence_texts, data=st.data(), curly=st.booleans())
def test_verbatim_quote_of_evidence_is_always_verified(
    texts: list[str], data: st.DataObject, curly: bool
) -> None:
    ev = build_evidence(texts)
    source = data.draw(st.sampled_from(texts)).split()
    start = data.draw(st.integers(0, len(source) - 1))
    end = data.draw(st.integers(start + 1, len(source)))
    piece = " ".join(source[start:end])
    has_content = any(w.strip(".").lower() not in STOPWORDS for w in source[start:end])
    quoted = f"“{piece}”" if curly else f'"{piece}"'
    verdict = verify_answer(quoted, ev)
    fragment = len(piece.split()) <= 12 and not whole_title(piece, ev, quoted)
    if has_content and fragment:
        # a piece cut out of a longer capitalized run (2.0): not a whole title or name
        assert "QUOTE_FRAGMENT" in {v.code for v in verdict.violations}
    elif has_content:
        assert verdict.audit_mode == "STRICT"
        assert verdict.units[0].strategy == "quote"
    else:
        assert verdict.audit_mode == "UNGROUNDED"  # a stopword-only quote is no claim


@PROPS
@given(
    data=st.data(),
    texts=evidence_texts,
    mode=MODES,
    alien=st.lists(st.sampled_from(ALIEN), min_size=1, max_size=5),
)
def test_appending_an_unsupported_line_never_raises_audit_mode(
    data: st.DataObject, texts: list[str], mode: str, alien: list[str]
) -> None:
    ev = build_evidence(texts)
    answer = data.draw(answers(len(texts)))
    extra = " ".join(alien) + data.draw(st.sampled_from(["", " [E1]"]))
    before = verify_answer(answer, ev, mode=mode)
    after = verify_answer(answer + "\n" + extra, ev, mode=mode)
    assert RANK[after.audit_mode] <= RANK[before.audit_mode]
    assert after.n_units == before.n_units + 1
    assert after.audit_mode != "STRICT"


@PROPS
@given(texts=evidence_texts, claim=words, extra=st.integers(1, 50), good=st.booleans())
def test_unresolved_pointer_always_fails_its_check(
    texts: list[str], claim: list[str], extra: int, good: bool
) -> None:
    ev = build_evidence(texts)
    pointers = (["E1"] if good else []) + [f"E{len(texts) + extra}"]
    verdict = verify_answer(f"{' '.join(claim)} [{', '.join(pointers)}]", ev, mode="claim-lattice")
    (unit,) = verdict.units
    assert dict(unit.checks)["evidence_resolves"] == "fail"
    assert not unit.verified
    assert any(v.code == "POINTER_UNRESOLVED" for v in verdict.violations)


@PROPS
@given(data=st.data(), texts=evidence_texts, mode=MODES, question=st.none() | sentence)
def test_reordering_evidence_with_remapped_pointers_keeps_each_claims_verdict(
    data: st.DataObject, texts: list[str], mode: str, question: str | None
) -> None:
    n = len(texts)
    perm = data.draw(st.permutations(list(range(n))))
    answer = data.draw(answers(n))
    original = build_evidence(texts)
    shuffled = build_evidence([texts[i] for i in perm])
    # old pointer E(i+1) now lives at position perm.index(i)
    remap = {f"E{i + 1}": f"E{perm.index(i) + 1}" for i in range(n)}

    def rewrite(line: str) -> str:
        if "[" not in line:
            return line
        head, tags = line.rsplit(" [", 1)
        new = [remap.get(t.strip(), t.strip()) for t in tags.rstrip("]").split(",")]
        return f"{head} [{', '.join(new)}]"

    remapped = "\n".join(rewrite(line) for line in answer.split("\n"))
    a = verify_answer(answer, original, question=question, mode=mode)
    b = verify_answer(remapped, shuffled, question=question, mode=mode)

    def key(u: UnitVerdict) -> tuple[object, ...]:
        return (u.text, u.strategy, u.verified, u.grade, u.evidence_ids, u.checks)

    assert [key(u) for u in a.units] == [key(u) for u in b.units]
    assert a.audit_mode == b.audit_mode
