"""Break the bundle check, then mend it: a bundle exported from a real ledger (SQLite and
PostgreSQL) and edited after export in ways ``verify-bundle`` used to accept ("everything
held") or crash on. Each is now a failure naming its check:

- ``ledger_format`` other than the integer 1 (``"1"``, ``2``): nothing else would tell
  that the hashes were checked by the rules of another format;
- a field no check reads, at the top or in an event: the report must not seem to vouch
  for it;
- an inclusion proof whose stated ``leaf_index`` / ``tree_size`` is not the place it is
  verified at (``seq − 1`` in the checkpoint's tree);
- a payload edited into text that is not JSON (was a ``JSONRefusedError`` traceback from
  the blob check), and a ``seq`` beyond the I-JSON range (was a ``PayloadError``
  traceback from the event hash);
- an inclusion proof for a seq that is no event of the bundle (carried unchecked);
- a blob no event of the run references (carried at its true address, it verified as
  one of the run's blobs).
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aborist.audit.bundle import export_run, verify_bundle
from cli.audit.audit_cmd import verify_bundle as verify_bundle_command
from cli.audit.ledger_cli import cli
from tests.audit.conftest import Audited

if verify_bundle_command.name not in cli.commands:
    cli.add_command(verify_bundle_command)


@pytest.fixture(scope="module")
def bundle(audited: Audited) -> Iterator[dict[str, Any]]:
    b = export_run(audited.built.ledger, audited.built.lattice)
    assert verify_bundle(b).ok
    yield b


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(b: dict[str, Any]) -> None:
        target = b
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return edit


def _not_json(b: dict[str, Any]) -> None:
    e = b["events"][3]
    e["payload"] = e["payload"][:-2] + "!" + e["payload"][-1]


def _twice(b: dict[str, Any]) -> None:
    b["inclusion_proofs"].append(dict(b["inclusion_proofs"][0], proof=[]))


def _stray_proof(b: dict[str, Any]) -> None:
    """An inclusion proof for a seq that is no event of the bundle: nothing checked it."""
    b["inclusion_proofs"].append(dict(b["inclusion_proofs"][0], seq=1, leaf_index=0))


def _upper_root(b: dict[str, Any]) -> None:
    b["checkpoint"]["root"] = b["checkpoint"]["root"].upper()


def _unreferenced_blob(b: dict[str, Any]) -> None:
    """A text carried with the run that no event references, at its true address: it
    verified ("24 blobs"), as if it were part of what the run read."""
    text = b"The Silverrun River is 9 kilometres long."
    b["blobs"][hashlib.sha256(text).hexdigest()] = base64.b64encode(text).decode("ascii")


EDITS: dict[str, tuple[Callable[[dict[str, Any]], None], str, str]] = {
    "ledger_format_text": (_set(("ledger_format",), "1"), "format", "ledger_format"),
    "ledger_format_2": (_set(("ledger_format",), 2), "format", "ledger_format"),
    "unknown_field": (_set(("verified",), True), "format", "unknown field"),
    "event_unknown_field": (_set(("events", 0, "note"), "trust me"), "format", "shape"),
    "leaf_index": (_set(("inclusion_proofs", 0, "leaf_index"), -1), "inclusion", "stated place"),
    "proof_tree_size": (_set(("inclusion_proofs", 1, "tree_size"), 1), "inclusion", "stated place"),
    "payload_not_json": (_not_json, "events", "payload_hash"),
    "seq_beyond_ijson": (_set(("events", 0, "seq"), 2**64), "events", "hash"),
    # the nested objects are closed too: a field no check reads, a proof given twice for
    # one seq (only one would be checked), a root or a timestamp not as the ledger writes it
    "checkpoint_field": (_set(("checkpoint", "witnessed_by"), "3 witnesses"), "format", "shape"),
    "proof_field": (_set(("inclusion_proofs", 0, "verified"), True), "format", "shape"),
    "proof_twice": (_twice, "format", "shape"),
    "proof_of_no_event": (_stray_proof, "inclusion", "no event of the bundle"),
    "created_at_text": (
        _set(("checkpoint", "created_at"), "1999-01-01 (notarised)"),
        "format",
        "shape",
    ),
    "root_upper": (_upper_root, "format", "shape"),
    "unreferenced_blob": (_unreferenced_blob, "blob", "referenced by no event"),
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_edited_bundle_is_a_failure(bundle: dict[str, Any], name: str, tmp_path: Path) -> None:
    edit, kind, detail = EDITS[name]
    b = copy.deepcopy(bundle)
    edit(b)
    report = verify_bundle(b)
    assert not report.ok
    first = report.first
    assert first is not None and first.kind == kind, report.to_dict()
    assert detail in first.detail, first
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(b), encoding="utf-8")
    result = CliRunner().invoke(cli, ["verify-bundle", str(path)])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"FAIL {kind}" in result.output
