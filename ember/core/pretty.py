"""A small Wadler/Lindig pretty printer: documents of text, breaks, nests and groups.

Input: a document tree built with `text`, `brk`, `nest`, `group`, `concat`, `join`.
Output: a string of at most `width` columns where possible.
Invariant (matches JAX's printer, so jaxprs break their lines where JAX's do): a group is
laid out flat when the group itself fits in the rest of the line; what follows the group is
not measured. Breaks of a flat group print their text; breaks of a broken group start a new
line indented by the enclosing nests.
"""

from __future__ import annotations

from collections.abc import Sequence


class Doc:
    __slots__ = ()

    def __add__(self, other: Doc) -> Doc:
        return concat([self, other])

    def format(self, width: int = 80) -> str:
        return _format(self, width)

    def __str__(self) -> str:
        return self.format()


class _Text(Doc):
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


class _Concat(Doc):
    __slots__ = ("children",)

    def __init__(self, children: Sequence[Doc]):
        self.children = list(children)


class _Break(Doc):
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


class _Group(Doc):
    __slots__ = ("child",)

    def __init__(self, child: Doc):
        self.child = child


class _Nest(Doc):
    __slots__ = ("n", "child")

    def __init__(self, n: int, child: Doc):
        self.n = n
        self.child = child


_FLAT, _BREAK = 0, 1
_NIL = _Concat([])


def nil() -> Doc:
    return _NIL


def text(s: str) -> Doc:
    return _Text(s)


def brk(s: str = " ") -> Doc:
    return _Break(s)


def group(doc: Doc) -> Doc:
    return _Group(doc)


def nest(n: int, doc: Doc) -> Doc:
    return _Nest(n, doc)


def concat(docs: Sequence[Doc]) -> Doc:
    docs = list(docs)
    return docs[0] if len(docs) == 1 else _Concat(docs)


def join(sep: Doc, docs: Sequence[Doc]) -> Doc:
    out: list[Doc] = []
    for i, d in enumerate(docs):
        if i:
            out.append(sep)
        out.append(d)
    return concat(out) if out else _NIL


def _fits(doc: Doc, room: int) -> bool:
    """Whether `doc`, laid out flat, fits in `room` columns (a hard break ends the test)."""
    stack: list[tuple[int, Doc]] = [(_FLAT, doc)]
    while room >= 0 and stack:
        mode, d = stack.pop()
        if isinstance(d, _Text):
            room -= len(d.text)
        elif isinstance(d, _Concat):
            stack.extend((mode, c) for c in reversed(d.children))
        elif isinstance(d, _Break):
            if mode == _BREAK:
                return True
            room -= len(d.text)
        elif isinstance(d, _Nest):
            stack.append((mode, d.child))
        elif isinstance(d, _Group):
            stack.append((_FLAT, d.child))
    return room >= 0


def _format(doc: Doc, width: int) -> str:
    lines: list[str] = []
    line: list[str] = []
    col = 0
    stack: list[tuple[int, int, Doc]] = [(0, _BREAK, doc)]
    while stack:
        indent, mode, d = stack.pop()
        if isinstance(d, _Text):
            line.append(d.text)
            col += len(d.text)
        elif isinstance(d, _Concat):
            stack.extend((indent, mode, c) for c in reversed(d.children))
        elif isinstance(d, _Break):
            if mode == _BREAK:
                lines.append("".join(line))
                line = [" " * indent]
                col = indent
            else:
                line.append(d.text)
                col += len(d.text)
        elif isinstance(d, _Nest):
            stack.append((indent + d.n, mode, d.child))
        elif isinstance(d, _Group):
            flat = _fits(d.child, width - col)
            stack.append((indent, _FLAT if flat else _BREAK, d.child))
    lines.append("".join(line))
    return "\n".join(lines)
