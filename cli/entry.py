"""The console scripts' entry points, kept free of imports.

Most of a short command's time is importing its modules (SQLAlchemy, the pipeline); a
Ctrl-C in that second would otherwise end in a ``KeyboardInterrupt`` traceback, raised
before click is there to catch it. Here the import itself is guarded, and the command
then runs under click as usual ("Aborted!" and exit 1 on Ctrl-C).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

__all__ = ["aborist", "aborist_ledger"]


def _run(load: Callable[[], Callable[[], None]]) -> None:
    try:
        main = load()
    except KeyboardInterrupt:
        sys.stderr.write("Aborted!\n")
        raise SystemExit(1) from None
    main()


def aborist() -> None:
    def load() -> Callable[[], None]:
        from cli.main import main

        return main

    _run(load)


def aborist_ledger() -> None:
    def load() -> Callable[[], None]:
        from cli.ledger_cli import main

        return main

    _run(load)
