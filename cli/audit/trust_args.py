"""What replay, verify-bundle and verify-checkpoint share about a checkpoint the caller
trusts: ``--checkpoint FILE`` as a signed note (c2sp.org/tlog-checkpoint) checked with
``--key``, or as the JSON ``aborist-ledger checkpoint --json`` prints; ``--witness-key`` and
``--min-witnesses`` for a witness quorum; ``--state FILE`` for the client's verified state
(the three-way rule, saved only after the command's checks all held).

Every failure is one line on stderr and exit 1 (bad keys and files: usage errors, exit 2),
and the state file is left as it was.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import click

from cli.common import read_text_capped
from ledger.errors import LedgerError, NoteError
from ledger.jsonsafe import parse_json
from ledger.tlog.checkpoint_note import SignedCheckpoint, open_checkpoint
from ledger.tlog.client_state import ClientState, ConsistencyProver
from ledger.tlog.note import Verifier, parse_verifier_key

__all__ = [
    "TrustArgs",
    "bundle_prover",
    "ledger_prover",
    "log_origin",
    "read_keys",
    "trust_options",
]

F = TypeVar("F", bound=Callable[..., Any])


def log_origin() -> str | None:
    """``ABORIST_LOG_ORIGIN`` (aborist/settings.py); unset, a log's origin is its signing
    key's name."""
    from aborist.settings import load_settings

    return load_settings().log_origin


def read_keys(paths: Sequence[str], what: str) -> list[Verifier]:
    """Verifier keys from files (one key per non-empty line), or given inline as
    ``name+keyid+key`` when no such file exists."""
    keys: list[Verifier] = []
    for p in paths:
        path = Path(p)
        if not path.exists() and p.count("+") < 2:
            raise click.BadParameter(f"no {what} file {p}")
        try:
            lines = (
                read_text_capped(path, what, click.BadParameter).splitlines()
                if path.exists()
                else [p]
            )
        except (OSError, UnicodeDecodeError) as e:
            raise click.BadParameter(f"cannot read {what} {p}: {e}") from e
        lines = [ln.strip() for ln in lines if ln.strip()]
        if not lines:
            raise click.BadParameter(f"{what} {p} holds no key")
        for line in lines:
            try:
                keys.append(parse_verifier_key(line))
            except NoteError as e:
                where = f"{p}: " if path.exists() else ""
                raise click.BadParameter(f"{where}{e}") from e
    return keys


@dataclass
class TrustArgs:
    keys: tuple[str, ...] = ()
    witness_keys: tuple[str, ...] = ()
    min_witnesses: int = 0
    state_file: Path | None = None
    signed: SignedCheckpoint | None = None
    state: ClientState | None = field(default=None, repr=False)

    def open_note(self, text: str, where: str) -> SignedCheckpoint:
        """Verify ``text`` as a checkpoint note with the given keys (one line if not)."""
        if not self.keys:
            raise click.UsageError(f"{where} is a signed note: give the log's --key VKEYFILE")
        log_keys = read_keys(self.keys, "--key")
        witness_keys = read_keys(self.witness_keys, "--witness-key")
        try:
            return open_checkpoint(
                text, log_keys, origin=log_origin(), witness_keys=witness_keys,
                min_witnesses=self.min_witnesses,
            )  # fmt: skip
        except LedgerError as e:
            raise click.ClickException(f"{where}: {e}") from e

    def resolve(self, checkpoint_file: Path | None) -> dict[str, Any] | None:
        """The trusted checkpoint as ``{"tree_size", "root"}`` (what the audit functions
        take), from the file or else the state file; None when neither is given."""
        self._load_state()
        if checkpoint_file is None:
            if self.keys or self.witness_keys or self.min_witnesses:
                raise click.UsageError("--key and --witness-key need --checkpoint NOTE")
            return self._from_state()
        try:
            text = read_text_capped(checkpoint_file, "checkpoint", click.BadParameter)
        except (OSError, UnicodeDecodeError) as e:
            raise click.BadParameter(f"cannot read {checkpoint_file}: {e}") from e
        if not self.keys and not text.lstrip().startswith("{") and "\n\n— " not in text:
            raise click.BadParameter(
                f"{checkpoint_file}: neither a signed checkpoint note nor checkpoint JSON"
            )
        if text.lstrip().startswith("{"):
            if self.keys or self.state is not None:
                raise click.UsageError(
                    f"{checkpoint_file} is a JSON checkpoint, not a signed note: --key and "
                    "--state need a signed note (`aborist-ledger checkpoint --sign KEYFILE`)"
                )
            try:  # the bounded parse every file gets: no repeated key, no NaN, bounded depth
                data = parse_json(text, what="checkpoint file")
            except ValueError as e:
                raise click.BadParameter(f"{checkpoint_file}: not a checkpoint ({e})") from e
            if not isinstance(data, dict):
                raise click.BadParameter(f"{checkpoint_file}: a checkpoint must be an object")
            return data
        self.signed = self.open_note(text, str(checkpoint_file))
        return {"tree_size": self.signed.body.size, "root": self.signed.body.root_hex}

    def _load_state(self) -> None:
        if self.state_file is None:
            return
        try:
            self.state = ClientState(self.state_file)
        except NoteError as e:
            raise click.ClickException(str(e)) from e

    def _from_state(self) -> dict[str, Any] | None:
        if self.state is None:
            return None
        origin = log_origin()
        held = list(self.state.held.values())
        if origin is not None:
            held = [h for h in held if h.origin == origin]
        if len(held) != 1:
            raise click.UsageError(
                f"the state file holds {len(held)} checkpoint(s) for this log; give "
                "--checkpoint NOTE (or set ABORIST_LOG_ORIGIN)"
            )
        return {"tree_size": held[0].size, "root": held[0].root.hex()}

    def check_state(self, prove: ConsistencyProver) -> str | None:
        """The three-way rule against the state file (in memory; nothing written)."""
        if self.state is None or self.signed is None:
            return None
        try:
            return self.state.advance(self.signed, prove)
        except LedgerError as e:
            raise click.ClickException(f"{self.state_file}: {e}") from e

    def save_state(self) -> None:
        """Write the state file (call only after every check held)."""
        if self.state is None or self.signed is None:
            return
        try:
            self.state.save()
        except NoteError as e:
            raise click.ClickException(str(e)) from e


