"""The application factory: FastAPI (pydantic models, OpenAPI at ``/openapi.json``) with
the API and page routers, the error handlers, and :class:`aborist.server.security.Guard`
wrapped around everything."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from aborist import __version__
from aborist.server.config import ServerConfig
from aborist.server.errors import install_error_handlers
from aborist.server.security import Guard
from aborist.server.state import AppState

__all__ = ["app_from_environment", "create_app"]


def create_app(config: ServerConfig) -> Any:
    """The ASGI application for ``config`` (a :class:`Guard` around FastAPI; the FastAPI
    app is its ``.app``). The ledger opens on the first request."""
    from aborist.server import api, pages, tlog

    state = AppState(config)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            state.close()

    app = FastAPI(
        title="aborist",
        version=__version__,
        summary="Answers from your own documents, every claim checked, every step recorded.",
        docs_url=None,  # the interactive docs load scripts from a CDN; /openapi.json stays
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.aborist = state
    install_error_handlers(app)
    app.include_router(api.router)
    app.include_router(tlog.router)
    app.include_router(pages.router)
    if config.witness is not None:
        from ledger.tlog.witness_http import witness_app

        app.mount("/witness", witness_app(config.witness))
    return Guard(app, config, state.sessions)


def app_from_environment() -> Any:
    """For ``uvicorn --factory`` in each worker process: the configuration ``aborist
    serve`` put in the environment (the token arrives as ``ABORIST_API_TOKEN``)."""
    import os

    from aborist.server.cli_config import config_from_environment

    return create_app(config_from_environment(os.environ))
