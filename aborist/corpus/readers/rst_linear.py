"""docutils' reST parser and transforms in time linear in the input.

Three places where docutils costs more than linear time, and what this module does:

* **Nested list parses copy the rest of the input.** Every list, field list, option
  list, line block and run of explicit markup (targets, footnotes, citations,
  substitution definitions, comments, directives) starts a nested state machine on
  ``input_lines[offset:]``: a copy of every remaining line, so a file that alternates
  such constructs with paragraphs is quadratic. Here an open-ended slice is a lazy
  :class:`_Tail` (copied only if something reads it), and a nested list parse is given
  a window of at least :data:`WINDOW` lines that ends before a line the construct
  cannot span. When the nested parse reaches the end of its window, the enclosing
  parser resumes at the cut line, where it starts the same kind of construct again
  (``Body`` handles a bullet, an enumerator, a field, ``..`` as the nested list does):
  the text is the same, at most one list is two lists. Line blocks, whose text is one
  block, and quoted literal blocks (``::`` then flush-left ``> …`` lines) get an exact
  window instead, holding the line where they must end.
* **``PropagateTargets``** moves the ids of ``.. _name:`` onto the next element, and
  finds that element through its parent's child list (``list.index``) once per
  target: quadratic in targets per section. It changes ids only, never text, so it is
  not applied.
* **Symbol footnotes** (``[*]_``) are labelled ``*``, ``†`` … and then the symbols
  doubled, tripled …: the k-th label is k / 10 characters long, so their text grows
  with the square of their number. Labels here are as docutils makes them for the
  first :data:`SYMBOL_REPEAT_LIMIT` rounds (100 footnotes) and stay that long after.
"""

from __future__ import annotations

import re
from typing import Any

import docutils.statemachine
from docutils.parsers.rst import Parser, roles, states
from docutils.readers import standalone
from docutils.statemachine import StringList
from docutils.transforms import references

__all__ = ["SYMBOL_REPEAT_LIMIT", "WINDOW", "LinearParser", "LinearReader"]

WINDOW = 1_000
"""Lines a nested list parse is given at least before its input is cut."""
SYMBOL_REPEAT_LIMIT = 10
_LINE_BLOCK_LINE = re.compile(r"\|( +|$)")


def _flush(line: str) -> bool:
    """A line no construct's indented body continues over (docutils' own test in
    ``StringList.get_indented``)."""
    return line != "" and line[0] != " "


def _next_index(lines: _Lines, start: int, kind: str) -> int:
    """The first index ≥ ``start`` of a line of ``kind`` in ``lines`` (``len`` if none):
    ``flush``, ``blank``, or ``lb_end`` (a line at which a line block must have ended:
    blank, or flush and not ``| …``). One backward pass per list and kind, cached on the list."""
    data = lines.data
    cache = lines.__dict__.setdefault("_aborist_next", {})
    table = cache.get(kind)
    if table is None or len(table) != len(data) + 1:
        table = [len(data)] * (len(data) + 1)
        for i in range(len(data) - 1, -1, -1):
            line = data[i]
            if kind == "flush":
                hit = _flush(line)
            elif kind == "blank":
                hit = not line.strip(" ")
            else:
                hit = not line.strip(" ") or (_flush(line) and not _LINE_BLOCK_LINE.match(line))
            table[i] = i if hit else table[i + 1]
        cache[kind] = table
    return int(table[min(start, len(data))])


class _Lines(StringList):
    """A StringList whose open-ended slices (``lines[offset:]``) are lazy."""

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice) and i.stop is None and i.step in (None, 1):
            return _Tail.lazy(self, i.start or 0)
        return super().__getitem__(i)


class _Tail(_Lines):
    """``source[start:]``, copied from ``source`` only when read. docutils' slice copies
    ``data`` and ``items`` and links the copy to its parent; so does this, on first use."""

    _source: _Lines | None = None
    _start = 0
    _data: list[str] | None = None
    _items: list[Any] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # what docutils' own ``self.__class__(...)`` (slices, sums) makes: a plain list
        self._data, self._items = [], []
        super().__init__(*args, **kwargs)

    @classmethod
    def lazy(cls, source: _Lines, start: int) -> _Tail:
        tail = cls.__new__(cls)  # no copy here
        tail._source, tail._start = source, start
        tail.parent = source  # type: ignore[assignment]
        tail.parent_offset = start
        return tail

    def _materialize(self) -> None:
        if self._data is None:
            assert self._source is not None
            self._data = self._source.data[self._start :]
            self._items = self._source.items[self._start :]

    @property
    def data(self) -> list[str]:
        self._materialize()
        assert self._data is not None
        return self._data

    @data.setter
    def data(self, value: list[str]) -> None:
        self._materialize()
        self._data = value

    @property
    def items(self) -> list[Any]:
        self._materialize()
        assert self._items is not None
        return self._items

    @items.setter
    def items(self, value: list[Any]) -> None:
        self._materialize()
        self._items = value


