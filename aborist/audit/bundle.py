"""Export bundles: one run, verifiable offline by a third party with only the bundle and
aborist (docs/ledger-format.md, "Export
bundles").

:func:`export_run` (:mod:`aborist.audit.bundle_export`) writes the run's events (full
envelopes), every blob they reference, a checkpoint covering the run, an RFC 9162
inclusion proof for every event against it, and consistency proofs between that
checkpoint and every other recorded checkpoint (so a checkpoint the auditor kept, of any
recorded size, can be linked to the bundle's).

:func:`verify_bundle` needs no database. In order, it checks

1. ``format``: the bundle's shape and format version;
2. ``events``: every payload hash and event hash recomputed (:mod:`ledger.envelope`), every
   event in the run's stream, ``stream_seq`` = 1..n, ``seq`` strictly increasing, the
   ``prev_hash`` link between events of consecutive ``seq``, and the run's end
   (:mod:`aborist.audit.checks.run_end`): its status is reported, and events that stop inside a
   transaction the pipeline commits whole (a labelled run without its
   ``qa.run_completed``) fail as truncated;
3. ``inclusion``: every event's inclusion proof against the bundle's checkpoint root
   (:func:`ledger.tlog.merkle.verify_inclusion`);
4. ``checkpoint``: every consistency proof the bundle carries; with a trusted checkpoint,
   equal roots at the same size, else a consistency proof linking the two sizes that holds
   with the *trusted* root;
5. ``blob``: every blob hashes to its address, and every referenced blob is present;
6. ``dag``: the run DAG recomputed from the events (:func:`aborist.audit.checks.dags.check_run`);
7. ``deep``: the deterministic stages re-executed (:func:`aborist.audit.deep.reexecute_run`).

What the bundle alone proves: the events are the ones the checkpoint commits to, and the
recorded outputs are what the code produces from the recorded inputs. That the checkpoint
is the ledger's real one is what a trusted checkpoint (``checkpoint=``) adds. What no
bundle proves: that the stream has no event after its last one (an inclusion proof shows
an event is in the tree, not that no other is), so an ``incomplete`` run may have gone on.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any

from aborist.audit.bundle_export import BUNDLE_FORMAT, LEDGER_FORMAT, export_run
from aborist.audit.bundle_report import BUNDLE_CHECKS, BundleReport
from aborist.audit.checks.blobs import referenced_blobs
from aborist.audit.checks.cache_binding import check_cache_binding
from aborist.audit.checks.checkpoints import CHECKPOINT_FIELDS, is_root_hex
from aborist.audit.checks.dags import check_run
from aborist.audit.checks.evidence_link import run_evidence_link
from aborist.audit.checks.run_end import run_end
from aborist.audit.checks.run_events import RunEvents
from aborist.audit.deep import reexecute_run
from aborist.audit.findings import Divergence, clip, clip_typed
from aborist.audit.replay import parse_checkpoint
from aborist.errors import BundleFormatError, InputError
from aborist.events import CacheChecked, run_stream
from ledger.canonical import sha256_hex
from ledger.chain import event_hash_of
from ledger.envelope import RecordedEvent
from ledger.envelope_check import EnvelopeCheck, check_recorded_at
from ledger.errors import BlobNotFoundError
from ledger.tlog import merkle

__all__ = ["BUNDLE_CHECKS", "BUNDLE_FORMAT", "BundleReport", "export_run", "verify_bundle"]

_ENVELOPE_FIELDS = (
    "seq",
    "event_id",
    "stream",
    "stream_seq",
    "type",
    "type_version",
    "recorded_at",
    "payload",
    "payload_hash",
    "prev_hash",
    "hash",
)


_INT_FIELDS = ("seq", "stream_seq", "type_version")
#: The fields of a bundle (docs/ledger-format.md, "Export bundles"); no other is read.
_BUNDLE_FIELDS = frozenset(
    {"format", "ledger_format", "run_id", "events", "blobs", "checkpoint", "inclusion_proofs",
     "consistency_proofs"}
)  # fmt: skip


# -- verify ---------------------------------------------------------------------------------


class _BundleBlobs:
    """The bundle's blobs as a :class:`aborist.audit.checks.blobs.BlobSource` (no database)."""

    def __init__(self, blobs: Mapping[str, bytes]) -> None:
        self.blobs = blobs

    def get_blob(self, blob_hash: str) -> bytes:
        data = self.blobs.get(blob_hash)
        if data is None:
            raise BlobNotFoundError(f"no blob with hash {blob_hash} in the bundle")
        return data


