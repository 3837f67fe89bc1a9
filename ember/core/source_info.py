"""Where in the user's program an operation came from.

Output: `SourceInfo(file, line, function)` of the innermost stack frame outside Ember's own
package (tests and benchmarks count as user code). Recorded on every jaxpr equation, printed
in error messages and, later, carried into HLO metadata.
"""

from __future__ import annotations

import os
import sys
from types import TracebackType
from typing import NamedTuple

_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class SourceInfo(NamedTuple):
    file: str
    line: int
    function: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} ({self.function})"


UNKNOWN = SourceInfo("<unknown>", 0, "<unknown>")


def user_frame() -> SourceInfo:
    """The innermost frame whose file is not part of the ember package."""
    frame = sys._getframe(1)
    inside = _INSIDE
    while frame is not None:
        filename = frame.f_code.co_filename
        known = inside.get(filename)
        if known is None:  # (each file tested once: every traced operation walks here)
            known = inside[filename] = (filename.startswith(_EMBER_DIR)
                                        and not filename.endswith("__main__.py"))
        if not known:
            return SourceInfo(filename, frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return UNKNOWN


_INSIDE: dict[str, bool] = {}  # file name -> part of the ember package (not __main__.py)


def innermost_user_frame(tb: TracebackType | None) -> SourceInfo | None:
    """The deepest frame of a traceback that is user code (where an error surfaced)."""
    found = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if not code.co_filename.startswith(_EMBER_DIR):
            found = SourceInfo(code.co_filename, tb.tb_lineno, code.co_name)
        tb = tb.tb_next
    return found


def locate_error(e: BaseException) -> None:
    """Append the user's file:line to a plain TypeError/ValueError raised while tracing.

    Only exact TypeError and ValueError are touched (subclasses carry their own messages),
    and each error at most once; the exception object, its type and traceback are kept.
    """
    if type(e) not in (TypeError, ValueError) or getattr(e, "_ember_located", False):
        return
    where = innermost_user_frame(e.__traceback__)
    if where is None or not e.args or not isinstance(e.args[0], str):
        return
    e.args = (f"{e.args[0]}\n  (at {where})", *e.args[1:])
    e._ember_located = True  # type: ignore[attr-defined]
