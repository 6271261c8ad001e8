"""The verifier's rules over passages: local support and polarity, the roles and rivals
of a bare answer, comparisons, substitutions and role swaps, coreference, contradiction
and the anchor-class warrants (docs/verifier.md §10–§11, §19). Pure: the standard library
and the verifier's own modules."""
