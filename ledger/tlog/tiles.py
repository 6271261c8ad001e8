"""The Merkle tree stored as tiles (c2sp.org/tlog-tiles), so that a checkpoint, an
inclusion proof or a consistency proof reads O(log n) rows.

A tile at tile level ``L`` and index ``N`` holds up to 256 hashes; hash ``i`` is
``MTH(D[(N*256 + i) * 256**L : (N*256 + i + 1) * 256**L])`` (RFC 9162 §2.1.1). Level 0
(the leaf hashes) is not stored: a leaf tile is the hashes of 256 consecutive events, one
indexed read of the events table. Levels 1 and up are rows of ``merkle_tiles``; the right
edge of each level is a partial tile, rewritten as it grows.

Any complete subtree ``(h, k)`` (the ``2**h`` leaves from ``k * 2**h``) is then the root of
``2**(h mod 8)`` consecutive hashes of one tile at level ``h div 8``, and any range the
RFC 9162 proof algorithms use is a fold of at most ``log2 n`` complete subtrees
(:meth:`Tree.range_hash`). :func:`integrate` adds every full leaf tile not yet stored; the
checkpoint runs it first. Tiles are derived data: :func:`derive_tiles` recomputes them
from the events for ``aborist-ledger verify`` and ``publish``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from ledger.errors import ProofError
from ledger.tlog import merkle

__all__ = [
    "TILE_HEIGHT",
    "TILE_WIDTH",
    "Tree",
    "derive_tiles",
    "integrate",
    "integrated",
    "ledger_tree",
    "open_tree",
    "tile_path",
]

TILE_HEIGHT = 8
TILE_WIDTH = 1 << TILE_HEIGHT
HASH = merkle.HASH_SIZE
PG_INTEGRATE_LOCK_KEY = 0x74696C65  # "tile": serializes integrators on PostgreSQL

Fetch = Callable[[str, dict[str, Any]], list[tuple[Any, ...]]]


def _split_hashes(blob: bytes) -> list[bytes]:
    return [blob[i : i + HASH] for i in range(0, len(blob), HASH)]


def _mth(hashes: list[bytes]) -> bytes:
    return merkle.root_from_leaf_hashes(hashes)


def tile_path(level: int, index: int, width: int = TILE_WIDTH) -> str:
    """``tile/<L>/<N>[.p/<W>]`` with N in 3-digit groups, all but the last prefixed ``x``."""
    digits = f"{index:03d}"
    groups: list[str] = []
    while len(digits) > 3:
        groups.insert(0, digits[-3:])
        digits = digits[:-3]
    groups.insert(0, digits.zfill(3))
    n = "/".join([*(f"x{g}" for g in groups[:-1]), groups[-1]])
    return f"tile/{level}/{n}" + ("" if width == TILE_WIDTH else f".p/{width}")


class Tree:
    """The tree of the first ``size`` leaves, read through ``fetch`` (``:name`` SQL).

    Leaf tiles come from ``events``, higher tiles from ``merkle_tiles``; both are cached
    for the object's life, so one proof reads each row once."""

    def __init__(self, fetch: Fetch, size: int) -> None:
        self.fetch = fetch
        self.size = size
        self._leaves: dict[int, list[bytes]] = {}
        self._tiles: dict[tuple[int, int], list[bytes]] = {}
        self._nodes: dict[tuple[int, int], bytes] = {}

    # -- rows -------------------------------------------------------------------------

    def leaf_tile(self, n: int) -> list[bytes]:
        if n not in self._leaves:
            lo, hi = n * TILE_WIDTH, min((n + 1) * TILE_WIDTH, self.size)
            rows = self.fetch(
                "SELECT hash FROM events WHERE seq > :a AND seq <= :b ORDER BY seq",
                {"a": lo, "b": hi},
            )
            self._leaves[n] = [merkle.leaf_hash(bytes.fromhex(str(r[0]))) for r in rows]
        return self._leaves[n]

    def tile(self, level: int, n: int) -> list[bytes]:
        if level == 0:
            return self.leaf_tile(n)
        if (level, n) not in self._tiles:
            rows = self.fetch(
                "SELECT hashes FROM merkle_tiles WHERE level = :l AND idx = :n",
                {"l": level, "n": n},
            )
            self._tiles[(level, n)] = _split_hashes(bytes(rows[0][0])) if rows else []
        return self._tiles[(level, n)]

    # -- nodes ------------------------------------------------------------------------

    def node(self, height: int, k: int) -> bytes:
        """MTH of the complete subtree of ``2**height`` leaves starting at ``k * 2**height``."""
        found = self._nodes.get((height, k))
        if found is not None:
            return found
        if (k + 1) << height > self.size:
            raise ProofError(f"subtree ({height}, {k}) is not within a tree of {self.size}")
        level, r = divmod(height, TILE_HEIGHT)
        first = k << r
        entries = self.tile(level, first >> TILE_HEIGHT)
        off = first & (TILE_WIDTH - 1)
        part = entries[off : off + (1 << r)]
        if len(part) != 1 << r:
            raise ProofError(
                f"tile {level}/{first >> TILE_HEIGHT} holds {len(entries)} hashes, too few "
                f"for subtree ({height}, {k}): run `aborist-ledger checkpoint` to integrate "
                "the tree, or `aborist-ledger verify`"
            )
        self._nodes[(height, k)] = node = _mth(part)
        return node

    def range_hash(self, lo: int, hi: int) -> bytes:
        """MTH(D[lo:hi]) for a range the RFC 9162 recursion visits (``lo`` a multiple of
        the largest power of two not above ``hi - lo``): the fold of its decomposition
        into complete subtrees, largest first."""
        if lo >= hi:
            raise ProofError(f"empty range {lo}..{hi}")
        nodes = []
        pos = lo
        while pos < hi:
            h = (hi - pos).bit_length() - 1
            while pos & ((1 << h) - 1):
                h -= 1
            nodes.append(self.node(h, pos >> h))
            pos += 1 << h
        acc = nodes[-1]
        for left in reversed(nodes[:-1]):
            acc = merkle.node_hash(left, acc)
        return acc

    # -- RFC 9162 ---------------------------------------------------------------------

    def root(self, size: int | None = None) -> bytes:
        size = self.size if size is None else size
        self._within(size)
        return merkle.EMPTY_ROOT if size == 0 else self.range_hash(0, size)

    def leaf(self, index: int) -> bytes:
        self._within(index + 1)
        return self.leaf_tile(index >> TILE_HEIGHT)[index & (TILE_WIDTH - 1)]

    def inclusion(self, index: int, size: int | None = None) -> list[bytes]:
        """PATH(index, D[size]) (RFC 9162 §2.1.3.1), leaf side first."""
        size = self.size if size is None else size
        self._within(size)
        if not 0 <= index < size:
            raise ProofError(f"leaf index must be within 0..{size - 1}, found {index}")
        path: list[bytes] = []
        lo, hi = 0, size
        while hi - lo > 1:
            k = 1 << ((hi - lo - 1).bit_length() - 1)
            if index < lo + k:
                path.append(self.range_hash(lo + k, hi))
                hi = lo + k
            else:
                path.append(self.range_hash(lo, lo + k))
                lo += k
        path.reverse()
        return path

    def consistency(self, size1: int, size2: int | None = None) -> list[bytes]:
        """PROOF(size1, D[size2]) (RFC 9162 §2.1.4.1), for 0 < size1 <= size2."""
        size2 = self.size if size2 is None else size2
        self._within(size2)
        if not 0 < size1 <= size2:
            raise ProofError(f"size1 must be within 1..{size2} (size2), found {size1}")
        tail: list[bytes] = []
        lo, hi, m, known = 0, size2, size1, True
        while m != hi - lo:
            k = 1 << ((hi - lo - 1).bit_length() - 1)
            if m <= k:
                tail.append(self.range_hash(lo + k, hi))
                hi = lo + k
            else:
                tail.append(self.range_hash(lo, lo + k))
                lo, m, known = lo + k, m - k, False
        head = [] if known else [self.range_hash(lo, hi)]
        return head + tail[::-1]

    def _within(self, size: int) -> None:
        if not 0 <= size <= self.size:
            raise ProofError(f"tree size must be within 0..{self.size}, found {size}")


