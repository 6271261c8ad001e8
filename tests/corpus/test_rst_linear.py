"""reST in linear time (docs/corpus.md, "Linear time"; aborist/corpus/readers/rst_linear.py).

Three checks, none timed: the nested list parses are handed O(n) lines in all, not the
rest of the document each time; cutting their input into windows changes no text (the
window forced down to one line, compared with the default and with docutils' own
parser and reader); and symbol footnote labels stop growing."""

from __future__ import annotations

from typing import Any

import pytest
from docutils.parsers.rst import Parser, states
from docutils.readers import standalone

from aborist.corpus.readers import rst, rst_linear
from aborist.corpus.readers.rst import rst_blocks


def _numbered(template: str, count: int) -> str:
    return "".join(template.format(i=i) for i in range(count))


HOSTILE = {
    "list after each paragraph": "- a{i}\n\np {i}\n\n",
    "target before each paragraph": ".. _t{i}:\n\np `t{i}`_ q\n\n",
    "footnote after each paragraph": "p [#f{i}]_ q\n\n.. [#f{i}] note {i}\n\n",
    "comment after each paragraph": "p {i}\n\n.. c{i}\n\n",
    "field list after each paragraph": ":f{i}: v\n\np {i}\n\n",
    "line block after each paragraph": "| l{i}\n| m\n\np {i}\n\n",
    "definition after each paragraph": "t{i}\n  d\n\np {i}\n\n",
}

DOCUMENT = """\
Title
=====

Intro with `a link`_, [#]_, [#named]_, [*]_, [CIT]_ and |sub| and `anon`__.

.. _a link: http://example.org/
.. [#] First auto footnote.
.. [#named] Named footnote
   over two lines.
.. [*] A symbol footnote.
.. [CIT] A citation.
.. |sub| replace:: substituted text
__ http://example.org/anon

.. _internal:

Section
-------

- bullet one
- bullet two

  second paragraph of two
- bullet three

  - nested a
  - nested b

1. first
2. second
#. third

term
  definition
other term : classifier
  other definition

:field: value
:other field: other value
  continued

-a         option a
--long     option long

| line one
| line two
|   indented line

.. note:: A note
   with more text.

   And a second paragraph.

.. c a comment
   that goes on

::

  literal block

> quoted literal

Quoted::

> one quoted line
> and another

After the quote.

Back to `internal`_ text.
"""

QUOTED = "p{i}::\n\n> q{i}\n> r{i}\n\n"


def _texts(raw: str) -> list[tuple[str, str, int]]:
    return [(b.text, b.raw, b.level) for b in rst_blocks(raw)]


def _lines_handed_to_list_parses(monkeypatch: pytest.MonkeyPatch, raw: str) -> int:
    total = [0]
    inner = states.RSTState.nested_list_parse

    def counting(self: Any, block: Any, *args: Any, **kwargs: Any) -> Any:
        total[0] += len(block.data)
        return inner(self, block, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(states.RSTState, "nested_list_parse", counting)
        rst_blocks(raw)
    return total[0]


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_nested_list_parses_get_linear_input(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    count = 600
    raw = _numbered(HOSTILE[name], count)
    n_lines = raw.count("\n")
    monkeypatch.setattr(rst_linear, "WINDOW", 20)
    handed = _lines_handed_to_list_parses(monkeypatch, raw)
    # docutils hands each of the 600 nested parses the rest of the file: ~n²/2 lines
    assert 0 < handed <= (20 + 6) * count < n_lines * count // 4


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_text_is_all_read(name: str) -> None:
    blocks = rst_blocks(_numbered(HOSTILE[name], 600))
    texts = {b.text for b in blocks}
    assert "p 599" in texts or "p t599 q" in texts or "p 599 q" in texts


@pytest.mark.parametrize("window", [1, 2, 7])
def test_windows_change_no_text(monkeypatch: pytest.MonkeyPatch, window: int) -> None:
    documents = [DOCUMENT, DOCUMENT * 3, _numbered(QUOTED, 40)]
    documents += [_numbered(t, 40) for t in HOSTILE.values()]
    expected = [_texts(d) for d in documents]
    assert any(t[0] == "substituted text" or "substituted text" in t[0] for t in expected[0])
    monkeypatch.setattr(rst_linear, "WINDOW", window)
    assert [_texts(d) for d in documents] == expected


def test_same_text_as_docutils_own_parser_and_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    documents = [DOCUMENT, DOCUMENT * 2, _numbered(QUOTED, 30)]
    documents += [_numbered(t, 30) for t in HOSTILE.values()]
    ours = [_texts(d) for d in documents]
    monkeypatch.setattr(rst, "LinearReader", standalone.Reader)
    monkeypatch.setattr(rst, "LinearParser", Parser)
    assert [_texts(d) for d in documents] == ours
    assert ours[0][1][0] == "Intro with a link, 1, 2, *, CIT and substituted text and anon."


def test_quoted_literal_blocks_are_parsed_on_their_own_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    handed = [0]
    inner = states.RSTState.nested_parse

    def counting(self: Any, block: Any, *args: Any, **kwargs: Any) -> Any:
        options = kwargs.get("state_machine_kwargs") or (args[4] if len(args) > 4 else None)
        if (options or {}).get("initial_state") == "QuotedLiteralBlock":
            handed[0] += len(block.data)
        return inner(self, block, *args, **kwargs)

    monkeypatch.setattr(states.RSTState, "nested_parse", counting)
    blocks = rst_blocks(_numbered(QUOTED, 600))
    assert 0 < handed[0] <= 3 * 600  # the two quoted lines and the blank after them
    assert "> q599 > r599" in {b.text for b in blocks}


def test_symbol_footnote_labels_stop_growing() -> None:
    count = 400
    raw = "p" + " [*]_" * count + "\n\n" + "".join(f".. [*] n{i}\n" for i in range(count))
    ((para, *_),) = [[b.text for b in rst_blocks(raw)]]
    labels = para.split()[1:]
    assert len(labels) == count
    # docutils' labels for the first 100: *, †, ‡ … then doubled, tripled …
    assert labels[0] == "*" and labels[10] == "**" and labels[99] == labels[9][0] * 10
    assert max(len(label) for label in labels) == rst_linear.SYMBOL_REPEAT_LIMIT
