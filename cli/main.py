"""`aborist`: ingest documents, retrieve, answer, verify."""

from __future__ import annotations

import click

from aborist import __version__
from cli.common import AboristGroup, home_option


@click.group(cls=AboristGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="aborist")
@home_option
def cli() -> None:
    """Answer questions from your own documents, and prove why.

    Every answer is checked against the passages it cites. Its audit mode: STRICT means
    every claim was found word for word in the evidence; HYBRID means some claims were
    verified but not all of them word for word; UNGROUNDED means no claim could be
    verified. The label on the four-rung ladder says what was checked, lexically: 1
    VERIFIED (every claim occurs word for word in one sentence of the evidence, with its
    polarity), 2 SUPPORTED (every claim's words, polarity and numbers were found together
    in one sentence, no two of its numbers, names or code swapped, not all word for word), 3
    PARTIAL (some claim's were not), 4 UNSUPPORTED (no claim's were). Words found
    together are not proof that the sentence means what the claim says.

    Data (the ledger and the shards) lives in one per-user directory unless --home,
    $ABORIST_HOME or a project's .aborist/ says otherwise; `aborist config` shows where.

    Example: aborist ingest docs/ --shard handbook

    Example: aborist query "Who approves exceptions?" --shard handbook
    """


from cli.config_cmd import config  # noqa: E402
from cli.corpus_cmd import COMMANDS as CORPUS_COMMANDS  # noqa: E402
from cli.query_cmd import COMMANDS as QUERY_COMMANDS  # noqa: E402
from cli.serve_cmd import serve  # noqa: E402
from cli.verify_cmd import verify  # noqa: E402

for command in [*CORPUS_COMMANDS, *QUERY_COMMANDS, verify, config, serve]:
    cli.add_command(command)


def main() -> None:
    cli()