class _Windowed(states.RSTState):
    """Mixed into every state class: nested list parses over a window (module doc)."""

    # docutils' cache of nested machines is shared by its own states: keep ours apart
    nested_sm_cache: list[Any] = []  # noqa: RUF012

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # docutils' nested machines use its module's state classes: use these instead
        self.nested_sm_kwargs = {"state_classes": _STATE_CLASSES, "initial_state": "Body"}

    def nested_list_parse(
        self, block: Any, input_offset: int, node: Any, initial_state: str, *args: Any,
        **kwargs: Any,
    ) -> tuple[int, bool]:  # fmt: skip
        if not isinstance(block, _Tail) or block._data is not None:
            whole: tuple[int, bool] = super().nested_list_parse(
                block, input_offset, node, initial_state, *args, **kwargs
            )
            return whole
        source, start = block._source, block._start
        assert source is not None
        if initial_state == "LineBlock":  # the window holds the line where it must end
            cut = min(_next_index(source, start + WINDOW, "lb_end") + 1, len(source.data))
        else:
            cut = _next_index(source, start + WINDOW, "flush")
        window: _Lines = source[start:cut] if cut < len(source.data) else block
        offset: int
        blank_finish: bool
        offset, blank_finish = super().nested_list_parse(
            window, input_offset, node, initial_state, *args, **kwargs
        )
        if window is not block and offset >= input_offset + len(window.data):
            # the nested parse reached the cut: resume the enclosing one at the cut line
            return input_offset + len(window.data) - 1, True
        return offset, blank_finish

    def nested_parse(
        self,
        block: StringList,
        input_offset: int,
        node: Any = None,
        match_titles: bool = False,
        state_machine_class: Any = None,
        state_machine_kwargs: dict[Any, Any] | None = None,
    ) -> int:
        """A quoted literal block (``::`` then ``> …`` lines, flush left) is parsed on
        ``input_lines[offset:]`` too; it ends at its first blank line, so it gets a
        window that holds that line."""
        options = state_machine_kwargs or {}
        if (
            isinstance(block, _Tail)
            and block._data is None
            and options.get("initial_state") == "QuotedLiteralBlock"
        ):
            source, start = block._source, block._start
            assert source is not None
            cut = min(_next_index(source, start, "blank") + 1, len(source.data))
            block = source[start:cut]
        offset: int = super().nested_parse(
            block, input_offset, node, match_titles, state_machine_class, state_machine_kwargs
        )
        return offset


_STATE_CLASSES = tuple(
    type(cls.__name__, (_Windowed, cls), {"__module__": __name__}) for cls in states.state_classes
)


class LinearParser(Parser):
    """docutils' reST parser with :class:`_Windowed` states over :class:`_Lines`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.state_classes = _STATE_CLASSES

    def parse(self, inputstring: str, document: Any) -> None:
        # docutils.parsers.rst.Parser.parse, with the input lines as _Lines
        self.setup_parse(inputstring, document)
        self.document.settings.setdefault("tab_width", 8)
        self.document.settings.setdefault("syntax_highlight", "long")
        self.statemachine = states.RSTStateMachine(
            state_classes=self.state_classes,
            initial_state=self.initial_state,
            debug=document.reporter.debug_flag,
        )
        lines = docutils.statemachine.string2lines(
            inputstring, tab_width=document.settings.tab_width, convert_whitespace=True
        )
        limit = self.document.settings.line_length_limit
        too_long = next((i for i, line in enumerate(lines) if len(line) > limit), None)
        if too_long is not None:
            error = f"Line {too_long + 1} exceeds the line-length-limit."
            self.document.append(self.document.reporter.error(error))
        else:
            source = document.get("source")
            self.statemachine.run(_Lines(lines, source), document, inliner=self.inliner)
        registered = getattr(roles, "_roles")  # noqa: B009 (private, as in docutils)
        if "" in registered:  # restore the "default" default role after parsing
            del registered[""]
        self.finish_parse()


class _Footnotes(references.Footnotes):
    def apply(self) -> None:
        symbols = self.symbols
        if len(self.document.symbol_footnotes) > len(symbols) * SYMBOL_REPEAT_LIMIT:
            setattr(self, "symbols", _CappedSymbols(symbols))  # noqa: B010
        super().apply()


class _CappedSymbols(list):  # type: ignore[type-arg]
    """``symbols[i] * (reps + 1)`` with ``reps`` never above the limit: docutils computes
    the label as ``self.symbols[index] * (reps + 1)``, so the symbol string caps it."""

    def __getitem__(self, index: Any) -> Any:
        return _CappedSymbol(super().__getitem__(index))


class _CappedSymbol(str):
    def __mul__(self, n: Any) -> str:
        return str.__mul__(self, min(int(n), SYMBOL_REPEAT_LIMIT))


class LinearReader(standalone.Reader):  # type: ignore[type-arg]
    """The standalone reader without ``PropagateTargets`` and with capped symbol labels."""

    def get_transforms(self) -> list[Any]:
        out = []
        for transform in super().get_transforms():
            if transform is references.PropagateTargets:
                continue
            out.append(_Footnotes if transform is references.Footnotes else transform)
        return out
