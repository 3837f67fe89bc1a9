"""Complex-number primitives: real, imag, complex and conj, as JAX has them.

Input: ShapedArrays (abstract eval), NumPy arrays (eager), HLO instructions (lowering).
Output:
  real(z), imag(z): complex64 -> float32, complex128 -> float64 (JAX: complex input only);
  complex(x, y): x + i y from two float32 (or two float64) operands, broadcasting as the
    elementwise primitives do;
  conj(x, input_dtype): the conjugate; a real input becomes a complex value with a zero
    imaginary part (as JAX's lax.conj), `input_dtype` records the input's dtype so the
    transpose can return a real cotangent for a real input.
Invariants: all four are linear. Their transposes follow JAX's convention (no conjugation):
  real^T(c) = complex(c, 0), imag^T(c) = complex(0, -c), complex^T(c) = (real c, -imag c),
  conj^T(c) = conj(c) (complex input) or real(c) (real input), so that `grad` of a real
  function of complex inputs returns the conjugated gradient, as JAX's does.
HLO: real, imag and complex are XLA opcodes; conj lowers to complex(real z, -imag z).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.core import ad, dtypes
from ember.core.aval import ShapedArray
from ember.core.primitive import Primitive
from ember.core.trace import get_aval
from ember.hlo.evaluator import elementwise as ew
from ember.prims import _ad, _batching
from ember.prims import _lower as L
from ember.prims import _rules as R

_COMPLEX_OF = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}


def complex_dtype_of(dtype: np.dtype) -> np.dtype:
    """The complex dtype whose parts are `dtype` (f32 -> c64); complex dtypes map to
    themselves, other real dtypes to the default complex type."""
    dtype = np.dtype(dtype)
    if dtypes.kind(dtype) == "c":
        return dtype
    return _COMPLEX_OF.get(dtype, dtypes.complex128 if dtypes.x64_enabled()
                           else dtypes.complex64)


def _part_dtype(dtype: np.dtype) -> np.dtype:
    """c64 -> f32, c128 -> f64."""
    return np.empty((), dtype).real.dtype


# -- real and imag --------------------------------------------------------------------------------

def _part(name: str, opcode: str) -> Primitive:
    prim = Primitive(name)
    prim.hlo_opcode = opcode  # type: ignore[attr-defined]

    @prim.def_abstract_eval
    def _abstract(x: ShapedArray) -> ShapedArray:
        R.check_dtype_kinds(name, x, "c")
        return ShapedArray(x.shape, _part_dtype(x.dtype), x.weak_type)

    rule = ew.ELEMENTWISE[opcode]
    prim.def_impl(lambda x: rule(np.asarray(x)))
    prim.def_lowering(L.elementwise(opcode))
    return prim


real_p = _part("real", "real")
imag_p = _part("imag", "imag")

# -- complex ------------------------------------------------------------------------------------
complex_p = Primitive("complex")
complex_p.hlo_opcode = "complex"  # type: ignore[attr-defined]


@complex_p.def_abstract_eval
def _complex_abstract(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    # JAX's set for complex is {float32, float64}: float16 is refused by name
    for i, a in enumerate((x, y)):
        if a.dtype not in _COMPLEX_OF:
            raise TypeError(f"complex does not accept dtype {a.dtype.name} at position {i}. "
                            f"Accepted dtypes at position {i} are subtypes of float32, "
                            "float64.")
    dtype = R.check_same_dtypes("complex", x, y)
    return ShapedArray(R.broadcasting_shape("complex", x, y), _COMPLEX_OF[dtype],
                       R.all_weak(x, y))


@complex_p.def_impl
def _complex_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return ew.ELEMENTWISE["complex"](np.asarray(x), np.asarray(y))


complex_p.def_lowering(L.elementwise("complex"))

# -- conj --------------------------------------------------------------------------------------
conj_p = Primitive("conj")


@conj_p.def_abstract_eval
def _conj_abstract(x: ShapedArray, *, input_dtype: Any) -> ShapedArray:
    R.check_dtype_kinds("conj", x, R.FLOAT_OR_COMPLEX)
    return ShapedArray(x.shape, complex_dtype_of(x.dtype), x.weak_type)


@conj_p.def_impl
def _conj_impl(x: np.ndarray, *, input_dtype: Any) -> np.ndarray:
    x = np.asarray(x)
    out = np.empty(x.shape, complex_dtype_of(x.dtype))
    out.real = x.real
    # a real input gets a +0 imaginary part (JAX's complex(x, 0), not a negated zero)
    out.imag = -x.imag if dtypes.kind(x.dtype) == "c" else 0
    return out


@conj_p.def_lowering
def _conj_lowering(ctx: Any, x: Any, *, input_dtype: Any) -> Any:
    aval = ctx.avals_in[0]
    if dtypes.kind(aval.dtype) != "c":
        re = x
        im = L.full_like(ctx, 0, aval)
    else:
        re = ctx.b.op("real", (x,))
        im = ctx.b.negate(ctx.b.op("imag", (x,)))
    return ctx.b.op("complex", (re, im))


# -- autodiff: all four are linear -----------------------------------------------------------------

def real(x: Any) -> Any:
    return real_p.bind(x)


def imag(x: Any) -> Any:
    return imag_p.bind(x)


def make_complex(x: Any, y: Any) -> Any:
    return complex_p.bind(x, y)


def conj(x: Any) -> Any:
    return conj_p.bind(x, input_dtype=get_aval(x).dtype)


for _p in (real_p, imag_p, complex_p, conj_p):
    ad.deflinear(_p)


def _zero_scalar(ct: Any) -> np.ndarray:
    # a rank-0 zero that complex broadcasts, printed as a literal (JAX's transposes)
    return np.zeros((), get_aval(ct).dtype)


real_p.def_transpose(lambda ct, x: [make_complex(ct, _zero_scalar(ct))])
imag_p.def_transpose(lambda ct, x: [make_complex(_zero_scalar(ct), _ad.neg(ct))])


def _complex_transpose(ct: Any, x: Any, y: Any) -> list:
    out = []
    for v, part in ((x, real(ct)), (y, _ad.neg(imag(ct)))):
        out.append(_ad.unbroadcast(part, v.aval) if ad.is_undefined_primal(v) else None)
    return out


complex_p.def_transpose(_complex_transpose)


def _conj_transpose(ct: Any, x: Any, *, input_dtype: Any) -> list:
    if dtypes.kind(np.dtype(input_dtype)) == "c":
        return [conj(ct)]
    return [real(ct)]


conj_p.def_transpose(_conj_transpose)

for _p in (real_p, imag_p, complex_p, conj_p):
    _batching.elementwise_rule(_p)
