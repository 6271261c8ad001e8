"""A tiny DOM for tests that read the HTML aborist writes (the server's pages, the audit
report): every element with its attributes, its text and children in order. Built on
the standard library's tokenizer; it does not repair markup, so the tests see what was
written."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

__all__ = ["Dom", "Node"]

_VOID = frozenset({"meta", "br", "img", "input", "link", "hr", "rect", "line", "path", "stop"})


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    content: list[str | Node] = field(default_factory=list)  # text and elements, in order

    @property
    def children(self) -> list[Node]:
        return [c for c in self.content if isinstance(c, Node)]

    def text(self) -> str:
        """All the text inside the element, in document order."""
        return "".join(c if isinstance(c, str) else c.text() for c in self.content)

    all_text = text

    def cls(self) -> list[str]:
        return self.attrs.get("class", "").split()


class Dom(HTMLParser):
    """The document's tree (``root``) and its elements in document order (``all``)."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]
        self.all: list[Node] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].content.append(node)
        self.all.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].content.append(node)
        self.all.append(node)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].content.append(data)

    def by_id(self, id_: str) -> Node:
        return next(n for n in self.all if n.attrs.get("id") == id_)

    def text(self) -> str:
        return self.root.text()

    def find(self, tag: str, cls: str | None = None) -> list[Node]:
        return [n for n in self.all if n.tag == tag and (cls is None or cls in n.cls())]
