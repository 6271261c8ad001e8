"""The pages' login sessions, kept by the server so that they can be revoked
(docs/serve.md, "Authentication").

A session cookie is 256 random bits, valid while the server holds it and for at most
``ServerConfig.session_ttl_s``: signing out forgets that one, "sign out everywhere" (or
``POST /api/v1/sessions/revoke``) forgets them all, and a restart forgets them all too.
The server keeps only the SHA-256 of each cookie, never the cookie: what it holds cannot
be replayed. One process keeps them in memory; the worker processes of ``aborist serve
--workers N`` share a private directory (one file per session, named by that hash), so a
session signed out on one worker is refused by every other.

(It used to be an HMAC of the token under a fixed label: the same value for every login,
valid until the token changed, and nothing a sign-out could take back.)
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["SessionStore"]

#: What :meth:`SessionStore.create` makes: 32 random bytes, URL-safe base64 (43 chars).
_VALUE = re.compile(r"[A-Za-z0-9_-]{43}")
_KEY = re.compile(r"[0-9a-f]{64}")


def _key(value: str) -> str:
    return hashlib.sha256(value.encode("ascii")).hexdigest()


class SessionStore:
    """Live sessions: in memory (``directory`` None) or in ``directory``, shared by the
    processes given the same one."""

    def __init__(
        self,
        directory: Path | None,
        ttl_s: float,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.directory = directory
        self.ttl_s = ttl_s
        self._clock = clock
        self._memory: dict[str, float] = {}
        self._lock = threading.Lock()

    def create(self) -> str:
        """A new session's cookie value (expired sessions are swept first)."""
        self._sweep()
        value = secrets.token_urlsafe(32)
        expires = self._clock() + self.ttl_s
        if self.directory is None:
            with self._lock:
                self._memory[_key(value)] = expires
        else:
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".new-")
            with os.fdopen(fd, "w", encoding="ascii") as f:
                f.write(repr(expires))
            os.replace(tmp, self.directory / _key(value))
        return value

    def valid(self, value: str | None) -> bool:
        """True while the session is held and has not expired."""
        if value is None or not _VALUE.fullmatch(value):
            return False
        expires = self._expiry(_key(value))
        return expires is not None and self._clock() < expires

    def revoke(self, value: str | None) -> None:
        """Forget one session (signing out); a value that names none is ignored."""
        if value is not None and _VALUE.fullmatch(value):
            self._forget(_key(value))

    def revoke_all(self) -> int:
        """Forget every session; how many there were."""
        keys = self._keys()
        for key in keys:
            self._forget(key)
        return len(keys)

    # storage

    def _keys(self) -> list[str]:
        if self.directory is None:
            with self._lock:
                return list(self._memory)
        return [p.name for p in self.directory.iterdir() if _KEY.fullmatch(p.name)]

    def _expiry(self, key: str) -> float | None:
        if self.directory is None:
            with self._lock:
                return self._memory.get(key)
        try:
            return float((self.directory / key).read_text(encoding="ascii"))
        except (FileNotFoundError, ValueError):
            return None

    def _forget(self, key: str) -> None:
        if self.directory is None:
            with self._lock:
                self._memory.pop(key, None)
            return
        (self.directory / key).unlink(missing_ok=True)

    def _sweep(self) -> None:
        now = self._clock()
        for key in self._keys():
            expires = self._expiry(key)
            if expires is not None and expires <= now:
                self._forget(key)
