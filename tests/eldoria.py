"""The invented corpus several test suites answer from, and fake clients they share.

Every fact is stated by exactly one sentence and exists nowhere else, so a STRICT answer
can only have come from these documents.
"""

from __future__ import annotations

from typing import Any

from aborist.qa.client import ChatClient, ChatResult, Messages

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
