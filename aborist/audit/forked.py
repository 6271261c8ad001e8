"""One function run in a forked process while the caller goes on, its result sent back
through a pipe: how replay puts the machine's second core to work.

Forking (not spawning) lets the child start at once, without importing anything, and
inherit what the parent already read (the live projection tables) instead of having it
pickled across. The child must not use the parent's database connections: the function
it runs opens its own engine, and the child leaves with ``os._exit`` (what
:mod:`multiprocessing` does), so no inherited connection is closed or reused from there.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from aborist.errors import AboristError

__all__ = ["Forked", "can_fork"]

T = TypeVar("T")


def can_fork() -> bool:
    """Whether this process can fork and may run on two CPUs or more."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return False
    affinity = getattr(os, "sched_getaffinity", None)
    cpus = len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)
    return cpus >= 2


def _child(send: Any, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    """Runs in the forked process (a test covers its results, not its lines)."""
    try:
        result: tuple[str, Any] = ("ok", fn(*args))
    except BaseException as e:  # sent to the parent, which raises it
        result = ("error", e)
    try:
        send.send(result)
    except Exception:  # an exception that does not pickle: its message does
        send.send(("error", AboristError(f"{type(result[1]).__name__}: {result[1]}")))
    finally:
        send.close()


class Forked(Generic[T]):
    """``fn(*args)`` in a forked process. Use as a context manager (a child still running
    when the block is left, by an exception, is terminated); :meth:`result` waits for the
    child and returns what ``fn`` returned, or raises what it raised."""

    def __init__(self, name: str, fn: Callable[..., T], *args: Any) -> None:
        ctx = multiprocessing.get_context("fork")
        self._recv, send = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(target=_child, args=(send, fn, args), name=name, daemon=True)
        self._proc.start()
        send.close()

    def result(self) -> T:
        try:
            kind, value = self._recv.recv()
        except EOFError:
            self._proc.join()
            raise AboristError(
                f"the {self._proc.name} process ended without a result "
                f"(exit code {self._proc.exitcode})"
            ) from None
        self._proc.join()
        if kind == "error":
            raise value
        result: T = value
        return result

    def __enter__(self) -> Forked[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc.is_alive():
            self._proc.terminate()
            self._proc.join()
        self._recv.close()
