"""Every failure as ``{"error", "detail"}`` JSON under /api (an HTML page elsewhere), with
the status the kind of failure deserves, and never a traceback (docs/serve.md, "Errors").

=====  =========================================================================
400    bad input the library refused (:class:`aborist.errors.InputError`, a bad cursor)
401    no or a wrong bearer token (in :mod:`aborist.server.security`)
404    no such run, no checkpoint yet, no such shard or route
409    a concurrent append moved the stream first (:class:`ledger.errors.ConcurrencyError`)
408    the request body did not arrive in full within the body timeout (30 s)
413    the request body is larger than the limit
422    the body does not match the schema (pydantic)
502    the model call failed; ``run_id`` names the run that recorded the failure
503    the ledger is unreachable or not migrated
500    anything else: "internal error", with the details in the server's log only
=====  =========================================================================
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from aborist.errors import AboristError, CorpusError, InputError, ModelError, ProjectionError
from aborist.server.layout import error_page
from ledger.errors import (
    ConcurrencyError,
    LedgerError,
    NotMigratedError,
    PayloadError,
    ProofError,
    UnavailableError,
)

__all__ = ["ApiError", "install_error_handlers", "status_of"]

log = logging.getLogger("aborist.server")

_NAMES = {
    400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
    405: "method_not_allowed", 408: "timeout", 409: "conflict", 413: "too_large", 422: "invalid",
    502: "model_failed", 503: "unavailable", 500: "internal",
}  # fmt: skip


class ApiError(Exception):
    """A failure with its HTTP status, and the run it was recorded in (if any)."""

    def __init__(self, status: int, detail: str, *, run_id: str | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.run_id = run_id


def status_of(e: BaseException) -> int:
    if isinstance(e, ApiError):
        return e.status
    if isinstance(e, ModelError):
        return 502
    if isinstance(e, ConcurrencyError):
        return 409
    if isinstance(e, UnavailableError | NotMigratedError | ProjectionError):
        return 503
    if isinstance(e, InputError | PayloadError):
        return 404 if str(e).startswith("no run ") else 400
    if isinstance(e, ProofError):
        return 404
    if isinstance(e, CorpusError):
        return 404 if "not found" in str(e) or str(e).startswith("no shard") else 400
    if isinstance(e, AboristError | LedgerError):
        return 400
    return 500


def _body(status: int, detail: Any, run_id: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"error": _NAMES.get(status, "error"), "detail": detail}
    if run_id is not None:
        out["run_id"] = run_id
    return out


def respond(request: Request, status: int, detail: Any, run_id: str | None = None) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse(_body(status, detail, run_id), status_code=status)
    text = detail if isinstance(detail, str) else "the request does not match the form"
    if run_id:
        text += f" (run {run_id})"
    return HTMLResponse(error_page(status, text), status_code=status)


def install_error_handlers(app: FastAPI) -> None:
    async def domain(request: Request, exc: Exception) -> Response:
        status = status_of(exc)
        if status == 500:
            log.error("internal error on %s %s", request.method, request.url.path, exc_info=exc)
            return respond(request, 500, "internal error; the server's log has the details")
        return respond(request, status, str(exc), getattr(exc, "run_id", None))

    async def http(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        return respond(request, exc.status_code, str(exc.detail))

    async def invalid(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        # loc and msg only: the rejected input is not echoed back
        detail = [
            {"loc": [str(p) for p in err.get("loc", ())], "msg": str(err.get("msg", ""))}
            for err in exc.errors()
        ]
        return respond(request, 422, detail)

    app.add_exception_handler(ApiError, domain)
    app.add_exception_handler(AboristError, domain)
    app.add_exception_handler(LedgerError, domain)
    app.add_exception_handler(StarletteHTTPException, http)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(Exception, domain)
