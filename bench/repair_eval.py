"""Measure the mechanical repair stage (docs/repair.md) on damaged answers built from real data.

Data: ClapNQ dev answerable (``../shared/data/clapnq/clapnq_dev_answerable.jsonl``, 300
rows). Each row's passage is the only evidence object; its annotated
``selected_sentences`` are sentences of that passage, so quoting them verbatim gives a
STRICT answer. A row is used when its clean answer — each of its first two selected
sentences (without a double quote) as a quotation line ``"<sentence>" [E1]`` — verifies
STRICT. Each clean answer is then damaged in one way:

* ``elision`` — the first quotation loses its middle third, replaced by ``[...]``;
* ``trailing`` — `` (Source: <passage title>)`` is appended inside the first quotation;
* ``invented`` — a line quoting the first selected sentence of another row (150 rows on,
  a different passage) is appended;
* ``all three`` — the three damages in one answer.

Every other answer uses typographic quotation marks (“…”) instead of straight ones, so the
repair has to find the diagnosed (canonical) span in raw text.

Claim-lattice answers (``<sentence> [E1]`` per line) get the ``trailing`` (outside any
quotation) and ``invented`` damages.

For each damaged answer: verify, then ``repair_answer`` (inspect → mechanical repair →
re-verify → accept if not worse). Reported per damage kind: answers built; those the
sidecar diagnosed as *mechanically repairable* (every diagnosis a mechanical kind); of
those, the share promoted to STRICT; repairs rejected by the accept rule; and accepted
repairs whose verdict is worse than before (fewer verified units, lower audit_mode or lower
ladder rung; target 0). Clean answers are run through the stage too (control: no change).

Run: ``.venv/bin/python bench/repair_eval.py [--data DIR]``. Nothing is tuned here.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aborist.repair.repair import MECHANICAL_KINDS, RepairOutcome, repair_answer  # noqa: E402
from aborist.verify.evidence import EvidenceObject, build_evidence  # noqa: E402
from aborist.verify.verify import Verdict, verify_answer  # noqa: E402

DEFAULT_DATA = ROOT / ".." / "shared" / "data"
AUDIT_RANK = {"UNGROUNDED": 0, "HYBRID": 1, "STRICT": 2}
LABEL_RANK = {"UNSUPPORTED": 0, "PARTIAL": 1, "SUPPORTED": 2, "VERIFIED": 3}


@dataclass(frozen=True)
class Case:
    question: str
    title: str
    evidence: list[EvidenceObject]
    sentences: list[str]
    invented: str
    curly: bool


@dataclass
class Tally:
    built: int = 0
    mechanical: int = 0
    promoted: int = 0
    accepted: int = 0
    rejected: int = 0
    worse: int = 0
    other_kinds: Counter[str] = field(default_factory=Counter)


def worse(pre: Verdict, post: Verdict) -> bool:
    return (
        post.n_verified < pre.n_verified
        or AUDIT_RANK[post.audit_mode] < AUDIT_RANK[pre.audit_mode]
        or LABEL_RANK[post.label] < LABEL_RANK[pre.label]
    )


def load_cases(data: Path) -> list[Case]:
    path = data / "clapnq" / "clapnq_dev_answerable.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    firsts = [
        next(iter(r["output"][0]["selected_sentences"]), "") if r["output"] else "" for r in rows
    ]
    cases: list[Case] = []
    for i, row in enumerate(rows):
        passage = row["passages"][0]
        selected = [s.strip() for s in row["output"][0]["selected_sentences"] if '"' not in s]
        invented = firsts[(i + 150) % len(rows)].strip()
        if not selected or not invented or '"' in invented:
            continue
        evidence = build_evidence([{"text": passage["text"], "title": passage["title"]}])
        curly = len(cases) % 2 == 1
        cases.append(Case(row["input"], passage["title"], evidence, selected[:2], invented, curly))
    return cases


def quote_answer(lines: list[str]) -> str:
    return "\n".join(f'"{s}" [E1]' for s in lines)


def elide(sentence: str) -> str:
    words = sentence.split()
    third = len(words) // 3
    return " ".join([*words[:third], "[...]", *words[len(words) - third :]])


def damage_quote(kind: str, case: Case) -> str:
    first, rest = case.sentences[0], case.sentences[1:]
    lines: list[str] = []
    if kind in ("elision", "all three"):
        lines.append(f'"{elide(first)}" [E1]')
    if kind in ("trailing", "all three"):
        lines.append(f'"{first} (Source: {case.title})" [E1]')
    if kind == "invented":
        lines.append(f'"{first}" [E1]')
    body = "\n".join([*lines, *(f'"{s}" [E1]' for s in rest)])
    if kind in ("invented", "all three"):
        body += f'\n"{case.invented}" [E1]'
    # every other answer uses typographic quotes, which the repair must locate in raw text
    return body.replace('" [E1]', "” [E1]").replace('"', "“") if case.curly else body


def damage_lattice(kind: str, case: Case) -> str:
    first, rest = case.sentences[0], case.sentences[1:]
    head = f"{first} (Source: {case.title}) [E1]" if kind == "trailing" else f"{first} [E1]"
    body = "\n".join([head, *(f"{s} [E1]" for s in rest)])
    if kind == "invented":
        body += f"\n{case.invented} [E1]"
    return body


def run(
    cases: list[Case], mode: str, kinds: tuple[str, ...], build: Callable[[str, Case], str]
) -> tuple[dict[str, Tally], dict[str, Any]]:
    tallies = {k: Tally() for k in kinds}
    control = {"clean": 0, "changed": 0, "seconds": 0.0, "calls": 0}
    for case in cases:
        clean = (
            quote_answer(case.sentences)
            if mode == "quote"
            else "\n".join(f"{s} [E1]" for s in case.sentences)
        )
        clean_verdict = verify_answer(clean, case.evidence, question=case.question, mode=mode)
        if clean_verdict.audit_mode != "STRICT":
            continue
        control["clean"] += 1
        ctl = repair_answer(clean, case.evidence, clean_verdict, question=case.question, mode=mode)
        control["changed"] += ctl.text != clean
        for kind in kinds:
            answer = build(kind, case)
            pre = verify_answer(answer, case.evidence, question=case.question, mode=mode)
            t0 = time.process_time()
            out: RepairOutcome = repair_answer(
                answer, case.evidence, pre, question=case.question, mode=mode
            )
            control["seconds"] += time.process_time() - t0
            control["calls"] += 1
            tally = tallies[kind]
            tally.built += 1
            diag_kinds = {d.kind for d in out.diagnoses}
            repairable = bool(diag_kinds) and diag_kinds <= set(MECHANICAL_KINDS)
            tally.other_kinds.update(diag_kinds - set(MECHANICAL_KINDS))
            tally.mechanical += repairable
            tally.accepted += out.accepted
            tally.rejected += out.reason == "rejected_worse"
            tally.worse += out.accepted and worse(pre, out.verdict)
            tally.promoted += repairable and out.accepted and out.verdict.audit_mode == "STRICT"
    return tallies, control


def pct(k: int, n: int) -> str:
    return f"{k / n:.1%} ({k}/{n})" if n else "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--quick", action="store_true", help="the first 40 usable rows")
    args = parser.parse_args()
    if not (args.data / "clapnq" / "clapnq_dev_answerable.jsonl").is_file():
        print(f"data not found under {args.data} (need clapnq/)", file=sys.stderr)
        return 0 if args.quick else 2
    cases = load_cases(args.data)[: 40 if args.quick else None]
    runs = [
        ("quote", ("elision", "trailing", "invented", "all three"), damage_quote),
        ("claim-lattice", ("trailing", "invented"), damage_lattice),
    ]
    print(
        "| mode | damage | built | mechanically repairable | promoted to STRICT "
        "(of repairable) | accepted | rejected by accept rule | accepted and worse |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    notes: list[str] = []
    for mode, kinds, build in runs:
        tallies, control = run(cases, mode, kinds, build)
        for kind, t in tallies.items():
            cells = [
                mode,
                kind,
                str(t.built),
                pct(t.mechanical, t.built),
                pct(t.promoted, t.mechanical),
                str(t.accepted),
                str(t.rejected),
                str(t.worse),
            ]
            print("| " + " | ".join(cells) + " |")
            if t.other_kinds:
                other = ", ".join(f"{k} {n}" for k, n in sorted(t.other_kinds.items()))
                notes.append(f"{mode}/{kind}: non-mechanical diagnoses: {other}")
        ms = 1000 * control["seconds"] / max(control["calls"], 1)
        notes.append(
            f"{mode}: clean STRICT answers {control['clean']}, changed by the stage "
            f"{control['changed']}; repair_answer {ms:.2f} ms CPU per damaged answer"
        )
    print()
    print(f"ClapNQ dev answerable: {len(cases)} usable rows.")
    for note in notes:
        print(f"- {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
