"""Hash invariants of the chain, stated as properties (pure: no database)."""

from __future__ import annotations

import dataclasses
import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.canonical import canonical_json, sha256_hex
from ledger.chain import verify_chain
from ledger.envelope import GENESIS_HASH, RecordedEvent, event_hash

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
payloads = st.dictionaries(st.text(max_size=8), json_values, max_size=5)


def build_chain(payload_list: list[dict[str, object]]) -> list[RecordedEvent]:
    out: list[RecordedEvent] = []
    prev = GENESIS_HASH
    positions: dict[str, int] = {}
    for i, payload in enumerate(payload_list, start=1):
        stream = f"s{i % 3}"
        positions[stream] = positions.get(stream, 0) + 1
        text = canonical_json(payload).decode()
        fields = {
            "seq": i,
            "event_id": f"00000000-0000-4000-8000-{i:012d}",
            "stream": stream,
            "stream_seq": positions[stream],
            "type": "test.happened",
            "type_version": 1,
            "recorded_at": f"2026-01-01T00:00:{i % 60:02d}.000000Z",
            "payload_hash": sha256_hex(text.encode()),
            "prev_hash": prev,
        }
        h = event_hash(**fields)  # type: ignore[arg-type]
        out.append(RecordedEvent(payload=text, hash=h, **fields))  # type: ignore[arg-type]
        prev = h
    return out


chains = st.lists(payloads, min_size=2, max_size=16).map(build_chain)

STRING_FIELDS = [
    "event_id", "stream", "type", "recorded_at", "payload", "payload_hash", "prev_hash", "hash",
]  # fmt: skip
INT_FIELDS = ["seq", "stream_seq", "type_version"]


@given(st.dictionaries(st.text(max_size=10), json_values, max_size=8), st.randoms())
def test_canonical_bytes_ignore_key_order(payload: dict[str, object], rnd: random.Random) -> None:
    items = list(payload.items())
    rnd.shuffle(items)
    assert canonical_json(dict(items)) == canonical_json(payload)
    # Canonical text is a fixed point (numbers re-read as floats: JCS writes 1e16 as an
    # integer literal, which is the same IEEE double).
    again = json.loads(canonical_json(payload), parse_int=float)
    assert canonical_json(again) == canonical_json(payload)


@given(chains)
def test_untouched_chain_verifies(chain: list[RecordedEvent]) -> None:
    report = verify_chain(chain)
    assert report.ok, report.failure
    assert report.events_checked == len(chain) and report.head_hash == chain[-1].hash


def _flip_char(value: str, pos: int) -> str:
    c = value[pos]
    repl = "0" if c != "0" else "1"
    return value[:pos] + repl + value[pos + 1 :]


@settings(max_examples=200)
@given(chains, st.data())
def test_any_single_change_is_reported_at_its_seq(
    chain: list[RecordedEvent], data: st.DataObject
) -> None:
    k = data.draw(st.integers(0, len(chain) - 1))
    field = data.draw(st.sampled_from(STRING_FIELDS + INT_FIELDS))
    target = chain[k]
    old = getattr(target, field)
    if field in INT_FIELDS:
        new = old + data.draw(st.sampled_from([-1, 1, 7]))
    else:
        pos = data.draw(st.integers(0, len(old) - 1)) if old else 0
        new = _flip_char(old, pos) if old else "x"
    tampered = list(chain)
    tampered[k] = dataclasses.replace(target, **{field: new})
    report = verify_chain(tampered)
    assert report.failure is not None, f"change of {field} at seq {k + 1} not detected"
    assert report.failure.seq == target.seq


@given(chains, st.data())
def test_deletion_is_reported(chain: list[RecordedEvent], data: st.DataObject) -> None:
    k = data.draw(st.integers(0, len(chain) - 2))  # deleting the tail needs a checkpoint
    tampered = chain[:k] + chain[k + 1 :]
    report = verify_chain(tampered)
    assert report.failure is not None and report.failure.seq == k + 1


@given(chains, st.data(), st.booleans())
def test_swap_is_reported(chain: list[RecordedEvent], data: st.DataObject, renumber: bool) -> None:
    i = data.draw(st.integers(0, len(chain) - 2))
    j = data.draw(st.integers(i + 1, len(chain) - 1))
    tampered = list(chain)
    a, b = chain[i], chain[j]
    if renumber:  # swap contents but keep each position's seq
        a, b = dataclasses.replace(a, seq=b.seq), dataclasses.replace(b, seq=a.seq)
    tampered[i], tampered[j] = b, a
    report = verify_chain(tampered)
    assert report.failure is not None and report.failure.seq == i + 1


@given(chains, st.data(), payloads)
def test_insertion_is_reported(
    chain: list[RecordedEvent], data: st.DataObject, payload: dict[str, object]
) -> None:
    """A forged event slipped in before position k, with a valid hash of its own and the
    later seqs renumbered: the first event after it no longer links."""
    k = data.draw(st.integers(0, len(chain) - 1))
    prev = chain[k - 1].hash if k else GENESIS_HASH
    text = canonical_json(payload).decode()
    fields = dict(
        seq=k + 1,
        event_id="forged",
        stream="forged",
        stream_seq=1,
        type="test.forged",
        type_version=1,
        recorded_at="2026-01-01T00:00:00.000000Z",
        payload_hash=sha256_hex(text.encode()),
        prev_hash=prev,
    )
    forged = RecordedEvent(payload=text, hash=event_hash(**fields), **fields)  # type: ignore[arg-type]
    shifted = [dataclasses.replace(e, seq=e.seq + 1) for e in chain[k:]]
    report = verify_chain([*chain[:k], forged, *shifted])
    assert report.failure is not None and report.failure.seq == k + 2


def test_suffix_check_from_a_known_head() -> None:
    chain = build_chain([{"i": i} for i in range(10)])
    report = verify_chain(chain[4:], start_seq=5, start_prev_hash=chain[3].hash)
    assert report.ok and report.events_checked == 6
    bad = verify_chain(chain[4:], start_seq=5, start_prev_hash=GENESIS_HASH)
    assert bad.failure is not None and bad.failure.check == "prev_hash"
