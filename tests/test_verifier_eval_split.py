"""bench/verifier_eval.py splits faithful answers into those copied word for word from the
evidence (which rung 1 promises to verify) and reworded ones (which it does not)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "verifier_eval", ROOT / "bench" / "verifier_eval.py"
    )
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


EV = [
    {"pointer_id": "E1", "text": "The museum opened in 1902 in Bergen. Its founder was Anna Holm."}
]


def test_copied_lines_are_verbatim_and_reworded_ones_are_not() -> None:
    b = _bench()
    assert b._verbatim("The museum opened in 1902 in Bergen. [E1]", EV)
    assert b._verbatim("its founder was “Anna Holm”", EV)
    assert b._verbatim("The museum opened in 1902 in Bergen.\nIts founder was Anna Holm.", EV)
    assert not b._verbatim("Anna Holm founded the museum.", EV)
    assert not b._verbatim("The museum opened in 1902 in Bergen.\nIt closed in 1950.", EV)


def test_pairs_reports_both_kinds_of_faithful_answer(tmp_path: Path) -> None:
    b = _bench()
    rows = [
        {
            "id": "a-f",
            "kind": "faithful",
            "question": "When did the museum open?",
            "answer": "The museum opened in 1902 in Bergen.",
            "evidence": EV,
        },
        {
            "id": "b-f",
            "kind": "faithful",
            "question": "Who founded the museum?",
            "answer": "Anna Holm founded the museum.",
            "evidence": EV,
        },
        {
            "id": "b-c",
            "kind": "corrupted",
            "corruption": "swapped_entity",
            "question": "Who founded the museum?",
            "answer": "Its founder was Bergen.",
            "evidence": EV,
        },
    ]
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    dist = b.pairs(path, b.DEFAULT_POLICY)
    assert dist is not None
    assert sum(dist["faithful: verbatim"].values()) == 1
    assert dist["faithful: verbatim"]["VERIFIED"] == 1
    assert sum(dist["faithful: reworded"].values()) == 1
    assert dist["faithful: reworded"]["VERIFIED"] == 0
    assert sum(dist["faithful"].values()) == 2
