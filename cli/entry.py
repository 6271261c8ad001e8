"""The console scripts' entry points, kept free of imports.

Most of a short command's time is importing its modules (SQLAlchemy, the pipeline); a
Ctrl-C in that second would otherwise end in a ``KeyboardInterrupt`` traceback, raised
before click is there to catch it. Here the import itself is guarded, and the command
then runs under click as usual ("Aborted!" and exit 1 on Ctrl-C).

Every file and directory the commands create is private to the user (umask 077: files
0600, directories 0700): the ledger, shards, bundles and reports hold every question,
answer and document excerpt. A file meant for others is shared deliberately.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

__all__ = ["aborist", "aborist_ledger"]


#: What the commands create is readable by the user alone.
PRIVATE_UMASK = 0o077


def _run(load: Callable[[], Callable[[], None]]) -> None:
    os.umask(PRIVATE_UMASK)
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
        from cli.audit.ledger_cli import main

        return main

    _run(load)
