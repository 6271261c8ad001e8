"""The run: stages recorded one event each (:mod:`.run`), cache keys (:mod:`.keys`), the
answer cache (:mod:`.cache`), the run DAG (:mod:`.dag`), rendering (:mod:`.render`),
batches (:mod:`.batch`), and the two entry points :func:`~aborist.pipeline.query.query`
(many shards) and :func:`~aborist.pipeline.ask.ask` (one document); docs/pipeline.md."""