# -- integration ----------------------------------------------------------------------


def _last_tiles(fetch: Fetch) -> dict[int, tuple[int, list[bytes]]]:
    rows = fetch(
        "SELECT t.level, t.idx, t.hashes FROM merkle_tiles t JOIN "
        "(SELECT level, MAX(idx) AS idx FROM merkle_tiles GROUP BY level) m "
        "ON t.level = m.level AND t.idx = m.idx",
        {},
    )
    return {int(r[0]): (int(r[1]), _split_hashes(bytes(r[2]))) for r in rows}


def integrated_leaves(fetch: Fetch) -> int:
    """Leaves covered by stored tiles: 256 per hash at tile level 1."""
    last = _last_tiles(fetch).get(1)
    return 0 if last is None else (last[0] * TILE_WIDTH + len(last[1])) * TILE_WIDTH


def _integrate(tx: Any, head: int) -> int:
    """Store every full leaf tile of the first ``head`` leaves not stored yet; returns
    how many leaf tiles were added. Runs inside the caller's write transaction."""
    fetch: Fetch = tx.execute
    last = _last_tiles(fetch)
    level1 = last.get(1)
    done = 0 if level1 is None else level1[0] * TILE_WIDTH + len(level1[1])  # leaf tiles
    target = head // TILE_WIDTH
    if target <= done:
        return 0
    edge = {
        level: (idx + 1, []) if len(entries) == TILE_WIDTH else (idx, entries)
        for level, (idx, entries) in last.items()
    }
    written: dict[tuple[int, int], list[bytes]] = {}

    def extend(level: int, new: list[bytes]) -> None:
        idx, entries = edge.get(level, (0, []))
        entries = list(entries)
        parents = []
        for h in new:
            entries.append(h)
            if len(entries) == TILE_WIDTH:
                written[(level, idx)] = entries
                parents.append(_mth(entries))
                idx, entries = idx + 1, []
        edge[level] = (idx, entries)
        if entries:
            written[(level, idx)] = entries
        if parents:
            extend(level + 1, parents)

    batch = 64
    for start in range(done, target, batch):
        stop = min(start + batch, target)
        rows = tx.execute(
            "SELECT hash FROM events WHERE seq > :a AND seq <= :b ORDER BY seq",
            {"a": start * TILE_WIDTH, "b": stop * TILE_WIDTH},
        )
        leaves = [merkle.leaf_hash(bytes.fromhex(str(r[0]))) for r in rows]
        if len(leaves) != (stop - start) * TILE_WIDTH:
            raise ProofError(
                f"events {start * TILE_WIDTH + 1}..{stop * TILE_WIDTH}: found {len(leaves)} "
                "rows; the ledger has a gap (run `aborist-ledger verify`)"
            )
        extend(1, [_mth(leaves[i : i + TILE_WIDTH]) for i in range(0, len(leaves), TILE_WIDTH)])
    tx.executemany(
        "INSERT INTO merkle_tiles (level, idx, hashes) VALUES (:l, :n, :h) "
        "ON CONFLICT (level, idx) DO UPDATE SET hashes = excluded.hashes",
        [{"l": lv, "n": n, "h": b"".join(e)} for (lv, n), e in sorted(written.items())],
    )
    return target - done


