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

import errno
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
    try:
        main()
    except OSError as e:  # what click prints before a command runs (--version, --help)
        if e.errno not in _WRITE_FAILURES:
            raise
        _drop_stdout()
        sys.stderr.write(f"Error: cannot write the output: {e.strerror or e}\n")
        raise SystemExit(1) from None
    finally:
        _flush_stdout()


#: A full disk or quota, a file too large, an I/O error (as cli.common.WRITE_FAILURES,
#: not imported: this module imports nothing before the command loads).
_WRITE_FAILURES = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def _drop_stdout() -> None:
    """Point stdout at ``/dev/null``: its unwritten buffer then cannot fail again at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _flush_stdout() -> None:
    """Flush what the command printed while it can still be reported: stdout on a full
    disk (``> /dev/full``) or a closed pipe otherwise fails at the interpreter's exit, as
    an "Exception ignored" message and exit 120. A full disk is one line and exit 1; a
    reader that went away (``| head``) is exit 1 with nothing said, as before. Either way
    the unwritten rest goes to ``/dev/null``, so nothing fails again at exit."""
    try:
        sys.stdout.flush()
    except OSError as e:
        _drop_stdout()
        if not isinstance(e, BrokenPipeError):
            sys.stderr.write(f"Error: cannot write the output: {e.strerror or e}\n")
        raise SystemExit(1) from None


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
