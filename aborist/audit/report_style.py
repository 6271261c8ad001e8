"""The audit report's inline stylesheet (:mod:`aborist.audit.report`): the page loads
nothing, so its style travels inside it."""

from __future__ import annotations

__all__ = ["CSS"]

CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;
background:#f6f7f9}
main{max-width:960px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid
#d6dae1;padding-bottom:4px}
.meta{color:#5a6272;font-size:13px}.mono,code{font-family:ui-monospace,Menlo,Consolas,monospace;
font-size:12.5px}
.question{font-size:18px;background:#fff;border-left:4px solid #3b6fd8;padding:10px 14px}
.badge{display:inline-block;padding:2px 10px;border-radius:12px;font-weight:600;color:#fff;
margin-right:8px}
.mode-STRICT{background:#1f7a3e}.mode-HYBRID{background:#b7791f}.mode-UNGROUNDED{background:#b83232}
.answer{background:#fff;padding:10px 14px;border:1px solid #d6dae1}
.unit{display:block;padding:6px 8px;margin:4px 0;border-radius:4px}
.unit a{font-size:12px;margin-left:6px}
.verdict-verbatim{background:#e3f4e8;border-left:4px solid #1f7a3e}
.verdict-supported{background:#fdf3dc;border-left:4px solid #b7791f}
.verdict-unverified{background:#fbe4e4;border-left:4px solid #b83232}
.evidence{background:#fff;border:1px solid #d6dae1;padding:8px 12px;margin:8px 0}
.evidence:target{outline:3px solid #3b6fd8}
mark{background:#ffe27a;padding:0 1px}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #d6dae1;padding:3px 8px;
text-align:left}
.ok{color:#1f7a3e;font-weight:600}.bad{color:#b83232;font-weight:600}
.repair{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.repair pre{white-space:pre-wrap;background:#fff;border:1px solid #d6dae1;padding:8px;margin:0}
svg text{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
"""
