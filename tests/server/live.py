"""A real server on loopback for the browser and load tests: uvicorn in a thread, on a
free port, stopped when the block ends."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn

__all__ = ["live_server"]


@contextmanager
def live_server(app: Any) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` serving ``app`` until the block ends, with the connection
    limits ``aborist serve`` sets for its configuration."""
    from aborist.server.connections import uvicorn_options

    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", lifespan="off",
        **uvicorn_options(app.config),
    )  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        app.app.state.aborist.close()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def serve_process(
    env: dict[str, str], *, workers: int = 1, args: Sequence[str] = ()
) -> Iterator[str]:
    """``aborist serve`` as a separate process (with ``workers`` uvicorn workers and the
    options ``args``), as a user starts it; stopped (SIGTERM, then SIGKILL) when the block
    ends."""
    import os
    import signal
    import subprocess
    import sys

    import httpx

    port = free_port()
    aborist = str(Path(sys.executable).with_name("aborist"))  # the installed console script
    cmd = [aborist, "serve", "--port", str(port), "--workers", str(workers), *args]
    proc = subprocess.Popen(
        cmd, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise RuntimeError(f"aborist serve exited {proc.returncode}: {err}")
            try:
                if httpx.get(base + "/api/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("aborist serve did not answer within 60 s")
            time.sleep(0.2)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if proc.stderr:
            proc.stderr.close()
