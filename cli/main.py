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


from cli.verify_cmd import verify  # noqa: E402

cli.add_command(verify)


def main() -> None:
    cli()
