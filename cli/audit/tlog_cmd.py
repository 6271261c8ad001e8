"""``aborist-ledger keygen``, ``verify-checkpoint`` and the signing half of
``checkpoint --sign``: checkpoints as C2SP signed notes (docs/ledger-format.md,
"Signed checkpoints").

The private key lives in a file of mode 0600 and is never printed nor stored in the
ledger; its verifier key (``KEYFILE.pub``) is what an auditor needs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from cli.audit.trust_args import TrustArgs, ledger_prover, log_origin, trust_options
from cli.common import clean_errors, db_option, emit_json, json_option
from ledger.errors import LedgerError, NoteError
from ledger.store import Checkpoint
from ledger.tlog.checkpoint_note import CheckpointBody, sign_checkpoint
from ledger.tlog.note import (
    ALG_COSIGNATURE_V1,
    ALG_ED25519,
    Signer,
    generate_signer,
    read_signer_file,
)

__all__ = ["keygen", "read_signer", "signed_note", "verify_checkpoint"]


def read_signer(path: Path, *, alg: int | None = None) -> Signer:
    """The signer key in ``path`` (``PRIVATE+KEY+…``); one line on failure, never the key."""
    try:
        return read_signer_file(path, alg=alg)
    except NoteError as e:
        raise click.BadParameter(str(e)) from e


def signed_note(cp: Checkpoint, key_file: Path) -> str:
    """``cp`` as a checkpoint note signed with the log key in ``key_file``."""
    signer = read_signer(key_file)
    if signer.alg != ALG_ED25519:
        raise click.BadParameter(f"{key_file} is a witness key; a log signs with an Ed25519 key")
    origin = log_origin() or signer.name
    if origin != signer.name:
        raise click.ClickException(
            f"{key_file} is the key of {signer.name!r}, but ABORIST_LOG_ORIGIN is {origin!r}"
        )
    try:
        return sign_checkpoint(CheckpointBody(origin, cp.tree_size, bytes.fromhex(cp.root)), signer)
    except LedgerError as e:
        raise click.ClickException(str(e)) from e


def _write_new(path: Path, text: str, mode: int, force: bool) -> None:
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if force else os.O_EXCL)
    try:
        fd = os.open(path, flags, mode)
    except FileExistsError as e:
        raise click.ClickException(f"{path} exists; not overwriting it (use --force)") from e
    except OSError as e:
        raise click.ClickException(f"cannot write {path}: {e.strerror}") from e
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        os.fchmod(f.fileno(), mode)
        f.write(text)


@click.command("keygen")
@click.argument("name", metavar="ORIGIN")
@click.option("--out", "out", required=True, metavar="KEYFILE",
              type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the private key (mode 0600); the verifier key goes to "
                   "KEYFILE.pub.")  # fmt: skip
@click.option("--witness", is_flag=True,
              help="A witness key (cosignature v1, type 0x04) instead of a log key.")  # fmt: skip
@click.option("--force", is_flag=True, help="Overwrite existing key files.")
def keygen(name: str, out: Path, witness: bool, force: bool) -> None:
    """Generate an Ed25519 key pair for signing checkpoints (or, with --witness,
    cosigning them).

    ORIGIN is the key name: for a log, the origin line of its checkpoints (a schema-less
    URL such as example.com/ledger). Keys use Go's note formats, so any C2SP tool reads
    them. The private key is never printed.

    Example: aborist-ledger keygen example.com/ledger --out log.key
    """
    try:
        signer = generate_signer(name, alg=ALG_COSIGNATURE_V1 if witness else ALG_ED25519)
    except NoteError as e:
        raise click.BadParameter(str(e)) from e
    pub = out.with_name(out.name + ".pub")
    if not force and pub.exists():
        raise click.ClickException(f"{pub} exists; not overwriting it (use --force)")
    _write_new(out, signer.skey() + "\n", 0o600, force)
    _write_new(pub, signer.verifier().vkey() + "\n", 0o644, True)
    click.echo(f"wrote {out} (private, mode 0600) and {pub}:")
    click.echo(signer.verifier().vkey())


@click.command("verify-checkpoint")
@click.argument("note_file", metavar="NOTE",
                type=click.Path(exists=True, dir_okay=False, path_type=Path))  # fmt: skip
@trust_options
@db_option
@json_option
def verify_checkpoint(note_file: Path, trust: TrustArgs, db_url: str | None, as_json: bool) -> None:
    """Check a signed checkpoint against this ledger.

    The log's signature (--key), the origin (ABORIST_LOG_ORIGIN, else the key's name),
    any witness quorum (--witness-key, --min-witnesses), and that this ledger's events of
    that size, re-hashed and chained from the first, fold to that root. With --state, the
    checkpoint must also extend the verified state (consistency proof), which it then
    replaces. Events after its size are named as not covered by it. Exit 0 when all
    held, 1 naming the first failure.

    Example: aborist-ledger verify-checkpoint cp.note --key log.key.pub --state state.json
    """
    from cli.audit.ledger_cli import open_ledger
    from ledger.verify import rehashed_root

    if not trust.keys:
        raise click.UsageError("give the log's verifier key: --key VKEYFILE")
    trusted = trust.resolve(note_file)
    signed = trust.signed
    if signed is None or trusted is None:
        raise click.UsageError(f"{note_file} is not a signed note")
    body = signed.body
    with open_ledger(db_url) as lg, clean_errors():
        head, _ = lg.head()
        if body.size > head:
            raise click.ClickException(
                f"{note_file}: checkpoint of size {body.size}, but this ledger has {head} events"
            )
        root = rehashed_root(lg, body.size)
        if isinstance(root, str):
            raise click.ClickException(
                f"{note_file}: the events of tree size {body.size} do not verify, so no "
                f"root is checked ({root})"
            )
        if root != body.root:
            raise click.ClickException(
                f"{note_file}: this ledger's tree of size {body.size} has root {root.hex()}, "
                f"the checkpoint says {body.root.hex()}"
            )
        outcome = trust.check_state(ledger_prover(lg))
    trust.save_state()
    after = [body.size + 1, head] if head > body.size else None  # events it does not cover
    if as_json:
        covered = [1, body.size] if body.size else None
        emit_json({"ok": True, "checkpoint": signed.to_dict(), "state": outcome,
                   "covered": covered, "unanchored": after})  # fmt: skip
        return
    signers = ", ".join(f"{s.name}+{s.key_id:08x}" for s in signed.note.sigs)
    click.echo(f"ok   signature by {signers}")
    click.echo(f"ok   origin {body.origin}")
    click.echo(
        f"ok   tree size {body.size} has root {body.root.hex()}: events 1..{body.size} "
        "re-hashed and chained"
    )
    if signed.witnesses or trust.min_witnesses:
        names = ", ".join(w.name for w in signed.witnesses) or "none"
        click.echo(f"ok   {len(signed.witnesses)} witness cosignature(s): {names}")
    if outcome is not None:
        click.echo(f"ok   state {trust.state_file}: {outcome}")
    if after is not None:
        n = head - body.size
        span = (
            f"events {after[0]}–{head} ({n}) of this ledger come after this checkpoint; it "
            "does not vouch for them"
            if n > 1
            else f"event {head} of this ledger comes after this checkpoint; it does not "
            "vouch for it"
        )
        click.echo(f"note not anchored: {span}")
    sys.exit(0)


@click.command("publish")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option("--sign", "key_file", required=True, metavar="KEYFILE",
              type=click.Path(dir_okay=False, path_type=Path),
              help="The log key that signs the published checkpoint.")  # fmt: skip
@db_option
@json_option
def publish(directory: Path, key_file: Path, db_url: str | None, as_json: bool) -> None:
    """Write the ledger's tree as a static tlog-tiles log under DIR.

    Records a checkpoint, then writes DIR/checkpoint (the signed note), DIR/tile/L/N
    (Merkle tiles, partial ones as N.p/W) and DIR/tile/entries/N (the event hashes), so
    any c2sp.org/tlog-tiles client can fetch and verify the log. Full tiles already in
    DIR are kept; the checkpoint is written last.

    Example: aborist-ledger publish site/log --sign log.key
    """
    from cli.audit.ledger_cli import open_ledger
    from ledger.tlog.proofs import checkpoint as make_checkpoint
    from ledger.tlog.publish import publish as publish_log

    read_signer(key_file)
    with open_ledger(db_url) as lg, clean_errors():
        cp = make_checkpoint(lg)
        note = signed_note(cp, key_file)
        counts = publish_log(lg, cp.tree_size, note, directory)
    if as_json:
        emit_json({"tree_size": cp.tree_size, "root": cp.root, "directory": str(directory),
                   **counts})  # fmt: skip
        return
    click.echo(
        f"published tree {cp.tree_size} ({cp.root}) to {directory}: "
        f"{counts['tiles_written']} tiles written, {counts['tiles_kept']} kept, "
        f"{counts['bundles_written']} entry bundles"
    )


def write_tlog_proof(bundle: dict[str, object], key_file: Path, path: Path) -> None:
    """The run's c2sp.org/tlog-proof@v1 beside its bundle: the inclusion proof of the run's
    last event (whose hash chains every earlier event) and the signed checkpoint."""
    from cli.common import write_text
    from ledger.tlog.tlog_proof import format_proof

    cp_data = bundle["checkpoint"]
    proofs = bundle["inclusion_proofs"]
    assert isinstance(cp_data, dict) and isinstance(proofs, list)
    cp = Checkpoint(int(cp_data["tree_size"]), str(cp_data["root"]), "")
    last = max(proofs, key=lambda p: int(p["seq"]))
    note = signed_note(cp, key_file)
    text = format_proof(
        int(last["leaf_index"]), [bytes.fromhex(h) for h in last["proof"]], note,
        extra=f"aborist run {bundle['run_id']} seq {last['seq']}".encode(),
    )  # fmt: skip
    write_text(path, text)
