"""The verifier's text primitives: canonical text and tokens, stems, sentences, and the
value anchors (numbers, dates, ordinals, quantities) a claim carries (docs/verifier.md
§1, §19.1–§19.4). Pure: the standard library only."""
