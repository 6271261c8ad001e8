"""The pages' shell: one stylesheet served from ``/static/app.css``, a navigation bar, and
the escaping every page uses. No script anywhere, no external asset (the content security
policy in :mod:`aborist.server.security` would block both)."""

from __future__ import annotations

from html import escape

__all__ = ["APP_CSS", "e", "error_page", "page"]

APP_CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;
background:#f6f7f9}
nav{background:#1d2330;padding:8px 24px}nav a{color:#fff;margin-right:18px;text-decoration:none}
nav a.here{font-weight:700;border-bottom:2px solid #fff}
main{max-width:960px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 12px}h2{font-size:17px;margin:24px 0 8px;border-bottom:1px solid
#d6dae1;padding-bottom:4px}
.meta{color:#5a6272;font-size:13px}code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;
font-size:12.5px}
form.ask textarea{width:100%;min-height:64px;font:inherit;padding:8px;box-sizing:border-box}
form.inline{display:flex;gap:8px;flex-wrap:wrap;align-items:end}form.inline label{font-size:13px}
input,select,button,textarea{font:inherit}button{padding:6px 14px;cursor:pointer}
.badge{display:inline-block;padding:2px 10px;border-radius:12px;font-weight:600;color:#fff}
.mode-STRICT{background:#1f7a3e}.mode-HYBRID{background:#b7791f}.mode-UNGROUNDED{background:#b83232}
.answer{background:#fff;padding:10px 14px;border:1px solid #d6dae1}
.claim{display:block;padding:6px 8px;margin:4px 0;border-radius:4px}
.claim a{font-size:12px;margin-left:6px}.claim .mark{font-size:12px;font-weight:700;
margin-right:6px;text-transform:uppercase}
.verdict-verified{background:#e3f4e8;border-left:4px solid #1f7a3e}
.verdict-supported{background:#fdf3dc;border-left:4px solid #b7791f}
.verdict-unsupported{background:#fbe4e4;border-left:4px solid #b83232}
.evidence{background:#fff;border:1px solid #d6dae1;padding:8px 12px;margin:8px 0}
.evidence:target{outline:3px solid #3b6fd8;background:#eef3ff}
mark{background:#ffe27a;padding:0 1px}
table{border-collapse:collapse;font-size:13px;width:100%}td,th{border:1px solid #d6dae1;
padding:3px 8px;text-align:left;vertical-align:top}
.ok{color:#1f7a3e;font-weight:600}.bad{color:#b83232;font-weight:600}
.error{background:#fbe4e4;border:1px solid #b83232;padding:8px 12px}
nav form.signout{display:inline;float:right}nav form.signout button{padding:0 10px}
"""

_NAV = (("/", "Ask"), ("/runs", "Runs"), ("/ledger", "Ledger"), ("/shards", "Shards"))


def e(value: object) -> str:
    """Text for HTML: every string from a request, a document or the ledger goes through
    this (quotes included, so it is safe inside attribute values too)."""
    return escape("" if value is None else str(value), quote=True)


#: The nav bar's sign-out button (a form: signing out changes the server's state, so it
#: is a POST, which the cross-origin check covers).
_SIGN_OUT = (
    '<form method="post" action="/logout" class="signout" id="signout">'
    '<button type="submit">Sign out</button> <button type="submit" name="everywhere" '
    'value="1">Sign out everywhere</button></form>'
)


def page(
    title: str, body: str, *, here: str = "", refresh: int | None = None, signout: bool = False
) -> str:
    """A whole page around ``body`` (already escaped HTML); ``signout`` adds the sign-out
    button (when a token is configured)."""
    nav = "".join(
        f'<a href="{href}"{" class=here" if href == here else ""}>{name}</a>' for href, name in _NAV
    ) + (_SIGN_OUT if signout else "")
    meta = f'<meta http-equiv="refresh" content="{int(refresh)}">' if refresh else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{e(title)} · aborist</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'{meta}<link rel="stylesheet" href="/static/app.css"></head>'
        f"<body><nav>{nav}</nav><main>\n{body}\n</main></body></html>\n"
    )


def error_page(status: int, detail: str) -> str:
    return page(
        f"Error {status}",
        f'<h1>Error {status}</h1><p class="error" id="error">{e(detail)}</p>'
        '<p><a href="/">Back to the start</a></p>',
    )
