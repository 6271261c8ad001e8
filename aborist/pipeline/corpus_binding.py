"""A run may read a shard only if this ledger recorded its source root (docs/corpus.md,
"What binds a corpus to the ledger").

Three links tie the text the verifier sees to the ledger: each chunk's text hashes to the
``chunk_hash`` stored beside it (checked per used chunk, :mod:`aborist.pipeline.run`); the
stored chunk hashes hash to the shard file's root (:func:`aborist.corpus.shard.chunk_root`,
remembered per file identity by :func:`aborist.pipeline.query.shard_info`); and that root
was recorded by a ``corpus.shard_ingested`` event of this ledger (here). A shard built with
``--no-ledger``, copied from another machine, or edited after ingest fails the last link
and is refused, unless the caller says otherwise; the run's ``qa.cache_checked`` then
lists it under ``unrecorded_shards`` and replay flags the run as "corpus not recorded".

Which roots a ledger recorded is remembered per :class:`~ledger.store.Ledger` object: a
recorded root stays recorded (the ledger is append-only), so a root seen once costs no
query again, and an unknown one reads only the ingest events appended since the last look
(``events.type`` is indexed).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field

from aborist.errors import CorpusError
from ledger.store import Ledger

__all__ = ["UnrecordedShardError", "check_recorded", "recorded_roots"]

INGEST_EVENT = "corpus.shard_ingested"


class UnrecordedShardError(CorpusError):
    """A shard's source root was never recorded by an ingest into this ledger."""


@dataclass
class _Known:
    position: int = 0
    roots: set[str] = field(default_factory=set)


_KNOWN: weakref.WeakKeyDictionary[Ledger, _Known] = weakref.WeakKeyDictionary()


def recorded_roots(ledger: Ledger, wanted: set[str]) -> set[str]:
    """Which of ``wanted`` some ``corpus.shard_ingested`` of ``ledger`` records."""
    known = _KNOWN.get(ledger)
    if known is None:
        known = _KNOWN[ledger] = _Known()
    if not wanted <= known.roots:
        for ev in ledger.read(gt=known.position, types=[INGEST_EVENT]):
            known.position = max(known.position, ev.seq)
            try:
                root = ev.data.get("source_root")
            except (ValueError, AttributeError, RecursionError):
                continue  # not a payload ingest writes; it records nothing
            if isinstance(root, str):
                known.roots.add(root)
    return wanted & known.roots


def check_recorded(ledger: Ledger, roots: Mapping[str, str], *, allow: bool) -> list[str]:
    """The names in ``roots`` (shard name -> source root) whose root ``ledger`` never
    recorded, sorted. Unless ``allow``, any such shard raises
    :class:`UnrecordedShardError` naming it."""
    found = recorded_roots(ledger, set(roots.values()))
    missing = sorted(name for name, root in roots.items() if root not in found)
    if missing and not allow:
        name = missing[0]
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise UnrecordedShardError(
            f"shard {name!r} (source root {roots[name][:16]}…){more} was not recorded by an "
            "ingest into this ledger (built with --no-ledger, copied from elsewhere, or "
            "changed after ingest): re-ingest it, or pass --allow-unrecorded-shards to "
            "answer from it anyway (the run records that)"
        )
    return missing
