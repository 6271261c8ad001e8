"""The `aborist-ledger` commands: verify, replay, audit reports and bundles, the
transparency log's checkpoints and proofs, witnesses and the client's trust arguments
(docs/cli.md)."""
