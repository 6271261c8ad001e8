"""`aborist`: ingest documents, retrieve, answer, verify."""

from __future__ import annotations

import sys

try:  # most of a command's start-up is these imports: a Ctrl-C here is not a traceback
    import click

    from aborist import __version__
    from cli.corpus_cmd import ingest, retrieve, shards
    from cli.query_cmd import COMMANDS as QUERY_COMMANDS
    from cli.verify_cmd import verify
except KeyboardInterrupt:
    sys.stderr.write("Aborted!\n")
    raise SystemExit(1) from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="aborist")
def cli() -> None:
    """Answer questions from your own documents, and prove why.

    Example: aborist ingest docs/ --shard handbook
    """


for command in [ingest, shards, retrieve, *QUERY_COMMANDS, verify]:
    cli.add_command(command)


def main() -> None:
    cli()
