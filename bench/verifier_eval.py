"""Measure the verifier on real data and print Markdown tables.

* HaluEval QA one-turn (``../shared/data/halueval/qa_one-turn_data.json``, 500 rows): the
  ``knowledge`` text is the only evidence; each answer is verified as a prose answer
  (quote mode) with the row's question. Reports, for right and for hallucinated answers,
  the label table and the share *vouched for* (rung 1 or 2) and STRICT.
* WiCE claim dev (``../shared/data/wice/claim_dev.jsonl``, 349 claims): the claim against
  its evidence sentences (one evidence object per sentence), quote mode; label table per
  gold label.
* Pairs (``bench/data/pairs.jsonl`` when it exists; fields ``answer``, ``evidence``,
  ``question``, ``kind`` faithful|corrupted, ``corruption``): corrupted vouched, faithful
  STRICT; a row's ``mode`` (default quote) is honoured. ``--pairs PATH`` reads another
  file. Skipped (with a line saying so) when the file is absent.
* ``--windows 1,2,3``: the headline rates again for each ``support_window_sentences``;
  ``--sweep FIELD=V1,V2`` the same for any policy field (a trade-off table).
* Throughput: a 5-claim claim-lattice answer over ~60 KB of evidence (ten 6 KB objects
  built from the HaluEval knowledge texts), verifications per CPU-second (one core,
  single-threaded, memo caches cleared before every call), evidence objects built once
  (as the pipeline does); also quote mode, and the evidence rebuilt every call.

Run: ``.venv/bin/python bench/verifier_eval.py [--data DIR] [--seconds N] [--windows 1,2,3]``;
``--quick`` runs 60 HaluEval rows, 60 WiCE claims and a short throughput loop, and still
checks that the numbers it prints are computed (exit 1 if a check fails).
No tuning happens here; thresholds come from the default ``VerifierPolicy``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aborist.verify.evidence import build_evidence, clear_memo  # noqa: E402
from aborist.verify.policy import DEFAULT_POLICY, VerifierPolicy  # noqa: E402
from aborist.verify.verify import verify_answer  # noqa: E402

DEFAULT_DATA = ROOT / ".." / "shared" / "data"
PAIRS = ROOT / "bench" / "data" / "pairs.jsonl"
LABELS = ("VERIFIED", "SUPPORTED", "PARTIAL", "UNSUPPORTED")


def _rows(path: Path, limit: int | None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return rows[:limit] if limit else rows


def pct(k: int | float, n: int | float) -> str:
    return f"{k / n:.1%} ({int(k)})" if n else "-"


def _table(counter: Counter[str]) -> str:
    n = sum(counter.values())
    return ", ".join(f"{lab} {pct(counter[lab], n)}" for lab in LABELS)


def _vouched(c: Counter[str]) -> int:
    return c["VERIFIED"] + c["SUPPORTED"]


def halueval(data: Path, policy: VerifierPolicy, limit: int | None) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = {"right": Counter(), "right_nonpolar": Counter()}
    out["hallucinated"] = Counter()
    for row in _rows(data / "halueval" / "qa_one-turn_data.json", limit):
        ev = build_evidence([row["knowledge"]])
        q = row["question"]
        right = verify_answer(row["right_answer"], ev, policy, question=q).label
        out["right"][right] += 1
        if row["right_answer"].strip().lower().rstrip(".") not in {"yes", "no"}:
            out["right_nonpolar"][right] += 1
        halluc = verify_answer(row["hallucinated_answer"], ev, policy, question=q).label
        out["hallucinated"][halluc] += 1
    return out


def wice(data: Path, policy: VerifierPolicy, limit: int | None) -> dict[str, Counter[str]]:
    dist: dict[str, Counter[str]] = {}
    for row in _rows(data / "wice" / "claim_dev.jsonl", limit):
        ev = build_evidence([s for s in row["evidence"] if s.strip()])
        label = verify_answer(row["claim"], ev, policy).label
        dist.setdefault(row["label"], Counter())[label] += 1
    return dist


_TAG = re.compile(r"\[E\d+\]")
_QUOTES = str.maketrans("", "", "\"'“”‘’`*")


def _flat(text: str) -> str:
    return " ".join(text.translate(_QUOTES).lower().split())


def _verbatim(answer: str, evidence: list[Any]) -> bool:
    """Is every line of ``answer`` (pointer tags, quote and emphasis marks, case and spacing
    aside, and a final full stop) a piece of the evidence's text? The split of faithful
    answers the tables report: copied ones, which rung 1 promises to verify, and reworded
    ones, which it does not (docs/verifier.md §13)."""
    texts = _flat(" ".join(e["text"] if isinstance(e, dict) else str(e) for e in evidence))
    lines = [_flat(_TAG.sub("", ln)).rstrip(".") for ln in answer.splitlines()]
    return all(ln in texts for ln in lines if ln)


def pairs(path: Path, policy: VerifierPolicy) -> dict[str, Counter[str]] | None:
    if not path.is_file():
        return None
    dist: dict[str, Counter[str]] = {}
    for row in _rows(path, None):
        ev = build_evidence(row["evidence"])
        mode = row.get("mode", "quote")
        label = verify_answer(
            row["answer"], ev, policy, question=row.get("question"), mode=mode
        ).label
        dist.setdefault(row["kind"], Counter())[label] += 1
        if row["kind"] == "faithful":
            how = "verbatim" if _verbatim(row["answer"], row["evidence"]) else "reworded"
            dist.setdefault(f"faithful: {how}", Counter())[label] += 1
        if row["kind"] == "corrupted":
            dist.setdefault("corrupted: " + str(row.get("corruption", "?")), Counter())[label] += 1
    return dist


def throughput(data: Path, seconds: float) -> dict[str, Any]:
    rows = _rows(data / "halueval" / "qa_one-turn_data.json", None)
    texts: list[str] = []
    buf = ""
    for row in rows:
        buf += row["knowledge"] + "\n"
        if len(buf) >= 6000:
            texts.append(buf)
            buf = ""
        if len(texts) == 10:
            break
    size = sum(len(t.encode()) for t in texts)
    evidence = build_evidence(texts)
    claims = []
    for i in range(5):
        # the first sentence of a knowledge text inside evidence object i
        sentence = rows[i * 7]["knowledge"].split(". ")[0].replace("\n", " ").strip()
        owner = next(k for k, t in enumerate(texts) if sentence in t)
        claims.append(f"{sentence}. [E{owner + 1}]")
    answer = "\n".join(claims)
    verdict = verify_answer(answer, evidence, mode="claim-lattice")

    def rate(fn: Callable[[], object], clock: Callable[[], float] = time.process_time) -> float:
        # Clear the memo caches before every call so no result is reused across calls:
        # each call pays for canonicalizing and tokenizing its answer (cold). The rate is
        # per CPU-second of this process (time.process_time), i.e. "on one core".
        n, start = 0, clock()
        while clock() - start < seconds:
            clear_memo()
            fn()
            n += 1
        return n / (clock() - start)

    prebuilt = rate(lambda: verify_answer(answer, evidence, mode="claim-lattice"))
    wall = rate(lambda: verify_answer(answer, evidence, mode="claim-lattice"), time.perf_counter)
    quote_answer = " ".join(c.rsplit(" [", 1)[0] for c in claims)
    prose = rate(lambda: verify_answer(quote_answer, evidence))
    rebuilt = rate(lambda: verify_answer(answer, build_evidence(texts), mode="claim-lattice"))
    return {
        "evidence_bytes": size,
        "n_units": verdict.n_units,
        "label": verdict.label,
        "lattice_per_s": prebuilt,
        "lattice_wall_per_s": wall,
        "quote_per_s": prose,
        "rebuild_per_s": rebuilt,
    }


def _print(table: Iterable[tuple[str, ...]]) -> None:
    print("| benchmark | measure | result | target |")
    print("|---|---|---|---|")
    for row in table:
        print("| " + " | ".join(row) + " |")


def quality_rows(
    h: dict[str, Counter[str]], w: dict[str, Counter[str]], p: dict[str, Counter[str]] | None
) -> list[tuple[str, ...]]:
    n = sum(h["right"].values())
    hal, right, nonpolar = h["hallucinated"], h["right"], h["right_nonpolar"]
    nn = sum(nonpolar.values())
    rows: list[tuple[str, ...]] = [
        (
            f"HaluEval QA (n={n})",
            "hallucinated vouched (rung 1-2)",
            pct(_vouched(hal), n),
            "<= 10 %",
        ),
        (f"HaluEval QA (n={n})", "hallucinated STRICT", pct(hal["VERIFIED"], n), "<= 0.5 %"),
        (
            f"HaluEval QA (n={n})",
            f"right non-yes/no STRICT (n={nn})",
            pct(nonpolar["VERIFIED"], nn),
            ">= 98 %",
        ),
        (f"HaluEval QA (n={n})", "right answers, all labels", _table(right), "-"),
        (f"HaluEval QA (n={n})", "hallucinated answers, all labels", _table(hal), "-"),
    ]
    targets = {"supported": ">= 30 %", "partially_supported": "<= 15 %", "not_supported": "<= 4 %"}
    for label in ("supported", "partially_supported", "not_supported"):
        c = w.get(label, Counter())
        total = sum(c.values())
        rows.append(
            (
                "WiCE claim dev",
                f"{label} vouched (n={total})",
                pct(_vouched(c), total),
                targets[label],
            )
        )
        rows.append(("WiCE claim dev", f"{label}, all labels", _table(c), "-"))
    if p is None:
        rows.append(("pairs", "pairs file absent: skipped", "-", "-"))
    else:
        for kind in sorted(p):
            c = p[kind]
            total = sum(c.values())
            if kind == "faithful":
                rows.append(
                    ("pairs", f"faithful STRICT (n={total})", pct(c["VERIFIED"], total), ">= 95 %")
                )
            elif kind == "faithful: verbatim":
                rows.append(
                    (
                        "pairs",
                        f"faithful copied word for word, STRICT (n={total})",
                        pct(c["VERIFIED"], total),
                        ">= 95 %",
                    )
                )
            elif kind == "corrupted":
                rows.append(
                    ("pairs", f"corrupted vouched (n={total})", pct(_vouched(c), total), "<= 5 %")
                )
            rows.append(("pairs", f"{kind}, all labels", _table(c), "-"))
    return rows


def sweep(
    args: argparse.Namespace,
    policy: VerifierPolicy,
    limit: int | None,
    field: str,
    values: list[str],
) -> None:
    """Print the headline rates for each value of one policy field (a trade-off table)."""
    print()
    print(
        f"| {field} | HaluEval halluc. vouched | halluc. STRICT | right non-yes/no STRICT "
        "| WiCE supported vouched | partially vouched | not_supported vouched "
        "| pairs corrupted vouched | faithful STRICT |"
    )
    print("|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for value in values:
        pol = VerifierPolicy(**{**policy.model_dump(), field: value})
        hh, ww = halueval(args.data, pol, limit), wice(args.data, pol, limit)
        pp = pairs(args.pairs, pol)
        n, nn = sum(hh["right"].values()), sum(hh["right_nonpolar"].values())
        cells = [
            pct(_vouched(hh["hallucinated"]), n),
            pct(hh["hallucinated"]["VERIFIED"], n),
            pct(hh["right_nonpolar"]["VERIFIED"], nn),
        ]
        for label in ("supported", "partially_supported", "not_supported"):
            c = ww.get(label, Counter())
            cells.append(pct(_vouched(c), sum(c.values())))
        for kind, key in (("corrupted", "v"), ("faithful", "s")):
            c = pp.get(kind, Counter()) if pp else Counter()
            hit = _vouched(c) if key == "v" else c["VERIFIED"]
            cells.append(pct(hit, sum(c.values())))
        print(f"| {value} | " + " | ".join(cells) + " |")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--windows", default="", help="comma-separated window sizes to compare")
    parser.add_argument(
        "--sweep",
        action="append",
        default=[],
        metavar="FIELD=V1,V2,...",
        help="the headline rates again for each value of a VerifierPolicy field (repeatable)",
    )
    parser.add_argument("--quick", action="store_true", help="a few seconds; still checked")
    parser.add_argument("--pairs", type=Path, default=PAIRS, help="faithful/corrupted pairs")
    parser.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="override a VerifierPolicy field for the quality rows (repeatable)",
    )
    args = parser.parse_args()
    try:
        overrides = dict(item.split("=", 1) for item in args.policy)
        policy = VerifierPolicy(**{**DEFAULT_POLICY.model_dump(), **overrides})
    except ValueError as e:
        print(f"bad --policy: {e}".splitlines()[0], file=sys.stderr)
        return 2
    if not (args.data / "halueval").is_dir() or not (args.data / "wice").is_dir():
        print(f"data not found under {args.data} (need halueval/ and wice/)", file=sys.stderr)
        return 0 if args.quick else 2
    if args.pairs != PAIRS and not args.pairs.is_file():
        # a pairs file asked for by name is measured or refused, never skipped
        print(f"pairs file not found: {args.pairs}", file=sys.stderr)
        return 2
    limit = 60 if args.quick else None
    seconds = 0.3 if args.quick else args.seconds
    h = halueval(args.data, policy, limit)
    w = wice(args.data, policy, limit)
    p = pairs(args.pairs, policy)
    if overrides:
        print(f"policy overrides: {overrides}\n")
    t = throughput(args.data, seconds)
    table = quality_rows(h, w, p)
    kb = t["evidence_bytes"] / 1024
    where = f"{t['n_units']} claims, {kb:.0f} KB evidence"
    table += [
        (
            "Throughput",
            f"claim-lattice, {where}, prebuilt",
            f"{t['lattice_per_s']:.0f} /s",
            ">= 1000 /s",
        ),
        (
            "Throughput",
            f"claim-lattice, {where}, prebuilt, wall clock (load {os.getloadavg()[0]:.1f})",
            f"{t['lattice_wall_per_s']:.0f} /s",
            "-",
        ),
        ("Throughput", f"quote mode, {where}, prebuilt", f"{t['quote_per_s']:.0f} /s", "-"),
        (
            "Throughput",
            "claim-lattice, evidence rebuilt per call",
            f"{t['rebuild_per_s']:.0f} /s",
            "-",
        ),
    ]
    _print(table)
    sweeps = [("support_window_sentences", args.windows)] if args.windows else []
    try:
        sweeps += [(f, v) for f, _, v in (item.partition("=") for item in args.sweep)]
        for field, values in sweeps:
            sweep(args, policy, limit, field, values.split(","))
    except ValueError as e:
        print(f"bad --sweep: {e}".splitlines()[0], file=sys.stderr)
        return 2
    checks = [
        sum(h["right"].values()) == sum(h["hallucinated"].values()) > 0,
        sum(sum(c.values()) for c in w.values()) > 0,
        t["label"] == "VERIFIED",
        t["lattice_per_s"] > 0,
    ]
    if not all(checks):
        print(
            "check failed: a benchmark produced no result or the throughput answer is not VERIFIED",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