@contextmanager
def integrated(ledger: Any, *, durable: bool = False) -> Iterator[tuple[Any, int, bytes]]:
    """Bring the stored tiles up to the ledger's head in one write transaction, and
    yield ``(tx, size, root)`` of the whole tree as it is now, inside that transaction: a
    checkpoint is recorded in the same transaction (one commit, and its root is of that
    head). ``durable`` as for the ledger's writer."""
    from ledger.store import translate_errors

    with translate_errors(ledger.where), ledger._writer.transaction(durable=durable) as tx:
        if ledger.engine.dialect.name == "postgresql":
            tx.execute("SELECT pg_advisory_xact_lock(:k)", {"k": PG_INTEGRATE_LOCK_KEY})
        rows = tx.execute("SELECT seq FROM events ORDER BY seq DESC LIMIT 1")
        head = int(rows[0][0]) if rows else 0
        _integrate(tx, head)
        yield tx, head, Tree(tx.execute, head).root()


def integrate(ledger: Any) -> tuple[int, bytes]:
    """Bring the stored tiles up to the ledger's head and return ``(size, root)`` of the
    whole tree as it is now (:func:`integrated`)."""
    with integrated(ledger) as (_, head, root):
        return head, root


def ledger_tree(ledger: Any, size: int) -> Tree:
    """The tree of the first ``size`` events, integrating first if the stored tiles do
    not reach that far."""
    from ledger.store import translate_errors

    with translate_errors(ledger.where):
        rows = ledger.fetch("SELECT seq FROM events ORDER BY seq DESC LIMIT 1", {})
    head = int(rows[0][0]) if rows else 0
    if size > head:
        raise ProofError(f"the ledger has {head} events, fewer than {size}")
    with translate_errors(ledger.where):
        if integrated_leaves(ledger.fetch) < size - size % TILE_WIDTH:
            integrate(ledger)
    return Tree(ledger.fetch, size)


