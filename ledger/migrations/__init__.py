"""The ledger's Alembic environment and its own migration branch (label ``ledger``):
events, blobs, checkpoints, projection positions and the triggers that keep them
append-only. An application adds its own branch through ``version_locations``
(:func:`ledger.migrate.upgrade`)."""

__all__: list[str] = []
