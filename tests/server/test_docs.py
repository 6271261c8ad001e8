"""docs/serve.md covers every API route (read from the OpenAPI schema), every page and
every option of `aborist serve`."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from aborist.server import ServerConfig, create_app
from cli.main import cli

DOC = (Path(__file__).resolve().parents[2] / "docs" / "serve.md").read_text(encoding="utf-8")


def test_every_api_route_is_documented(tmp_path: Path) -> None:
    app = create_app(ServerConfig(f"sqlite:///{tmp_path / 'x.db'}", tmp_path)).app
    schema = app.openapi()
    for path, ops in schema["paths"].items():
        for method in ops:
            assert f"{method.upper()} {path}" in DOC, f"{method.upper()} {path}"


def test_every_page_is_documented(tmp_path: Path) -> None:
    app = create_app(ServerConfig(f"sqlite:///{tmp_path / 'x.db'}", tmp_path)).app
    paths = {getattr(r, "path", "") for r in app.routes}
    pages = {p for p in paths if p and not p.startswith(("/api", "/openapi", "/static"))}
    pages -= {"/favicon.ico", "/ask", "/ledger/replay", "/ledger/replay/{job_id}"}
    for path in pages:
        assert f"`{path}`" in DOC, path


def test_every_option_is_documented() -> None:
    help_text = CliRunner().invoke(cli, ["serve", "--help"]).output
    for option in set(re.findall(r"--[a-z][a-z-]+", help_text)) - {"--help"}:
        assert f"`{option}" in DOC, option
