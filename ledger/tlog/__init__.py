"""The transparency log over the event store: RFC 6962 Merkle trees and proofs, the stored
tiles, signed notes and checkpoints (C2SP), witnesses and the client's trust state
(docs/ledger-format.md)."""
