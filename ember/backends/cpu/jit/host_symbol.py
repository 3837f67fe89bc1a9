"""Host symbols: names that generated object code calls and the JIT linker resolves to
addresses in this process, published once per process.

Input: `HostSymbol(bind)`, where `bind(llvm)` finds or builds the code and publishes its
addresses with llvmlite's `add_symbol` (`llvm` is the binding module); or
`HostSymbol.trampoline(symbol, fn, argtypes, ir_type)`, a Python function native code calls
through a ctypes callback. Output: `register(llvm)` runs `bind` the first time (under a
lock) and returns its result then and on every later call; `declare(module)` declares a
trampoline's function in a generated module.
Invariants: object code names only symbols, never addresses, so the disk cache's objects
stay valid in any process, and each `register` runs before object code naming its symbols
is linked (jit/llvm_target.SYMBOL_PROVIDERS). `add_symbol` is process-global, so binding
once is enough. A `bind` that raises binds nothing: a later `register` tries again. A
trampoline's ctypes callback lives as long as the process (native code calls it by
address); it takes the GIL on entry (ctypes), so native code may call it from any thread.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:  # llvmlite.ir stays unimported until code is generated (threads.py, which
    import llvmlite.ir as ir  # imports this module, is imported by `import ember`)

T = TypeVar("T")


class HostSymbol(Generic[T]):
    """Symbols bound for the JIT linker by `bind(llvm) -> T`, once per process."""

    def __init__(self, bind: Callable[[Any], T]) -> None:
        self._bind = bind
        self._lock = threading.Lock()
        self._bound = False
        self._result: T | None = None

    def register(self, llvm: Any) -> T:
        """Bind (the first call) and return what `bind` returned."""
        if not self._bound:
            with self._lock:
                if not self._bound:
                    self._result = self._bind(llvm)
                    self._bound = True
        return self._result  # type: ignore[return-value]

    @property
    def bound(self) -> bool:
        return self._bound

    @property
    def result(self) -> T | None:
        """What `bind` returned (None before the first `register`)."""
        return self._result

    @staticmethod
    def addresses(table: Callable[[], dict[str, int]]) -> HostSymbol[None]:
        """Symbols bound to the addresses `table()` gives (called at the first register)."""
        def bind(llvm: Any) -> None:
            for name, address in table().items():
                llvm.add_symbol(name, address)
        return HostSymbol(bind)

    @staticmethod
    def trampoline(symbol: str, fn: Callable[..., None], argtypes: Sequence[Any],
                   ir_type: ir.FunctionType | None = None) -> Trampoline:
        """`symbol` calling the Python function `fn` (ctypes `argtypes`, no result);
        `ir_type`, its LLVM type, for `declare` (where the caller declares it itself,
        None)."""
        return Trampoline(symbol, fn, argtypes, ir_type)


class Trampoline(HostSymbol[None]):
    """One symbol bound to a ctypes callback of a Python function."""

    def __init__(self, symbol: str, fn: Callable[..., None], argtypes: Sequence[Any],
                 ir_type: ir.FunctionType | None = None) -> None:
        self.symbol = symbol
        self.ir_type = ir_type
        # kept alive for the life of the process: native code calls it by address
        self._callback = ctypes.CFUNCTYPE(None, *argtypes)(fn)
        self.address: int = ctypes.cast(self._callback, ctypes.c_void_p).value or 0
        super().__init__(lambda llvm: llvm.add_symbol(symbol, self.address))

    def declare(self, module: ir.Module) -> ir.Function:
        """The symbol's declaration in `module` (made once per module)."""
        import llvmlite.ir

        if self.ir_type is None:
            raise TypeError(f"{self.symbol}: a trampoline made without ir_type")
        fn = module.globals.get(self.symbol)
        if fn is None:
            fn = llvmlite.ir.Function(module, self.ir_type, name=self.symbol)
        return fn
