"""A generic append-only, hash-chained event store (knows nothing of questions)."""
