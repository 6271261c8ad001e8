"""Replay: what binds a cache entry to its run, and a hit to the entry it served
(docs/replay.md, "What binds a cache entry").

A ``qa.cache_written`` files an answer under a cache key; the key is a hash of nine
dimensions (:mod:`aborist.pipeline.keys`). Each dimension is recomputed here from the run's
own record (:func:`aborist.pipeline.cache.recorded_key_dimensions`) and compared with the
dimensions and key that its ``qa.cache_checked`` and ``qa.cache_written`` name: an answer
filed under a question its run never asked, or a model profile or policy it did not run
with, is a divergence (kind ``cache``) at that event.

A cache hit names the seq of the ``qa.cache_written`` it served and the sha256 of the
answer it served; :func:`check_hit` holds both against the served run's history.

Pure: a run's history in, divergences out.
"""

from __future__ import annotations

from dataclasses import dataclass
from hashlib import sha256
from typing import Any

from aborist.audit.checks.run_events import RunEvents
from aborist.audit.findings import Divergence, clip
from aborist.events import AnswerVerified, CacheChecked, CacheWritten, RunCompleted, RunStarted
from aborist.pipeline.cache import recorded_key_dimensions

__all__ = ["CacheEntry", "HitClaim", "cache_entry", "check_cache_binding", "check_hit",
           "hit_claim"]  # fmt: skip

_SHAPE = (KeyError, TypeError, ValueError, AttributeError)


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """A run's one ``qa.cache_written``, as a hit served from it must match."""

    seq: int
    cache_key: str
    answer_hash: str
    audit_mode: str
    label: str


@dataclass(frozen=True, slots=True)
class HitClaim:
    """What a cache hit's ``qa.cache_checked`` and ``qa.run_completed`` say it served."""

    run_id: str
    seq: int  # the hit's qa.cache_checked
    served_from: str
    written_seq: object
    answer_hash: object
    cache_key: object
    audit_mode: object
    label: object


def _div(seq: int | None, run: str, stage: str, expected: object, found: object,
         detail: str) -> Divergence:  # fmt: skip
    return Divergence("cache", seq, run, stage, clip(expected), clip(found), detail)


def check_cache_binding(run: RunEvents) -> list[Divergence]:
    """The key dimensions and key of the run's cache check and cache write against the
    ones its own record implies: for a run whose history writes the cache or is served
    from it (the key of a run that does neither files and finds nothing)."""
    started = run.first(RunStarted.TYPE)
    checked = run.first(CacheChecked.TYPE)
    written = run.first(CacheWritten.TYPE)
    if started is None or checked is None:
        return []
    if written is None and not _is_hit(run.data(checked)):
        return []
    verified = run.first(AnswerVerified.TYPE)
    try:
        verdict = run.data(verified).get("verdict") if verified is not None else None
        want = recorded_key_dimensions(run.data(started), run.data(checked), verdict)
    except _SHAPE as e:
        return [
            _div(
                checked.seq,
                run.run_id,
                "cache",
                "key dimensions computable from the run's own record",
                f"{type(e).__name__}: {e}",
                "key_dimensions",
            )
        ]
    out: list[Divergence] = []
    for ev, stage in ((checked, "cache"), (written, "cache_write")):
        if ev is None:
            continue
        data = run.data(ev)
        dims = data.get("key_dimensions") if isinstance(data, dict) else None
        dims = dims if isinstance(dims, dict) else {}
        for name, value in want.items():
            found = data.get(name) if name == "cache_key" else dims.get(name)
            if found != value:
                where = name if name == "cache_key" else f"key_dimensions.{name}"
                out.append(
                    _div(
                        ev.seq,
                        run.run_id,
                        stage,
                        value,
                        found,
                        f"{where}, recomputed from the run's own record",
                    )
                )
                break
    return out


def _is_hit(data: Any) -> bool:
    return isinstance(data, dict) and data.get("hit") is True


def cache_entry(run: RunEvents) -> CacheEntry | None:
    """The run's cache entry (None when its history wrote none)."""
    ev = run.first(CacheWritten.TYPE)
    if ev is None:
        return None
    d: Any = run.data(ev)
    try:
        answer = sha256(str(d["answer"]).encode("utf-8")).hexdigest()
        return CacheEntry(ev.seq, str(d["cache_key"]), answer, str(d["audit_mode"]),
                          str(d["label"]))  # fmt: skip
    except _SHAPE:
        return None


def hit_claim(run: RunEvents) -> HitClaim | None:
    """What the run, a cache hit, says it served (None unless its history is a hit)."""
    checked = run.first(CacheChecked.TYPE)
    done = run.first(RunCompleted.TYPE)
    if checked is None or done is None:
        return None
    c, d = run.data(checked), run.data(done)
    if not (isinstance(c, dict) and isinstance(d, dict) and c.get("hit") is True):
        return None
    return HitClaim(run.run_id, checked.seq, str(c.get("hit_run_id")), c.get("hit_written_seq"),
                    c.get("hit_answer_hash"), c.get("cache_key"), d.get("audit_mode"),
                    d.get("label"))  # fmt: skip


def check_hit(hit: HitClaim, entry: CacheEntry | None) -> list[Divergence]:
    """``hit`` against the cache entry of the run it names (None: that run's history
    wrote none)."""
    rid, seq = hit.run_id, hit.seq
    if entry is None:
        return [
            _div(
                seq,
                rid,
                "cache",
                f"a {CacheWritten.TYPE} in run {hit.served_from}'s history",
                "none",
                "hit_run_id",
            )
        ]
    checks = (
        ("hit_written_seq", entry.seq, hit.written_seq),
        ("hit_answer_hash", entry.answer_hash, hit.answer_hash),
        ("cache_key", entry.cache_key, hit.cache_key),
    )
    for name, want, found in checks:
        if found != want:
            return [
                _div(
                    seq,
                    rid,
                    "cache",
                    want,
                    found,
                    f"{name} of the hit, against run {hit.served_from}'s cache write",
                )
            ]
    if entry.seq >= seq:
        return [
            _div(seq, rid, "cache", f"a cache write before seq {seq}", entry.seq, "hit_written_seq")
        ]
    for name, want, found in (("audit_mode", entry.audit_mode, hit.audit_mode),
                              ("label", entry.label, hit.label)):  # fmt: skip
        if found != want:
            return [
                _div(
                    seq,
                    rid,
                    "complete",
                    want,
                    found,
                    f"{name} of the hit, against run {hit.served_from}'s cache write",
                )
            ]
    return []
