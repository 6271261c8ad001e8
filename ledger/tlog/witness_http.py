"""The witness over HTTP (c2sp.org/tlog-witness): a small ASGI app (Starlette) with

* ``POST /add-checkpoint``: :meth:`ledger.tlog.witness.Witness.add_checkpoint`;
* ``GET /<hex SHA-256 of the origin>/checkpoint``: the latest cosigned checkpoint, with
  the log's signature and the witness's cosignature (404 when none).

Bodies above 64 KiB are refused (413) before they are read whole.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from ledger.errors import NoteError
from ledger.tlog.witness import Witness

__all__ = ["MAX_BODY", "witness_app"]

MAX_BODY = 64 * 1024


async def _body(request: Request) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def witness_app(witness: Witness) -> Starlette:
    async def add_checkpoint(request: Request) -> Response:
        raw = await _body(request)
        if raw is None:
            return PlainTextResponse(f"request body above {MAX_BODY} bytes\n", status_code=413)
        reply = await run_in_threadpool(witness.add_checkpoint, raw)
        return Response(reply.body, status_code=reply.status, media_type=reply.content_type)

    async def checkpoint(request: Request) -> Response:
        wanted = request.path_params["origin_hash"]
        for origin in witness.logs:
            if witness.origin_hash(origin) == wanted:
                try:
                    held = await run_in_threadpool(witness.held, origin)
                except NoteError as e:
                    return PlainTextResponse(f"{e}\n", status_code=500)
                if held is not None:
                    return PlainTextResponse(held[2])
        return PlainTextResponse("no checkpoint cosigned for that origin\n", status_code=404)

    return Starlette(
        routes=[
            Route("/add-checkpoint", add_checkpoint, methods=["POST"]),
            Route("/{origin_hash}/checkpoint", checkpoint, methods=["GET"]),
        ]
    )