def trust_options(f: F) -> F:
    """Adds ``--key``, ``--witness-key``, ``--min-witnesses`` and ``--state`` to a command,
    passed to it as one ``trust: TrustArgs``."""

    @functools.wraps(f)
    def wrapper(
        *args: Any,
        trust_keys: tuple[str, ...],
        trust_witness_keys: tuple[str, ...],
        trust_min_witnesses: int,
        trust_state: Path | None,
        **kwargs: Any,
    ) -> Any:
        trust = TrustArgs(trust_keys, trust_witness_keys, trust_min_witnesses, trust_state)
        return f(*args, trust=trust, **kwargs)

    options = [
        click.option("--key", "trust_keys", multiple=True, metavar="VKEYFILE",
                     help="The log's verifier key (a file, or name+id+key); needed when "
                          "the checkpoint is a signed note. Repeatable."),
        click.option("--witness-key", "trust_witness_keys", multiple=True,
                     metavar="VKEYFILE", help="A witness's verifier key. Repeatable."),
        click.option("--min-witnesses", "trust_min_witnesses", type=click.IntRange(min=0),
                     default=0, metavar="N",
                     help="Require N valid cosignatures from the --witness-key keys."),
        click.option("--state", "trust_state", metavar="FILE",
                     type=click.Path(dir_okay=False, path_type=Path),
                     help="Verified state: the checkpoint must extend the one held "
                          "(consistency proof), and replaces it after success."),
    ]  # fmt: skip
    decorated: Callable[..., Any] = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return decorated  # type: ignore[return-value]


def ledger_prover(ledger: Any) -> ConsistencyProver:
    """Consistency proofs from a live ledger."""
    from ledger.tlog.proofs import consistency_path

    def prove(size1: int, size2: int) -> Sequence[bytes] | None:
        try:
            return consistency_path(ledger, size1, size2)
        except LedgerError:
            return None

    return prove


def bundle_prover(bundle: dict[str, Any]) -> ConsistencyProver:
    """Consistency proofs an export bundle carries (``consistency_proofs``)."""
    carried: dict[tuple[int, int], list[bytes]] = {}
    for p in bundle.get("consistency_proofs") or []:
        try:
            carried[(int(p["size1"]), int(p["size2"]))] = [bytes.fromhex(x) for x in p["proof"]]
        except (KeyError, TypeError, ValueError):
            continue

    def prove(size1: int, size2: int) -> Sequence[bytes] | None:
        return carried.get((size1, size2))

    return prove
