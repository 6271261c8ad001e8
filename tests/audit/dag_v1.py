"""Runs in both run-DAG versions for the audit tests (docs/pipeline.md, "DAG versions").

:func:`dag_version_1` makes the pipeline record version 1 exactly as the code before DAG
versions did: no ``dag_version`` in ``qa.answer_labelled``, no ``version`` in its
``run_dag``, and the quote DAG without a ``render`` node. Everything else of the run is
the pipeline's own. ``v1_bundles.json`` beside this file holds bundles that the code
before DAG versions exported (a quote run, a quote run repaired by a re-prompt, a
claim-lattice run, from the ledger :func:`tests.audit.builders.build_ledger` and
:func:`~tests.audit.builders.add_repair_runs` build): what a version-1 record really
is, which :mod:`tests.audit.test_dag_versions` holds this helper's runs to.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

from aborist.clients.base import StubClient
from aborist.clients.extractive import ExtractiveClient
from aborist.pipeline import run as run_module
from aborist.pipeline.query import query
from aborist.pipeline.run import Governance
from tests.audit.builders import ELIDED, FIXED, Q_FLOW, Q_FOUNDER, Built, add_repair_runs
from tests.audit.builders import build_ledger as build_v2_ledger

V1_BUNDLES = Path(__file__).with_name("v1_bundles.json")


def v1_bundles() -> dict[str, dict[str, Any]]:
    """The bundles the code before DAG versions exported: quote, quote_reprompt,
    claim_lattice."""
    data: dict[str, dict[str, Any]] = json.loads(V1_BUNDLES.read_text(encoding="utf-8"))
    return data


@contextmanager
def dag_version_1() -> Iterator[None]:
    """Runs answered inside record run-DAG version 1."""
    with mock.patch.object(run_module, "DAG_VERSION", 1):
        yield


@dataclass
class Mixed:
    """A ledger recorded first by the earlier code (version 1: the four runs of
    :class:`Built` and its two repaired runs), then by the current one (version 2: a
    quote run, a quote run repaired by a re-prompt, and a cache hit served from the
    version-1 quote run)."""

    built: Built
    v1_mechanical: str
    v1_reprompt: str
    v2_quote: str
    v2_reprompt: str
    v2_hit: str

    def v1_runs(self) -> list[str]:
        b = self.built
        return [b.lattice, b.quote, self.v1_mechanical, self.v1_reprompt]

    def v2_runs(self) -> list[str]:
        return [self.v2_quote, self.v2_reprompt]


def v2_quote_run(b: Built, question: str = Q_FLOW) -> str:
    """One quote run recorded by the current code (a cache miss)."""
    r = query(question, ledger=b.ledger, client=ExtractiveClient(), shards_dir=b.shards,
              governance=Governance(mode="quote"), use_cache=False)  # fmt: skip
    assert not r.cache_hit
    return r.run_id


def build_mixed(url: str, tmp: Path) -> Mixed:
    with dag_version_1():
        b = build_v2_ledger(url, tmp)
        mechanical, reprompt = add_repair_runs(b)
    v2_quote = v2_quote_run(b)

    def responder(messages: list[dict[str, str]]) -> str:
        return ELIDED if len(messages) == 2 else FIXED

    gov = Governance(mode="quote", repair_enabled=True, repair_max_reprompts=1)
    rep = query(Q_FLOW, ledger=b.ledger, client=StubClient(responder), shards_dir=b.shards,
                governance=gov, use_cache=False)  # fmt: skip
    assert rep.repair_changes, rep
    hit = query(Q_FOUNDER, ledger=b.ledger, client=ExtractiveClient(), shards_dir=b.shards,
                governance=Governance(mode="quote"))  # fmt: skip
    assert hit.cache_hit and hit.served_from_run_id == b.quote
    return Mixed(b, mechanical, reprompt, v2_quote, rep.run_id, hit.run_id)
