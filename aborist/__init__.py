"""aborist: document Q&A whose every step is recorded in a hash-chained ledger."""

__version__ = "0.1.0"
