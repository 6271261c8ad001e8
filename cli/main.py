"""`aborist`: ingest documents, retrieve, answer, verify."""

from __future__ import annotations

import click

from aborist import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="aborist")
def cli() -> None:
    """Answer questions from your own documents, and prove why.

    Example: aborist ingest docs/ --shard handbook
    """


from cli.corpus_cmd import ingest, retrieve, shards  # noqa: E402
from cli.query_cmd import COMMANDS as QUERY_COMMANDS  # noqa: E402
from cli.serve_cmd import serve  # noqa: E402
from cli.verify_cmd import verify  # noqa: E402

for command in [ingest, shards, retrieve, *QUERY_COMMANDS, verify, serve]:
    cli.add_command(command)


def main() -> None:
    cli()
