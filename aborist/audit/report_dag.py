"""The run DAG of an audit report as inline SVG (:mod:`aborist.audit.report`): one box
per stage, top to bottom, an edge from each parent; and the recorded edges the drawing
cannot show, whose parent is no node of the run's DAG.

Every string from the ledger is escaped (:func:`html.escape`), attribute values included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

__all__ = ["dag_svg", "outside_parents"]

_BOX_W, _BOX_H, _GAP, _X0 = 380, 42, 22, 16


def _e(value: object) -> str:
    return escape("" if value is None else str(value), quote=True)


def dag_svg(nodes: Sequence[Mapping[str, Any]]) -> str:
    """The run DAG as inline SVG: one box per stage, top to bottom; an edge from each
    parent (straight when adjacent, an arc on the right otherwise)."""
    index = {str(n["node_hash"]): i for i, n in enumerate(nodes)}
    height = len(nodes) * (_BOX_H + _GAP) + _GAP
    width = _X0 + _BOX_W + 40 + 26 * len(nodes)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="dag" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        'aria-label="run DAG">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" '
        'fill="#5a6272"/></marker></defs>',
    ]

    def top(i: int) -> int:
        return _GAP + i * (_BOX_H + _GAP)

    for i, n in enumerate(nodes):
        for parent in n.get("parents", []):
            j = index.get(str(parent))
            if j is None:
                continue
            if j == i - 1:
                x = _X0 + _BOX_W // 2
                parts.append(
                    f'<line class="edge" x1="{x}" y1="{top(j) + _BOX_H}" x2="{x}" '
                    f'y2="{top(i)}" stroke="#5a6272" marker-end="url(#arrow)"/>'
                )
            else:
                x, y1, y2 = _X0 + _BOX_W, top(j) + _BOX_H // 2, top(i) + _BOX_H // 2
                bend = x + 20 + 12 * (i - j)
                parts.append(
                    f'<path class="edge" d="M{x},{y1} C{bend},{y1} {bend},{y2} {x},{y2}" '
                    'fill="none" stroke="#5a6272" marker-end="url(#arrow)"/>'
                )
    for i, n in enumerate(nodes):
        stage, h, sh = _e(n.get("stage")), _e(n.get("node_hash")), _e(n.get("stage_hash"))
        y = top(i)
        parts.append(
            f'<g class="dag-node" id="node-{stage}"><title>{stage}\nnode {h}\nstage {sh}</title>'
            f'<rect x="{_X0}" y="{y}" width="{_BOX_W}" height="{_BOX_H}" rx="6" fill="#fff" '
            f'stroke="#3b6fd8"/><text x="{_X0 + 10}" y="{y + 17}" font-weight="bold">{stage}'
            f'</text><text x="{_X0 + 10}" y="{y + 34}" fill="#5a6272">node {h[:16]}… stage '
            f"{sh[:12]}…</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def outside_parents(nodes: Sequence[Mapping[str, Any]]) -> list[tuple[object, object]]:
    """``(stage, parent)`` of each recorded edge whose parent is no node of ``nodes``
    (a DAG forged to point into another run, or nowhere), in the nodes' order."""
    known = {str(n["node_hash"]) for n in nodes}
    return [
        (n.get("stage"), parent)
        for n in nodes
        for parent in n.get("parents", [])
        if str(parent) not in known
    ]