#: The fields of a bundle's nested objects as ``export_run`` writes them: a field no check
#: reads is refused, here as at the top and in an event, so a report never seems to vouch
#: for it ("witnessed_by", "verified": true).
_INCLUSION_FIELDS = frozenset({"seq", "leaf_index", "tree_size", "proof"})
_CONSISTENCY_FIELDS = frozenset({"size1", "root1", "size2", "root2", "proof"})


def _closed_parts(b: Mapping[str, Any]) -> None:
    """:class:`BundleFormatError` unless the checkpoint, the inclusion proofs and the
    consistency proofs hold only the fields the checks read, the checkpoint's root is written
    as the ledger writes it (64 lower-case hex digits) and its ``created_at`` as the ledger
    writes timestamps, and no event has two inclusion proofs (only one would be checked)."""
    cp = b["checkpoint"]
    if not isinstance(cp, Mapping):
        raise BundleFormatError("checkpoint is a JSON object")
    parts: list[tuple[str, object, frozenset[str]]] = [("checkpoint", cp, CHECKPOINT_FIELDS)]
    parts += [("inclusion proof", p, _INCLUSION_FIELDS) for p in b["inclusion_proofs"]]
    parts += [
        ("consistency proof", p, _CONSISTENCY_FIELDS) for p in b.get("consistency_proofs", [])
    ]
    for what, part, fields in parts:
        if not isinstance(part, Mapping):
            raise BundleFormatError(f"a {what} is a JSON object")
        extra = sorted(map(str, set(part) - fields))
        if extra:
            raise BundleFormatError(f"{what}: unknown field(s) {clip(', '.join(extra))}")
    if not is_root_hex(cp.get("root")):
        raise BundleFormatError(
            f"checkpoint root {clip_typed(cp.get('root'))} is not 64 lower-case hex digits"
        )
    if "created_at" in cp and check_recorded_at(cp["created_at"]) is not None:
        raise BundleFormatError(
            f"checkpoint created_at {clip_typed(cp['created_at'])} is not a timestamp "
            "the ledger writes"
        )
    seen: set[object] = set()
    for p in b["inclusion_proofs"]:
        seq = p.get("seq")
        if seq in seen:
            raise BundleFormatError(f"two inclusion proofs for seq {clip_typed(seq)}")
        seen.add(seq)


def _hex_list(value: object) -> list[bytes]:
    """A proof's hashes, each written as export writes it: 64 lower-case hex digits
    (``bytes.fromhex`` alone also takes upper case and spaces, a form no check vouches for)."""
    if not isinstance(value, list) or not all(is_root_hex(p) for p in value):
        raise BundleFormatError("a proof is a list of hashes of 64 lower-case hex digits")
    return [bytes.fromhex(p) for p in value]


def _proof_size(value: object) -> int:
    """A consistency proof's size as export writes it: a JSON integer (``int()`` would
    read ``"40"``, ``39.9`` or ``true`` as a size the proof was never made for)."""
    if type(value) is not int or value < 0:
        raise BundleFormatError(f"a proof's size is a JSON integer, found {clip_typed(value)}")
    return value


def _proof_root(value: object) -> bytes:
    if not is_root_hex(value):
        raise BundleFormatError(
            f"a proof's root is 64 lower-case hex digits, found {clip_typed(value)}"
        )
    return bytes.fromhex(str(value))


