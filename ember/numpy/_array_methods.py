"""Operators and NumPy methods of ember.Array and of tracers, installed on both classes.

`x + y`, `x[idx]`, `x.sum()`, `x.T`, `x.astype(...)`, `x.at[idx].set(v)` all forward to
ember.numpy, so they behave the same eagerly and under jit. Reflected operators keep the
operand order (`2 - x` is `subtract(2, x)`).
"""

from __future__ import annotations

from typing import Any

from ember import numpy as jnp
from ember.array import ArrayImpl
from ember.core import traceback_util
from ember.core.trace import Tracer

__all__: list[str] = []


def _defer(name: str, swap: bool = False) -> Any:
    """An operator method calling jnp.<name> (looked up at call time)."""
    def method(self: Any, other: Any) -> Any:
        fn = getattr(jnp, name)
        if isinstance(other, (list, tuple)) or (
                not isinstance(other, (Tracer, ArrayImpl)) and hasattr(other, "__jax_array__")):
            return NotImplemented
        try:
            return fn(other, self) if swap else fn(self, other)
        except TypeError:
            if _is_foreign(other):
                return NotImplemented
            raise
    return method


def _is_foreign(x: Any) -> bool:
    import numpy as np
    return not isinstance(x, (Tracer, ArrayImpl, np.ndarray, np.generic, int, float, bool,
                              complex))


_BINARY = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "left_shift", "rshift": "right_shift", "matmul": "matmul",
}
_COMPARE = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
            "gt": "greater", "ge": "greater_equal"}


def _getitem(self: Any, idx: Any) -> Any:
    return jnp._rewriting_take(self, idx)


def _astype(self: Any, dtype: Any, copy: bool = False, device: Any = None) -> Any:
    return jnp.astype(self, dtype)


def _reshape(self: Any, *shape: Any, order: str = "C") -> Any:
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = tuple(shape[0])
    return jnp.reshape(self, shape, order=order)


def _transpose(self: Any, *axes: Any) -> Any:
    if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], int)):
        axes = axes[0]
    return jnp.transpose(self, axes or None)


def _method(name: str, target: str | None = None) -> Any:
    """A method forwarding to jnp.<target> (looked up at call time, so functions another
    module installs later, such as sort or cumsum, are found)."""
    fname = target or name

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(jnp, fname)(self, *args, **kwargs)
    method.__name__ = name
    method.__qualname__ = name
    return method


_METHODS = ["all", "any", "argmax", "argmin", "argsort", "clip", "conj", "conjugate",
            "cumprod", "cumsum", "diagonal", "dot", "max", "mean", "min", "nonzero",
            "prod", "ptp", "ravel", "repeat", "round", "searchsorted", "sort", "squeeze",
            "std", "sum", "swapaxes", "take", "trace", "var"]
_RENAMED = {"flatten": "ravel"}


def _view(self: Any, dtype: Any = None, type: Any = None) -> Any:
    """The same bits seen as another dtype: lax.bitcast_convert_type, with the last axis
    split (to a narrower dtype) or merged (to a wider one), as NumPy's view."""
    import numpy as np

    from ember import lax
    from ember.core import dtypes
    from ember.core.trace import get_aval
    if type is not None:
        raise NotImplementedError("view: the type argument is not supported")
    if dtype is None:
        return self
    new = dtypes.canonicalize(np.dtype(dtype))
    aval = get_aval(self)
    old = aval.dtype
    x = self
    # bool has no bitcast of its own: go through uint8.
    if old == np.bool_:
        x = lax.convert_element_type(x, np.uint8)
        old = np.dtype(np.uint8)
    target = np.dtype(np.uint8) if new == np.bool_ else new
    if old.itemsize == target.itemsize:
        out = lax.bitcast_convert_type(x, target)
    else:
        if aval.ndim == 0:
            raise ValueError("Changing the dtype of a 0d array is only supported if the "
                             "itemsize is unchanged")
        last = aval.shape[-1]
        if old.itemsize > target.itemsize:
            ratio = old.itemsize // target.itemsize
            out = lax.bitcast_convert_type(x, target)
            out = lax.reshape(out, (*aval.shape[:-1], last * ratio))
        else:
            ratio = target.itemsize // old.itemsize
            if last % ratio:
                raise ValueError("When changing to a larger dtype, its size must be a divisor "
                                 "of the total size in bytes of the last axis of the array.")
            out = lax.reshape(x, (*aval.shape[:-1], last // ratio, ratio))
            out = lax.bitcast_convert_type(out, target)
    if new == np.bool_:
        out = lax.ne(out, lax.convert_element_type(0, np.uint8))
    return out


def _tolist(self: Any) -> Any:
    import numpy as np
    return np.asarray(self).tolist()


def _setitem(self: Any, idx: Any, value: Any) -> None:
    """`x[idx] = y`: JAX's TypeError, pointing to the functional `.at[]` update."""
    raise TypeError(
        f"'{type(self)}' object does not support item assignment. Ember arrays are immutable "
        "(as JAX arrays). Instead of ``x[idx] = y``, use ``x = x.at[idx].set(y)`` or another "
        ".at[] method: https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")


def install(cls: type) -> None:
    """Install operators, methods and properties on an array class (Array or Tracer), each
    a public entry (an error in `x + y` or `x[i]` shows the user's frames only)."""
    before = dict(vars(cls))
    for name, fn in _BINARY.items():
        setattr(cls, f"__{name}__", _defer(fn))
        setattr(cls, f"__r{name}__", _defer(fn, swap=True))
    for name, fn in _COMPARE.items():
        setattr(cls, f"__{name}__", _defer(fn))
    # NumPy arrays and scalars on the left defer to our reflected operators.
    cls.__array_priority__ = 100
    cls.__neg__ = lambda self: jnp.negative(self)
    cls.__pos__ = lambda self: jnp.positive(self)
    cls.__abs__ = lambda self: jnp.absolute(self)
    cls.__invert__ = lambda self: jnp.bitwise_not(self)
    cls.__divmod__ = _defer("divmod")
    cls.__rdivmod__ = _defer("divmod", swap=True)
    cls.__round__ = lambda self, ndigits=None: jnp.round(self, ndigits or 0)
    cls.__getitem__ = _getitem
    cls.__setitem__ = _setitem
    cls.astype = _astype
    cls.reshape = _reshape
    cls.transpose = _transpose
    cls.view = _view
    cls.T = property(lambda self: jnp.transpose(self))
    cls.mT = property(lambda self: jnp.matrix_transpose(self))
    cls.real = property(lambda self: jnp.real(self))
    cls.imag = property(lambda self: jnp.imag(self))
    cls.at = property(lambda self: jnp._IndexUpdateHelper(self))
    cls.__array_namespace__ = lambda self, api_version=None: jnp
    for name in _METHODS:
        setattr(cls, name, _method(name))
    for name, target in _RENAMED.items():
        setattr(cls, name, _method(name, target))
    if not hasattr(cls, "tolist"):
        cls.tolist = _tolist
    # Arrays are immutable, so a copy may share the buffer.
    cls.copy = lambda self, order=None: self
    cls.__copy__ = lambda self: self
    traceback_util.wrap_methods(cls, [name for name, value in vars(cls).items()
                                      if before.get(name) is not value])


install(Tracer)
install(ArrayImpl)
