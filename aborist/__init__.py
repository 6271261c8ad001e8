"""aborist: document Q&A whose every step is recorded in a hash-chained ledger.

The public surface is below; everything else is private to its package. Names load on
first use (PEP 562), so importing one part (the verifier, say) does not pull in the
rest::

    from pathlib import Path

    from aborist import ExtractiveClient, ingest, open_ledger, query

    ingest([Path("docs/policy.md")], "policies", shards_dir=Path("shards"))
    with open_ledger("sqlite:///ledger.db") as lg:  # a migrated ledger
        result = query("Who approves exceptions?", ledger=lg, client=ExtractiveClient(),
                       shards_dir=Path("shards"))
        print(result.audit_mode, result.label, result.answer)

Errors: every one is an :class:`AboristError` (:mod:`aborist.errors`), except the
ledger's own, which are :class:`ledger.LedgerError`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> the module that defines it
_SURFACE = {
    "AboristError": "aborist.errors",
    "AnthropicClient": "aborist.clients.anthropic",
    "ChatClient": "aborist.clients.base",
    "CorpusError": "aborist.errors",
    "ExtractiveClient": "aborist.clients.extractive",
    "Governance": "aborist.pipeline.run",
    "InputError": "aborist.errors",
    "ModelError": "aborist.errors",
    "OpenAICompatibleClient": "aborist.clients.openai",
    "ProjectionError": "aborist.errors",
    "ReplayReport": "aborist.audit.findings",
    "RunResult": "aborist.pipeline.run",
    "Settings": "aborist.settings",
    "Verdict": "aborist.verify.verify",
    "VerifierPolicy": "aborist.verify.verify",
    "ask": "aborist.pipeline.ask",
    "export_run": "aborist.audit.bundle",
    "ingest": "aborist.corpus.ingest",
    "load_settings": "aborist.settings",
    "open_ledger": "aborist.projections",
    "query": "aborist.pipeline.query",
    "render_report": "aborist.audit.report",
    "replay": "aborist.audit.replay",
    "verify_answer": "aborist.verify.verify",
    "verify_bundle": "aborist.audit.bundle",
}

__all__ = [
    "AboristError",
    "AnthropicClient",
    "ChatClient",
    "CorpusError",
    "ExtractiveClient",
    "Governance",
    "InputError",
    "ModelError",
    "OpenAICompatibleClient",
    "ProjectionError",
    "ReplayReport",
    "RunResult",
    "Settings",
    "Verdict",
    "VerifierPolicy",
    "ask",
    "export_run",
    "ingest",
    "load_settings",
    "open_ledger",
    "query",
    "render_report",
    "replay",
    "verify_answer",
    "verify_bundle",
]

if TYPE_CHECKING:
    from aborist.audit.bundle import export_run, verify_bundle
    from aborist.audit.findings import ReplayReport
    from aborist.audit.replay import replay
    from aborist.audit.report import render_report
    from aborist.clients.anthropic import AnthropicClient
    from aborist.clients.base import ChatClient
    from aborist.clients.extractive import ExtractiveClient
    from aborist.clients.openai import OpenAICompatibleClient
    from aborist.corpus.ingest import ingest
    from aborist.errors import AboristError, CorpusError, InputError, ModelError, ProjectionError
    from aborist.pipeline.ask import ask
    from aborist.pipeline.query import query
    from aborist.pipeline.run import Governance, RunResult
    from aborist.projections import open_ledger
    from aborist.settings import Settings, load_settings
    from aborist.verify.verify import Verdict, VerifierPolicy, verify_answer


def __getattr__(name: str) -> Any:
    module = _SURFACE.get(name)
    if module is None:
        raise AttributeError(f"module 'aborist' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