class _Verify:
    def __init__(self, bundle: Mapping[str, Any], trusted: tuple[int, str] | None) -> None:
        self.bundle = bundle
        self.trusted = trusted
        self.report = BundleReport(trusted_checkpoint=trusted[0] if trusted else None)
        self.events: list[RecordedEvent] = []
        self.blobs: dict[str, bytes] = {}
        self.size = 0
        self.root = b""

    def fail(
        self,
        kind: str,
        seq: int | None,
        stage: str | None,
        expected: str,
        found: str,
        detail: str = "",
    ) -> None:
        self.report.fail(
            Divergence(kind, seq, self.report.run_id or None, stage, expected, found, detail)
        )

    def shape(self) -> bool:
        b = self.bundle
        if b.get("format") != BUNDLE_FORMAT:
            self.fail("format", None, None, BUNDLE_FORMAT, clip(b.get("format")), "format")
            return False
        version = b.get("ledger_format")
        if type(version) is not int or version != LEDGER_FORMAT:  # the hashes this code checks
            self.fail("format", None, None, f"ledger_format {LEDGER_FORMAT}",
                      clip_typed(version), "ledger_format")  # fmt: skip
            return False
        unknown = sorted(map(str, set(b) - _BUNDLE_FIELDS))
        if unknown:  # nothing would check it, and a report must not seem to vouch for it
            self.fail("format", None, None, f"only the fields {', '.join(sorted(_BUNDLE_FIELDS))}",
                      clip(", ".join(unknown)), "unknown field")  # fmt: skip
            return False
        try:
            self.report.run_id = str(b["run_id"])
            self.events = [
                RecordedEvent(**{k: e[k] for k in _ENVELOPE_FIELDS}) for e in b["events"]
            ]
            for raw in b["events"]:
                extra = set(raw) - set(_ENVELOPE_FIELDS)
                if extra:
                    raise BundleFormatError(
                        f"event {raw.get('seq')!r}: unknown field(s) {', '.join(sorted(extra))}"
                    )
            for e in self.events:
                for k in _ENVELOPE_FIELDS:
                    want = int if k in _INT_FIELDS else str
                    value = getattr(e, k)
                    if type(value) is not want:
                        raise BundleFormatError(
                            f"event {e.seq!r}: {k} must be a JSON {want.__name__}"
                        )
            self.blobs = {str(h): base64.b64decode(v, validate=True) for h, v in b["blobs"].items()}
            self.size, root = parse_checkpoint(b["checkpoint"])
            self.root = bytes.fromhex(root)
            self.report.checkpoint = {"tree_size": self.size, "root": root}
            self.report.seqs = [e.seq for e in self.events]
            if not isinstance(b["inclusion_proofs"], list):
                raise BundleFormatError("inclusion_proofs is a list")
            if not isinstance(b.get("consistency_proofs", []), list):
                raise BundleFormatError("consistency_proofs is a list")
            _closed_parts(b)
        except (KeyError, TypeError, ValueError, AttributeError, binascii.Error, InputError) as e:
            self.fail(
                "format",
                None,
                None,
                "a bundle as docs/ledger-format.md describes",
                clip(f"{type(e).__name__}: {e}"),
                "shape",
            )
            return False
        if not self.events:
            self.fail("format", None, None, "at least one event", "none", "events")
            return False
        self.report.events, self.report.blobs = len(self.events), len(self.blobs)
        return True

    def chain(self) -> None:
        stream = run_stream(self.report.run_id)
        prev: RecordedEvent | None = None
        for i, ev in enumerate(self.events, start=1):
            ph = sha256_hex(ev.payload.encode("utf-8"))
            if ph != ev.payload_hash:
                return self.fail("events", ev.seq, ev.type, ph, ev.payload_hash, "payload_hash")
            h = event_hash_of(ev)  # a header JSON cannot hold: a text no hash equals
            if h != ev.hash:
                return self.fail("events", ev.seq, ev.type, h, ev.hash, "hash")
            if ev.stream != stream:
                return self.fail("events", ev.seq, ev.type, stream, clip(ev.stream), "stream")
            if ev.stream_seq != i:
                return self.fail(
                    "events",
                    ev.seq,
                    ev.type,
                    str(i),
                    str(ev.stream_seq),
                    "stream_seq (an event of the run is missing or moved)",
                )
            if prev is not None:
                if ev.seq <= prev.seq:
                    return self.fail("events", ev.seq, ev.type, f"> {prev.seq}", str(ev.seq), "seq")
                if ev.seq == prev.seq + 1 and ev.prev_hash != prev.hash:
                    return self.fail(
                        "events", ev.seq, ev.type, prev.hash, ev.prev_hash, "prev_hash"
                    )
            prev = ev
        return None

    def envelope(self) -> None:
        """Every envelope field of every event (:mod:`ledger.envelope_check`; the run's
        events are in ``seq`` order, so ``recorded_at`` may not go back between them)."""
        check = EnvelopeCheck()
        for ev in self.events:
            check.check(ev)
            for f in check.current:
                self.fail("events", f.seq, clip(ev.type), f.expected, f.found,
                          f"envelope: {f.field}")  # fmt: skip

    def run_end(self) -> None:
        try:
            end = self.report.end = run_end(self.events)
        except (KeyError, TypeError, ValueError, AttributeError):
            return  # a payload the pipeline never wrote: the dag check names it
        if end.truncated is not None:
            found = f"the bundle ends at {end.last_type}"
            self.fail("events", end.last_seq, end.last_type, end.expected, found,
                      f"truncated: {end.truncated}")  # fmt: skip

    def inclusion(self) -> None:
        proofs: dict[int, Any] = {}
        for p in self.bundle["inclusion_proofs"]:
            if isinstance(p, Mapping) and isinstance(p.get("seq"), int):
                proofs.setdefault(p["seq"], p)
        for ev in self.events:
            p = proofs.get(ev.seq)
            if p is None:
                return self.fail("inclusion", ev.seq, ev.type, "an inclusion proof", "none")
            at = (p.get("leaf_index"), p.get("tree_size"))
            if tuple(map(type, at)) != (int, int) or at != (ev.seq - 1, self.size):
                return self.fail(
                    "inclusion", ev.seq, ev.type,
                    f"leaf_index {ev.seq - 1} and tree_size {self.size} (the checkpoint's)",
                    f"leaf_index {clip_typed(at[0])}, tree_size {clip_typed(at[1])}",
                    "the proof's stated place is not the one checked",
                )  # fmt: skip
            try:
                path = _hex_list(p.get("proof"))
                leaf = merkle.leaf_hash(bytes.fromhex(ev.hash))
            except ValueError as e:
                return self.fail("inclusion", ev.seq, ev.type, "hex hashes", clip(str(e)))
            if not merkle.verify_inclusion(leaf, ev.seq - 1, self.size, path, self.root):
                return self.fail(
                    "inclusion",
                    ev.seq,
                    ev.type,
                    f"a path to root {self.root.hex()}",
                    "a path that does not lead there",
                    f"event {ev.hash[:12]}… is not in the checkpoint of size {self.size}",
                )
        seqs = {ev.seq for ev in self.events}
        for p in self.bundle["inclusion_proofs"]:  # one of no event: nothing checked it
            seq = p.get("seq") if isinstance(p, Mapping) else None
            if type(seq) is not int or seq not in seqs:
                stray = seq if type(seq) is int else None
                found = f"a proof for seq {clip_typed(seq)}"
                return self.fail("inclusion", stray, None, "one inclusion proof per event", found,
                                 "a proof of no event of the bundle")  # fmt: skip
        return None

    def consistency(self) -> None:
        carried: dict[tuple[int, int], tuple[list[bytes], bytes, bytes]] = {}
        for p in self.bundle.get("consistency_proofs", []):
            try:
                s1, s2 = _proof_size(p["size1"]), _proof_size(p["size2"])
                r1, r2 = _proof_root(p["root1"]), _proof_root(p["root2"])
                path = _hex_list(p["proof"])
            except (KeyError, TypeError, ValueError, BundleFormatError) as e:
                return self.fail(
                    "checkpoint",
                    None,
                    None,
                    "a consistency proof",
                    clip(f"{type(e).__name__}: {e}"),
                )
            mine = r2 if s2 == self.size else r1
            if self.size not in (s1, s2) or mine != self.root:
                return self.fail(
                    "checkpoint",
                    self.size,
                    None,
                    self.root.hex(),
                    mine.hex(),
                    f"consistency proof {s1}->{s2} is not from the bundle's checkpoint",
                )
            if not merkle.verify_consistency(s1, s2, path, r1, r2):
                return self.fail(
                    "checkpoint",
                    s1,
                    None,
                    f"tree {s2} extends tree {s1}",
                    "a proof that does not hold",
                    f"consistency {s1}->{s2}",
                )
            carried[(s1, s2)] = (path, r1, r2)
        if self.trusted is None:
            return None
        size, root_hex = self.trusted
        root = bytes.fromhex(root_hex)
        if size == self.size:
            if root != self.root:
                self.fail(
                    "checkpoint",
                    size,
                    None,
                    root_hex,
                    self.root.hex(),
                    "the trusted checkpoint's root at the same size",
                )
            return None
        key = (size, self.size) if size < self.size else (self.size, size)
        proof = carried.get(key)
        if proof is None:
            return self.fail(
                "checkpoint",
                size,
                None,
                f"a consistency proof {key[0]}->{key[1]}",
                "none in the bundle",
                f"trusted checkpoint of size {size}: re-export with --since-checkpoint",
            )
        path, r1, r2 = proof
        want = (root, self.root) if size < self.size else (self.root, root)
        if not merkle.verify_consistency(key[0], key[1], path, *want):
            return self.fail(
                "checkpoint",
                size,
                None,
                root_hex,
                (r1 if size < self.size else r2).hex(),
                f"trusted checkpoint of size {size}: the bundle's tree does not "
                "extend it (history was rewritten, or the checkpoint is from "
                "another ledger)",
            )
        return None

    def blob_check(self) -> None:
        for h, data in self.blobs.items():
            actual = sha256_hex(data)
            if actual != h:
                self.fail("blob", None, None, h, actual, f"blob {h} bytes hash elsewhere")
        try:
            refs = referenced_blobs(self.report.run_id, self.events)
        except (KeyError, TypeError, ValueError, AttributeError):
            return  # a payload the pipeline never wrote (or no JSON at all): dag names it
        for ref in refs:
            if ref.blob not in self.blobs:
                self.fail(
                    "blob",
                    ref.seq,
                    ref.stage,
                    ref.blob,
                    "no blob",
                    f"blob {ref.blob} is not in the bundle",
                )
        # a blob no event references is no part of the run: carried, it would seem vouched for
        wanted = {ref.blob for ref in refs}
        for h in sorted(set(self.blobs) - wanted):
            self.fail("blob", None, None, "a blob an event of the run references", clip(h),
                      f"blob {clip(h)} is referenced by no event of the run")  # fmt: skip

    def run(self) -> BundleReport:
        r = self.report
        ran: list[str] = []
        if self.shape():
            ran = list(BUNDLE_CHECKS)
            self.chain()
            self.envelope()
            self.run_end()
            self.inclusion()
            self.consistency()
            self.blob_check()
            history: Sequence[RecordedEvent] = self.events
            try:
                check = check_run(r.run_id, self.events, None, truncation=False)  # run_end
                history = check.run if check.run is not None else self.events
                for d in check.divergences:
                    r.fail(d)
                if check.served is not None:  # the answer is the served run's: not here
                    r.served_from = check.served[1]
                if check.run is not None:
                    for d in check_cache_binding(check.run):
                        r.fail(d)
            except (KeyError, TypeError, ValueError, AttributeError) as e:
                self.fail(
                    "dag",
                    None,
                    None,
                    "payloads as the pipeline records them",
                    clip(f"{type(e).__name__}: {e}"),
                )
            try:
                for d in run_evidence_link(RunEvents(r.run_id, history)):
                    r.fail(d)
            except (KeyError, TypeError, ValueError, AttributeError):
                pass  # a payload the pipeline never wrote: the dag check names it
            r.unrecorded_shards = _unrecorded_shards(history)
            good = {h: d for h, d in self.blobs.items() if sha256_hex(d) == h}
            try:
                reexecute_run(_BundleBlobs(good), r.run_id, history, r.deep)
            except (KeyError, TypeError, ValueError, AttributeError) as e:
                self.fail(
                    "deep",
                    None,
                    None,
                    "re-executable recorded inputs",
                    clip(f"{type(e).__name__}: {e}"),
                )
            for kind in ("blob", "deep"):
                found = r.deep.first(kind)
                if found is not None:
                    r.fail(found)
        else:
            ran = ["format"]
        skipped = (
            {"checkpoint"}
            if self.trusted is None and not self.bundle.get("consistency_proofs")
            else set()
        )
        if r.deep.deep_stages == 0 and "deep" not in r.failures:
            skipped.add("deep")  # nothing re-executed (a cache hit has no stage): no "ok"
        r.checks = {
            k: "skipped"
            if k not in ran or k in skipped
            else "diverged"
            if k in r.failures
            else "held"
            for k in BUNDLE_CHECKS
        }
        return r


def verify_bundle(
    bundle: Mapping[str, Any], *, checkpoint: Mapping[str, Any] | None = None
) -> BundleReport:
    """Verify ``bundle`` with no database; ``checkpoint`` is one the caller trusts (as
    ``aborist-ledger checkpoint --json`` prints it). Never raises for a bad bundle: every
    problem is a failure in the report. :class:`InputError` for a malformed checkpoint."""
    trusted = parse_checkpoint(checkpoint) if checkpoint is not None else None
    if not isinstance(bundle, Mapping):
        bundle = {}
    return _Verify(bundle, trusted).run()


def _unrecorded_shards(events: Sequence[RecordedEvent]) -> list[str]:
    """The shards the run's ``qa.cache_checked`` says it read without an ingest the ledger
    recorded (``--allow-unrecorded-shards``): no event vouches for their evidence, and
    only replay, which has the ledger's ingests, checks the corpus at all."""
    for ev in events:
        if ev.type == CacheChecked.TYPE:
            try:
                names = ev.data.get("unrecorded_shards", [])
            except (AttributeError, TypeError, ValueError):
                return []
            return [str(n) for n in names] if isinstance(names, list) else []
    return []
