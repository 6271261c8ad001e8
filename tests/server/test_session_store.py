"""The shared session directory of ``aborist serve --workers N`` when it is not what the
store wrote (review findings): gone, holding a directory named like a session, a file
whose expiry is not a time within the lifetime, or a path that cannot be written. Each
fails closed with a 503 or "no session", never a traceback (a 500)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aborist.server.errors import ApiError
from aborist.server.sessions import SessionStore, _key

TTL = 3600.0


def test_a_directory_that_is_gone_holds_no_session_and_is_made_again(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions", TTL)
    (tmp_path / "sessions").mkdir()
    old = store.create()
    (tmp_path / "sessions" / _key(old)).unlink()
    (tmp_path / "sessions").rmdir()
    assert not store.valid(old)
    assert store.revoke_all() == 0
    new = store.create()  # made again, mode 0700
    assert store.valid(new) and (tmp_path / "sessions").stat().st_mode & 0o777 == 0o700


def test_an_entry_that_is_a_directory_opens_nothing_and_breaks_no_login(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, TTL)
    value = "A" * 43
    (tmp_path / _key(value)).mkdir()
    assert not store.valid(value)
    assert store.valid(store.create())  # the sweep reads every entry: no IsADirectoryError
    store.revoke(value)  # not a session: nothing to revoke, no error


def test_an_expiry_past_the_lifetime_or_not_finite_is_no_session(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, TTL, clock=lambda: 1000.0)
    for i, written in enumerate(["inf", "nan", repr(1000.0 + TTL * 10), "\xff"]):
        value = chr(ord("A") + i) * 43
        (tmp_path / _key(value)).write_text(written, encoding="latin-1")
        assert not store.valid(value), written
    good = store.create()
    assert store.valid(good)


def test_a_store_that_cannot_be_written_is_a_503(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    store = SessionStore(blocker / "sessions", TTL)  # a path under a file: never writable
    with pytest.raises(ApiError) as e:
        store.create()
    assert e.value.status == 503 and "session store cannot be written" in e.value.detail
    with pytest.raises(ApiError) as e:  # never "0 revoked" for a store it cannot read
        store.revoke_all()
    assert e.value.status == 503 and "cannot be read" in e.value.detail
