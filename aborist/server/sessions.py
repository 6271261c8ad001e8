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

import contextlib
import hashlib
import math
import os
import re
import secrets
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from aborist.server.errors import ApiError

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
        """A new session's cookie value (expired sessions are swept first). A shared
        directory that is gone is made again (its sessions are gone with it); one that
        cannot be written is a 503, never a traceback."""
        self._sweep()
        value = secrets.token_urlsafe(32)
        expires = self._clock() + self.ttl_s
        if self.directory is None:
            with self._lock:
                self._memory[_key(value)] = expires
            return value
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".new-")
            with os.fdopen(fd, "w", encoding="ascii") as f:
                f.write(repr(expires))
            os.replace(tmp, self.directory / _key(value))
        except OSError as e:
            raise ApiError(503, f"the session store cannot be written: {_why(e)}") from None
        return value

    def valid(self, value: str | None) -> bool:
        """True while the session is held and has not expired (an entry that cannot be
        read, or whose expiry is not a time within the lifetime, is no session)."""
        if value is None or not _VALUE.fullmatch(value):
            return False
        expires = self._expiry(_key(value))
        return expires is not None and self._clock() < expires

    def revoke(self, value: str | None) -> None:
        """Forget one session (signing out); a value that names none is ignored. A session
        that cannot be forgotten is a 503: the sign-out did not happen."""
        if value is not None and _VALUE.fullmatch(value):
            self._forget(_key(value))

    def revoke_all(self) -> int:
        """Forget every session; how many there were. A shared directory that is gone
        holds none; one that cannot be read, or a session that cannot be forgotten, is a
        503 (never "revoked" for a session still valid)."""
        keys = self._keys()
        for key in keys:
            self._forget(key)
        return len(keys)

    # storage

    def _keys(self) -> list[str]:
        if self.directory is None:
            with self._lock:
                return list(self._memory)
        try:
            return [p.name for p in self.directory.iterdir() if _KEY.fullmatch(p.name)]
        except FileNotFoundError:
            return []
        except OSError as e:
            raise ApiError(503, f"the session store cannot be read: {_why(e)}") from None

    def _expiry(self, key: str) -> float | None:
        if self.directory is None:
            with self._lock:
                return self._memory.get(key)
        try:
            expires = float((self.directory / key).read_text(encoding="ascii"))
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        # written as now + ttl: a later or non-finite time was not written by this store
        if not math.isfinite(expires) or expires > self._clock() + self.ttl_s:
            return None
        return expires

    def _forget(self, key: str) -> None:
        if self.directory is None:
            with self._lock:
                self._memory.pop(key, None)
            return
        path = self.directory / key
        try:
            path.unlink(missing_ok=True)
        except OSError as e:
            if self._expiry(key) is not None:  # still a live session: say so
                raise ApiError(503, f"a session could not be revoked: {_why(e)}") from None
            # not a session this store wrote (a directory, unreadable): it opens nothing

    def _sweep(self) -> None:
        now = self._clock()
        try:
            keys = self._keys()
        except ApiError:
            return  # create() reports the store's state when it writes
        for key in keys:
            expires = self._expiry(key)
            if expires is not None and expires <= now:
                # an expired session opens nothing whether or not it is removed
                with contextlib.suppress(ApiError):
                    self._forget(key)


def _why(e: OSError) -> str:
    return e.strerror or type(e).__name__
