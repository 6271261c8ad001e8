"""The stored Merkle tiles (ledger/tlog/tiles.py) checked against the events: the one
re-derivation that ``aborist-ledger verify`` and ``aborist-ledger replay`` share.

Tiles are derived data, written only by :func:`ledger.tlog.tiles.integrate`, which stores
whole leaf tiles in one transaction. So the stored rows are always exactly the tiles
(levels 1 and up) of the tree of their first ``M`` events, ``M`` being the leaves the
last level-1 tile covers: a tile that differs, a missing tile below a stored one, a tile
no such tree has, or a tile covering events the ledger does not hold is a finding, named
by its level and index. Events after ``M`` are simply not integrated yet.

The check is a streaming fold (:func:`ledger.tlog.tiles.derive_tiles`) over the event hashes,
read in pages of ``seq`` and ``hash`` alone; each derived tile is compared with its row
as soon as it is complete, so memory stays O(256 x levels) whatever the ledger's size
(plus one hash per 256 events when the check is held to a chain check's roots).

That read is a second one: a database can answer it with another history's hashes than
the rows the chain check re-hashed. So a caller that ran the chain check first passes the
roots it folded from the hashes it verified (:attr:`ledger.chain.ChainReport.roots`, at
every multiple of 256), and the tree of the hashes read here must be the one they give at
the size the tiles cover; otherwise the finding is that read, not a tile.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ledger.rawtext import UndecodableText
from ledger.tlog import merkle
from ledger.tlog.tiles import TILE_HEIGHT, TILE_WIDTH, Fetch, derive_tiles, tile_path

__all__ = ["TileCheck", "TileFinding", "verify_tiles"]

HASH = merkle.HASH_SIZE
#: What a :attr:`TileFinding.reread` finding names instead of a tile.
REREAD = "the event hashes read for the tiles"
_PAGE = 10_000  # rows per read: memory stays that of one page, whatever the size


@dataclass(frozen=True, slots=True)
class TileFinding:
    """One stored tile that is not the tile the events give at its place."""

    level: int
    index: int
    expected: str
    found: str
    #: The first event whose leaf the differing part of the tile covers.
    first_seq: int
    #: The finding is not a tile but the read of the event hashes the tiles were checked
    #: against: it gave another tree than the events the chain check verified.
    reread: bool = False

    @property
    def tile(self) -> str:
        return REREAD if self.reread else tile_path(self.level, self.index)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tile": self.tile,
            "level": self.level,
            "index": self.index,
            "expected": self.expected,
            "found": self.found,
            "seq": self.first_seq,
        }


@dataclass(slots=True)
class TileCheck:
    """What :func:`verify_tiles` checked: stored tiles that matched, the events they
    cover, and the first finding (``None`` when every stored tile held)."""

    checked: int = 0
    covered: int = 0
    failure: TileFinding | None = None
    #: Whether the hashes the tiles were compared with were held to the chain check's
    #: roots (``verified`` given, and the chain verified as far as the tiles reach).
    held: bool = False

    @property
    def ok(self) -> bool:
        return self.failure is None


def _first_seq(level: int, index: int, position: int = 0) -> int:
    return ((index << TILE_HEIGHT) + position) * (1 << (TILE_HEIGHT * level)) + 1


def _finding(level: int, index: int, found: str, position: int = 0) -> TileFinding:
    return TileFinding(
        level, index, "the tile derived from the events", found, _first_seq(level, index, position)
    )


def _malformed(blob: object) -> str | None:
    if isinstance(blob, UndecodableText):  # TEXT the driver could not read (SQLite)
        return f"stored as TEXT ({blob.reason}), not bytes"
    if not isinstance(blob, bytes | bytearray | memoryview):
        return f"stored as {type(blob).__name__}, not bytes"
    if not len(blob) or len(blob) % HASH:
        return f"{len(blob)} bytes, not a whole number of hashes"
    return None


class _NotHex(Exception):
    def __init__(self, seq: int) -> None:
        super().__init__(seq)
        self.seq = seq


def _event_hashes(fetch: Fetch, last: int) -> Iterator[bytes]:
    """The hashes of events ``1..last``, in pages of ``seq`` and ``hash`` alone."""
    after = 0
    while after < last:
        upto = min(after + _PAGE, last)
        rows = fetch(
            "SELECT seq, hash FROM events WHERE seq > :a AND seq <= :b ORDER BY seq",
            {"a": after, "b": upto},
        )
        for seq, h in rows:
            try:
                yield bytes.fromhex(str(h))
            except ValueError:
                raise _NotHex(int(seq)) from None
        after = upto


def _compare(level: int, n: int, want: list[bytes], blob: object) -> TileFinding | None:
    if blob is None:
        return _finding(level, n, "no row")
    bad = _malformed(blob)
    if bad is not None:
        return _finding(level, n, bad)
    got = _hashes(blob)
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        if g != w:
            return _finding(level, n, f"hash {i} is {g.hex()}, not {w.hex()}", i)
    if len(got) != len(want):
        return _finding(level, n, f"{len(got)} hashes where the events give {len(want)}")
    return None


def _hashes(blob: object) -> list[bytes]:
    """The hashes of a well-formed tile row (:func:`_malformed` found nothing wrong)."""
    have = bytes(blob)  # type: ignore[call-overload]
    return [have[i : i + HASH] for i in range(0, len(have), HASH)]


def _grown(want: list[bytes], blob: object, fetch: Fetch, covered: int) -> bool:
    """Is the stored tile ``want`` followed by more hashes, because an honest writer
    appended events since the tiles were first read? Only when the stored tiles now cover
    more than ``covered`` events (within the ledger's head): the hashes past ``want`` are
    of those later events, which this check does not claim (the next one does)."""
    if blob is None or _malformed(blob) is not None:
        return False
    got = _hashes(blob)
    if len(got) <= len(want) or got[: len(want)] != want:
        return False
    now = _covered(fetch, _stored_levels(fetch))
    return isinstance(now, int) and now > covered


def _stored_levels(fetch: Fetch) -> dict[int, tuple[int, int]]:
    """level -> (rows, highest index) of the stored tiles."""
    rows = fetch("SELECT level, COUNT(*), MAX(idx) FROM merkle_tiles GROUP BY level", {})
    return {int(r[0]): (int(r[1]), int(r[2])) for r in rows}


def _covered(fetch: Fetch, levels: dict[int, tuple[int, int]]) -> int | TileFinding:
    """The events the stored tiles cover (the last level-1 tile's reach), or the finding
    that the last level-1 tile is malformed or reaches past the ledger's head."""
    if 1 not in levels:
        return 0
    last = levels[1][1]
    blob = fetch("SELECT hashes FROM merkle_tiles WHERE level = 1 AND idx = :n", {"n": last})[0][0]
    bad = _malformed(blob)
    if bad is not None:
        return _finding(1, last, bad)
    covered = (last * TILE_WIDTH + len(blob) // HASH) * TILE_WIDTH
    rows = fetch("SELECT MAX(seq) FROM events", {})
    head = int(rows[0][0]) if rows and rows[0][0] is not None else 0
    if covered > head:
        return TileFinding(
            1,
            last,
            f"tiles of at most the {head} events the ledger holds",
            f"a tile that covers {covered} events",
            _first_seq(1, last),
        )
    return covered


def verify_tiles(fetch: Fetch, verified: Mapping[int, str] | None = None) -> TileCheck:
    """Check every stored tile against the events (``fetch`` runs ``:name`` SQL on the
    ledger). Stops at the first finding. ``verified``: the roots (hex, by size) a chain
    check folded from the hashes it re-hashed; the hashes read here must give its root at
    the size the tiles cover (:attr:`TileCheck.held`), else a ``reread`` finding."""
    check = TileCheck()
    levels = _stored_levels(fetch)
    if not levels:
        return check
    covered = _covered(fetch, levels)
    if isinstance(covered, TileFinding):
        check.failure = covered
        return check
    check.covered = covered
    derived: dict[int, int] = {}  # level -> highest index derived
    blocks: list[bytes] = []  # the level-1 hashes: roots of the 256-event blocks read
    try:
        for level, n, want in derive_tiles(_event_hashes(fetch, covered)):
            if level == 0:
                continue
            if level == 1:
                blocks.extend(want)
            derived[level] = n
            rows = fetch(
                "SELECT hashes FROM merkle_tiles WHERE level = :l AND idx = :n",
                {"l": level, "n": n},
            )
            stored = rows[0][0] if rows else None
            check.failure = _compare(level, n, want, stored)
            if check.failure is not None and _grown(want, stored, fetch, covered):
                check.failure = None  # a writer appended since: its part is not checked here
            if check.failure is not None:
                return check
            check.checked += 1
    except _NotHex as e:
        idx = (e.seq - 1) >> (2 * TILE_HEIGHT)
        check.failure = TileFinding(
            1, idx, "event hashes of 64 hex digits", f"the hash of seq {e.seq}", e.seq
        )
        return check
    check.failure = _extra(fetch, levels, derived)
    mine = verified.get(covered) if verified is not None else None
    if check.failure is None and mine is not None:
        # the tree of a multiple of 256 leaves splits only between whole blocks, so the
        # block roots fold to it as leaf hashes would
        read = merkle.root_from_leaf_hashes(blocks).hex()
        if read != mine:
            check.failure = TileFinding(
                1, 0, f"the tree of the {covered} events the chain check verified ({mine})",
                f"another tree of size {covered} ({read}): the database answered two reads "
                "differently", 1, reread=True,
            )  # fmt: skip
        check.held = True
    return check


def _extra(
    fetch: Fetch, levels: dict[int, tuple[int, int]], derived: dict[int, int]
) -> TileFinding | None:
    """A stored tile outside the derived tree (every tile inside it has been compared)."""
    for level, (count, _) in sorted(levels.items()):
        top = derived.get(level, -1)
        if count == top + 1:
            continue
        rows = fetch(
            "SELECT idx FROM merkle_tiles WHERE level = :l AND (idx < 0 OR idx > :d) "
            "ORDER BY idx LIMIT 1",
            {"l": level, "d": top},
        )
        idx = int(rows[0][0]) if rows else top + 1
        return TileFinding(
            level,
            idx,
            f"no tile there (the events give {top + 1} at level {level})",
            "a stored tile",
            _first_seq(max(level, 0), max(idx, 0)),
        )
    return None
