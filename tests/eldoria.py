"""The invented corpus several test suites answer from, and fake clients they share.

Every fact is stated by exactly one sentence and exists nowhere else, so a STRICT answer
can only have come from these documents.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from aborist.clients.base import ChatClient, ChatResult, Messages

RIVERS_MD = """\
# Rivers of Eldoria

The Silverrun River flows north from the Ashen Mountains into the Glass Lake.

The Silverrun River is 412 kilometres long.

The town of Brackwater was founded in 1312 by the fisherman Oren Vale.
"""

BEES_TXT = """\
Beekeeping in Eldoria

The Eldorian honeybee produces violet honey in late autumn.
Each hive of Eldorian honeybees contains about forty thousand workers.
Queen bees in Eldoria live for roughly five years.
"""


class Interrupting(ChatClient):
    """Ctrl-C arrives while the model is thinking."""

    kind = "interrupting"

    def _complete(
        self, messages: Messages, *, temperature: float, max_tokens: int | None
    ) -> ChatResult:
        raise KeyboardInterrupt

    def _profile(self) -> dict[str, Any]:
        return {"model": "interrupting"}


def falsify_river_length(shards_dir: Path) -> None:
    """Edit shard ``geo`` behind ingest's back, as someone with the file could: the chunk
    stating the Silverrun River's length now says 9000 kilometres, while its stored
    ``chunk_hash`` (and the shard's source root) still describe 412."""
    conn = sqlite3.connect(shards_dir / "geo.shard.sqlite")
    try:
        changed = conn.execute(
            "UPDATE chunks SET text = replace(text, '412 kilometres', '9000 kilometres') "
            "WHERE text LIKE '%412 kilometres%'"
        ).rowcount
        conn.commit()
    finally:
        conn.close()
    assert changed == 1
