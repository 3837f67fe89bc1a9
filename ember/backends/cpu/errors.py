"""Exceptions of the CPU backend.

`UnsupportedOnCpu` means "run this module elsewhere" (the dispatcher catches it and uses the
interpreter); `CpuCompileError` means the backend failed on a module it should handle: a
bug, reported with the LLVM message instead of crashing the process.
"""

from __future__ import annotations

from collections.abc import Iterable

from ember.backends import Unsupported


class UnsupportedOnCpu(Unsupported):
    """The module holds opcodes (or element types) the CPU backend does not compile."""

    def __init__(self, opcodes: Iterable[str], detail: str = "") -> None:
        self.opcodes = tuple(sorted(set(opcodes)))
        msg = f"the CPU backend does not compile: {', '.join(self.opcodes)}"
        super().__init__(msg + (f" ({detail})" if detail else ""))


class CpuCompileError(RuntimeError):
    """LLVM rejected the generated code, or code generation hit an internal error."""
