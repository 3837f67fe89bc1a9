"""Host-side helpers of jax.numpy for ember.numpy: NumPy's print options and array
printing (get_printoptions, printoptions, set_printoptions, array_repr, array_str), file
and string input/output (save, savez, load, fromstring, fromfile) and ComplexWarning.

Input/Output: as NumPy's functions (these run on the host, never traced); load and
fromstring return ember arrays. Invariant (JAX's): fromfile raises, since reading a file
is a side effect a traced program must not hide.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.numpy as jnp

__all__ = ["ComplexWarning", "array_repr", "array_str", "get_printoptions", "printoptions",
           "set_printoptions", "save", "savez", "load", "fromstring", "fromfile"]

ComplexWarning = np.exceptions.ComplexWarning
array_repr = np.array_repr
array_str = np.array_str
save = np.save
savez = np.savez


def get_printoptions() -> dict[str, Any]:
    """NumPy's current print options (they govern how ember arrays print)."""
    return np.get_printoptions()


def printoptions(*args: Any, **kwargs: Any) -> Any:
    """A context manager setting NumPy's print options in its block."""
    return np.printoptions(*args, **kwargs)


def set_printoptions(*args: Any, **kwargs: Any) -> None:
    """Set NumPy's print options."""
    return np.set_printoptions(*args, **kwargs)


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """np.load, an array result made an ember array (other results, e.g. an .npz
    archive, as NumPy returns them)."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        try:
            out = jnp.asarray(out)
        except (TypeError, AssertionError):
            pass
    return out


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Any:
    """The numbers in a text string, separated by `sep`, as an ember array."""
    return jnp.asarray(np.fromstring(string=string, dtype=dtype, count=count, sep=sep))


def fromfile(*args: Any, **kwargs: Any) -> Any:
    """Not available: reading a file may be impure (JAX's error)."""
    raise NotImplementedError(
        "jnp.fromfile() is not implemented because it may be non-pure and thus unsafe for "
        "use with JIT and other JAX transformations. Consider using "
        "jnp.asarray(np.fromfile(...)) instead, although care should be taken if "
        "np.fromfile is used within a jax transformations because of its potential "
        "side-effect of consuming the file object; for more information see "
        "https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions")
