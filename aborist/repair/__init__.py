"""Repair of broken quotes: mechanical fixes (:mod:`.mechanical`) and the re-prompt
fallback (:mod:`.repair`), behind the governance policy's ``repair_enabled``
(docs/repair.md)."""
