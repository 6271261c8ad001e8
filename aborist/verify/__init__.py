"""The verifier: pure functions of (answer, evidence, policy).

Claims are parsed (:mod:`.claims`), checked against evidence objects (:mod:`.evidence`)
by the strategies and warrants (:mod:`.strategies`, :mod:`.lattice`, :mod:`.warrant`),
rolled up into an audit mode and placed on the display ladder (:mod:`.ladder`);
:mod:`.inspect` diagnoses what did not verify. Nothing here touches a database, the
network, the clock or randomness: ``aborist-ledger replay --deep`` re-runs it and must
get the same bytes (docs/verifier.md).
"""
