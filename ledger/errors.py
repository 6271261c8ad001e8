"""The ledger's error tree. Every driver error is translated into one of these in
:mod:`ledger.store` (one place), so callers never see SQLAlchemy or psycopg types.

::

    LedgerError
     ├── PayloadError          payload not representable as RFC 8785 JSON, or bad stream name
     ├── ConfigurationError    malformed database URL or option
     ├── UnavailableError      database cannot be reached or opened
     ├── NotMigratedError      schema missing or behind; run `aborist-ledger migrate`
     ├── ConcurrencyError      expected stream position is stale; nothing was written
     ├── ImmutabilityError     an UPDATE / DELETE / TRUNCATE was refused by the triggers
     ├── BlobNotFoundError     no blob with that hash
     ├── ProofError            a Merkle proof was requested for impossible sizes
     ├── FoldError             a recorded event does not fold into a projection
     └── NoteError             a signed note, key or checkpoint that cannot be trusted
          ├── KeyFormatError        a verifier or signer key that is not well formed
          ├── MalformedNoteError    a note that breaks the signed-note grammar
          ├── UnverifiedNoteError   no signature from a known key (none, or unknown ones)
          ├── InvalidSignatureError a known key's signature does not verify
          └── CheckpointError       a checkpoint body that is malformed or not the one wanted
"""

from __future__ import annotations

__all__ = [
    "BlobNotFoundError",
    "ConcurrencyError",
    "ConfigurationError",
    "ImmutabilityError",
    "LedgerError",
    "NotMigratedError",
    "PayloadError",
    "ProofError",
    "UnavailableError",
]


class LedgerError(Exception):
    """Root of every error the ledger raises."""


class PayloadError(LedgerError, ValueError):
    """The event (payload, stream, type) cannot be recorded as given."""


class ConfigurationError(LedgerError):
    """A database URL or option is malformed."""


class UnavailableError(LedgerError):
    """The database server or file cannot be reached or opened."""


class NotMigratedError(LedgerError):
    """The database has no ledger schema, or an older one."""


class ConcurrencyError(LedgerError):
    """An append expected a stream position that is no longer current."""


class ImmutabilityError(LedgerError):
    """The database refused to change or remove a recorded row."""


class BlobNotFoundError(LedgerError, KeyError):
    """No blob is stored under the requested hash."""


class ProofError(LedgerError, ValueError):
    """A proof was requested for sizes or indices the tree does not have."""


class FoldError(LedgerError):
    """A projection could not fold recorded events (a payload of a shape it does not know,
    written around the library); the transaction folding them wrote nothing."""


class NoteError(LedgerError, ValueError):
    """A signed note, a key or a checkpoint that cannot be trusted (c2sp.org/signed-note)."""


class KeyFormatError(NoteError):
    """A verifier key or signer key that is not well formed, or whose key ID is wrong."""


class MalformedNoteError(NoteError):
    """A note that breaks the signed-note grammar."""


class UnverifiedNoteError(NoteError):
    """No signature on the note is from a known key."""


class InvalidSignatureError(NoteError):
    """A signature line names a known key but does not verify."""


class CheckpointError(NoteError):
    """A checkpoint body that is malformed (c2sp.org/tlog-checkpoint), or is not for the
    origin, size or root wanted."""
