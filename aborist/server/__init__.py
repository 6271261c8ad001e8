"""``aborist serve``: the JSON API under ``/api/v1`` and the server-rendered pages, one ASGI
application (docs/serve.md).

The server adds no logic of its own to answering or auditing: every route calls the
library function the CLI calls (:func:`aborist.pipeline.run.execute_run`,
:func:`aborist.verify.verify.verify_answer`, :func:`aborist.audit.replay`,
:func:`aborist.audit.report.render_report`, :func:`aborist.audit.bundle_export.export_run`),
so an answer given over HTTP is recorded, labelled and replayable exactly as one given on
the command line.
"""

from __future__ import annotations

from typing import Any

from aborist.server.config import BindRefusedError, ServerConfig, check_bind, is_loopback

__all__ = ["BindRefusedError", "ServerConfig", "check_bind", "create_app", "is_loopback"]


def create_app(config: ServerConfig) -> Any:
    """See :func:`aborist.server.app.create_app` (imported on use: FastAPI is not loaded by
    every command of the CLI)."""
    from aborist.server.app import create_app as build

    return build(config)
