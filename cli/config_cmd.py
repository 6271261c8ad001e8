"""`aborist config`: every setting, its value, and where the value came from."""

from __future__ import annotations

from typing import Any

import click

from aborist.settings import KEYS, resolve_settings
from cli.common import clean_errors, emit_json, json_option
from cli.term import printable
from ledger.engine import describe_url

__all__ = ["config"]

_SECRET = frozenset({"llm_api_key"})


def _shown(key: str, value: Any) -> Any:
    if value is None or value == ():
        return None
    if key in _SECRET:
        return "***"
    if key == "db_url":
        return describe_url(value)  # no password
    if key == "shards":
        return list(value)
    return str(value)


@click.command("config")
@json_option
def config(as_json: bool) -> None:
    """Show each setting, its value and where it came from (flag, environment, project,
    config file or default).

    Values come from the first of: a flag (--home), an ABORIST_* environment variable,
    for the home a project's .aborist/ directory found from the current directory
    upwards, the TOML config file ($ABORIST_CONFIG, which must exist, else
    ~/.config/aborist/config.toml if present; keys named as below), the default. The API
    key is never printed.

    Example: aborist config
    """
    with clean_errors():
        resolved = resolve_settings()
    s = resolved.settings
    effective = {
        "ledger": describe_url(s.ledger_url()),
        "shards directory": str(s.shards_path()),
    }
    rows = {key: (_shown(key, getattr(s, key)), resolved.origins[key]) for key in KEYS}
    if s.home is None:
        rows["home"] = (str(s.data_home()), "default (the per-user data directory)")
    found = resolved.config_file.is_file()
    if as_json:
        emit_json({
            "config_file": {"path": str(resolved.config_file), "exists": found},
            "settings": {k: {"value": v, "origin": o} for k, (v, o) in rows.items()},
            "effective": effective,
        })  # fmt: skip
        return
    state = "" if found else " (not present)"
    click.echo(printable(f"config file: {resolved.config_file}{state}"))
    width = max(len(k) for k in KEYS)
    for key, (value, origin) in rows.items():
        shown = "(unset)" if value is None else ", ".join(value) if key == "shards" else value
        click.echo(printable(f"  {key:<{width}}  {shown}  [{origin}]"))
    for what, value in effective.items():
        click.echo(printable(f"{what}: {value}"))
