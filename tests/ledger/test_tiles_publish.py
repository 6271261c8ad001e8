"""publish DIR writes the static tlog-tiles layout that a client checks from the files
alone; export --sign writes the run's c2sp.org/tlog-proof@v1 beside its bundle."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.audit.ledger_cli import cli
from ledger.envelope import NewEvent
from ledger.errors import CheckpointError, MalformedNoteError
from ledger.store import Ledger
from ledger.tlog import merkle
from ledger.tlog.checkpoint_note import open_checkpoint
from ledger.tlog.note import parse_verifier_key
from ledger.tlog.tlog_proof import format_proof, parse_proof, verify_proof
from tests.audit.builders import build_ledger


def invoke(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    return result.stdout


def test_publish_the_static_layout(ledger_url: str, tmp_path: Path) -> None:
    lg = Ledger.open(ledger_url)
    try:
        for i in range(6):
            lg.append(f"s{i}", [NewEvent("test.happened", {"i": i, "j": j}) for j in range(100)])
        hashes = lg.event_hashes()
    finally:
        lg.close()
    key, site = tmp_path / "log.key", tmp_path / "site"
    invoke("keygen", "example.org/log", "--out", str(key))
    out = invoke("publish", str(site), "--sign", str(key), "--db", ledger_url)
    assert "published tree 600" in out
    files = sorted(str(p.relative_to(site)) for p in site.rglob("*") if p.is_file())
    assert files == [
        "checkpoint", "tile/0/000", "tile/0/001", "tile/0/002.p/88", "tile/1/000.p/2",
        "tile/entries/000", "tile/entries/001", "tile/entries/002.p/88",
    ]  # fmt: skip
    # A client with only the verifier key and the files.
    vkey = parse_verifier_key((tmp_path / "log.key.pub").read_text())
    cp = open_checkpoint((site / "checkpoint").read_text(), [vkey], origin="example.org/log")
    leaves = b"".join((site / f).read_bytes() for f in files if f.startswith("tile/0/"))
    leaf_hashes = [leaves[i : i + 32] for i in range(0, len(leaves), 32)]
    assert cp.body.size == len(leaf_hashes) == 600
    assert merkle.root_from_leaf_hashes(leaf_hashes) == cp.body.root
    level1 = (site / "tile/1/000.p/2").read_bytes()
    assert level1 == b"".join(
        merkle.root_from_leaf_hashes(leaf_hashes[i : i + 256]) for i in (0, 256)
    )
    bundles = b"".join((site / f).read_bytes() for f in files if f.startswith("tile/entries"))
    entries, pos = [], 0
    while pos < len(bundles):
        (n,) = struct.unpack(">H", bundles[pos : pos + 2])
        entries.append(bundles[pos + 2 : pos + 2 + n])
        pos += 2 + n
    assert entries == hashes and [merkle.leaf_hash(e) for e in entries] == leaf_hashes
    # Republishing keeps the full tiles and rewrites only the partial ones.
    again = json.loads(invoke("publish", str(site), "--sign", str(key), "--db", ledger_url,
                              "--json"))  # fmt: skip
    assert again["tiles_kept"] == 2 and again["tiles_written"] == 2


def test_tlog_proof_parse_errors() -> None:
    note = "o\n1\nAAAA\n\n— o AAAAAAAA\n"
    good = format_proof(0, [b"\x01" * 32], note, extra=b"x")
    parsed = parse_proof(good)
    assert (parsed.index, parsed.extra, parsed.note) == (0, b"x", note)
    for bad in [good.replace("c2sp.org/tlog-proof@v1", "v2"), good.replace("index 0", "index 00"),
                good.replace("\n\n", "\n"), good.replace("AQEB", "!!!!", 1)]:  # fmt: skip
        with pytest.raises(MalformedNoteError):
            parse_proof(bad)


def test_export_writes_a_tlog_proof(ledger_url: str, tmp_path: Path) -> None:
    built = build_ledger(ledger_url, tmp_path)
    try:
        key = tmp_path / "log.key"
        invoke("keygen", "example.org/ledger", "--out", str(key))
        bundle_file = tmp_path / "run.json"
        invoke("export", "--db", ledger_url, "--run", built.lattice, "-o", str(bundle_file),
               "--sign", str(key))  # fmt: skip
    finally:
        built.ledger.close()
    bundle = json.loads(bundle_file.read_text())
    proof_text = (tmp_path / "run.json.tlog-proof").read_text()
    assert proof_text.startswith("c2sp.org/tlog-proof@v1\nextra ")
    last = max(bundle["events"], key=lambda e: e["seq"])
    vkey = parse_verifier_key((tmp_path / "log.key.pub").read_text())
    cp = verify_proof(proof_text, bytes.fromhex(last["hash"]), [vkey])
    assert cp.body.size == bundle["checkpoint"]["tree_size"]
    assert parse_proof(proof_text).index == last["seq"] - 1
    with pytest.raises(CheckpointError, match="not at index"):
        verify_proof(proof_text, bytes.fromhex(bundle["events"][0]["hash"]), [vkey])
