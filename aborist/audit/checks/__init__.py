"""The ledger-wide and per-run checks `aborist-ledger replay` runs: the chain and the
stored tiles, checkpoints, each run's events and DAG, blobs, evidence links, the corpus
and cache bindings, and the projections (docs/replay.md)."""
