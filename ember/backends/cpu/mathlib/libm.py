"""The C library functions generated code may still call, and the helper that calls them.

Every transcendental now has a vectorizable implementation in this package, so
`LIBM_UNARY` and `LIBM_BINARY` (opcode -> C function called per element, the lists a
benchmark prints as "libm") are empty. The C library remains only on slow paths: the
precise variants of sin, cos and tan send lanes with |x| beyond the fast reduction's range
to `sin`/`cos`/`tan` (`SLOW_PATH`), in the kernel's rerun copy.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.fp import intrinsic

LIBM_UNARY: dict[str, str] = {}
LIBM_BINARY: dict[str, str] = {}
SLOW_PATH: dict[str, str] = {"sine": "sin", "cosine": "cos", "tan": "tan"}

_DBL = ir.DoubleType()


def libm_call(b: ir.IRBuilder, cname: str, args: list[ir.Value]) -> ir.Value:
    fn = intrinsic(b.module, cname, _DBL, [_DBL] * len(args))
    if "nounwind" not in fn.attributes:
        fn.attributes.add("nounwind")
    return b.call(fn, args)