@contextmanager
def open_tree(ledger: Any, size: int) -> Iterator[Tree]:
    """Like :func:`ledger_tree`, but every read runs in one read-only transaction on the
    ledger's held connection (one snapshot, and on PostgreSQL no transaction per
    statement). Use only the tree's ``fetch`` inside the block."""
    from ledger.store import translate_errors

    for attempt in range(2):
        with translate_errors(ledger.where), ledger._writer.transaction(read_only=True) as tx:
            rows = tx.execute("SELECT seq FROM events ORDER BY seq DESC LIMIT 1")
            head = int(rows[0][0]) if rows else 0
            if size > head:
                raise ProofError(f"the ledger has {head} events, fewer than {size}")
            if attempt or integrated_leaves(tx.execute) >= size - size % TILE_WIDTH:
                yield Tree(tx.execute, size)
                return
        integrate(ledger)


# -- re-derivation ----------------------------------------------------------------------


def derive_tiles(event_hashes: Iterable[bytes]) -> Iterator[tuple[int, int, list[bytes]]]:
    """Every tile (level, index, hashes) of the tree over ``event_hashes``, level 0
    included, each yielded once in its final form (full, or the partial right edge at the
    end). Memory stays O(256 * levels). The leaves are hashed in a loop of their own and
    the levels above are folded once per full leaf tile (the fold that ``verify``,
    ``replay`` and ``publish`` share, so it is kept cheap per event)."""
    edge: dict[int, list[bytes]] = {}
    index: dict[int, int] = {}

    def push(level: int, h: bytes) -> Iterator[tuple[int, int, list[bytes]]]:
        entries = edge.setdefault(level, [])
        entries.append(h)
        if len(entries) == TILE_WIDTH:
            n = index.get(level, 0)
            yield level, n, entries
            index[level] = n + 1
            edge[level] = []
            yield from push(level + 1, _mth(entries))

    sha256, prefix = merkle._sha256, merkle.LEAF_PREFIX
    leaves: list[bytes] = []
    n0 = 0
    for eh in event_hashes:
        leaves.append(sha256(prefix + eh).digest())
        if len(leaves) == TILE_WIDTH:
            yield 0, n0, leaves
            n0 += 1
            yield from push(1, _mth(leaves))
            leaves = []
    if leaves:
        yield 0, n0, leaves
    for level in sorted(edge):
        if edge[level]:
            yield level, index.get(level, 0), edge[level]
