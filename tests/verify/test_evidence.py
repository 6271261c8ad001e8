"""Evidence objects (pointer_id + content-addressed evidence_id) and the spotlight."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aborist.errors import InputError
from aborist.verify.evidence import EvidenceObject, build_evidence, evidence_id_for, spotlight


def test_build_evidence_numbers_in_order_and_addresses_content() -> None:
    ev = build_evidence(["alpha text", {"text": "beta text", "source_uri": "b.txt", "title": "B"}])
    assert [e.pointer_id for e in ev] == ["E1", "E2"]
    digest = hashlib.sha256(b"alpha text").hexdigest()
    assert ev[0].evidence_hash == digest
    assert ev[0].evidence_id == "E" + digest[:8] == evidence_id_for(digest)
    assert ev[1].source_uri == "b.txt" and ev[1].title == "B" and ev[1].source_role == "primary"


def test_evidence_id_is_stable_under_reordering() -> None:
    a = build_evidence(["one", "two"])
    b = build_evidence(["two", "one"])
    assert {e.text: e.evidence_id for e in a} == {e.text: e.evidence_id for e in b}
    assert a[0].pointer_id == b[0].pointer_id == "E1"


def test_rebuilding_objects_renumbers_them() -> None:
    first = build_evidence(["x", "y"])
    again = build_evidence(list(reversed(first)))
    assert [(e.pointer_id, e.text) for e in again] == [("E1", "y"), ("E2", "x")]


def test_wrong_hash_is_refused() -> None:
    with pytest.raises(InputError, match="does not match"):
        EvidenceObject(pointer_id="E1", text="abc", evidence_hash="0" * 64)


@pytest.mark.parametrize("bad", [42, {"title": "no text"}, {"text": "ok", "source_role": 3}])
def test_malformed_items_raise_input_error(bad: object) -> None:
    with pytest.raises(InputError):
        build_evidence([bad])  # type: ignore[list-item]


def test_to_dict_is_plain_data_without_text() -> None:
    d = build_evidence(["some text"])[0].to_dict()
    assert set(d) == {
        "pointer_id",
        "evidence_id",
        "evidence_hash",
        "source_uri",
        "title",
        "source_role",
    }


def test_spotlight_picks_densest_cluster_not_first_match() -> None:
    filler = "lorem ipsum dolor sit amet " * 20
    text = (
        "The merger was announced early. "
        + filler
        + "In 2019 the merger of Acme and Globex closed in Delaware. "
        + filler
    )
    excerpt = spotlight(text, "Acme and Globex merger closed in Delaware in 2019", window=120)
    assert "Acme and Globex closed" in excerpt or "Acme and Globex" in excerpt
    assert "Delaware" in excerpt
    assert len(excerpt) <= 140


def test_spotlight_short_text_and_no_match() -> None:
    assert spotlight("short “text”", "anything") == 'short "text"'
    long_text = "word " * 200
    assert spotlight(long_text, "absent tokens", window=50).startswith("word word")


def _spotlight_reference(text: str, claim: str, window: int) -> str:
    """The spotlight as docs/verifier.md states it, counted naively per occurrence."""
    from aborist.verify.text.textcanon import canonicalize, content_tokens, token_spans, tokens

    canon = canonicalize(text)
    if window <= 0 or len(canon) <= window:
        return canon
    wanted = set(content_tokens(tokens(claim)))
    hits = [(tok, start) for tok, start, _ in token_spans(canon) if tok in wanted]
    half = window // 2
    if not hits:
        start, end = 0, window
    else:
        best_pos, best_count = hits[0][1], -1
        for _tok, pos in hits:
            near = {t for t, p in hits if pos - half <= p <= pos + half}
            if len(near) > best_count:
                best_pos, best_count = pos, len(near)
        start = max(0, best_pos - half)
        end = min(len(canon), start + window)
        start = max(0, end - window)
    while start > 0 and canon[start - 1].isalnum():
        start -= 1
    while end < len(canon) and canon[end].isalnum():
        end += 1
    return canon[start:end].strip()


@given(
    words=st.lists(
        st.sampled_from(["acme", "globex", "merger", "the", "of", "x1", "2019"]),
        min_size=0,
        max_size=120,
    ),
    claim=st.lists(st.sampled_from(["acme", "globex", "merger", "2019", "zeta"]), max_size=4),
    window=st.integers(min_value=1, max_value=80),
)
def test_spotlight_matches_the_naive_definition(
    words: list[str], claim: list[str], window: int
) -> None:
    text = " ".join(words)
    assert spotlight(text, " ".join(claim), window) == _spotlight_reference(
        text, " ".join(claim), window
    )
