"""The ``aborist`` branch's revision scripts (the pipeline's read models)."""
