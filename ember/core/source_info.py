"""Where in the user's program an operation came from.

Output: `SourceInfo(file, line, function)` of the innermost stack frame outside Ember's own
package (tests and benchmarks count as user code). Recorded on every jaxpr equation, printed
in error messages and, later, carried into HLO metadata.
"""

from __future__ import annotations

import os
import sys
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
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_EMBER_DIR) or filename.endswith("__main__.py"):
            return SourceInfo(filename, frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return UNKNOWN
