"""Alembic environment and versions, shipped with the package for `aborist-ledger migrate`."""
