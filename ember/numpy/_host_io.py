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
    """Return the print options that govern how arrays are printed.

    The counterpart of :func:`numpy.get_printoptions`: Ember arrays print through NumPy,
    so these are NumPy's own options.

    Returns:
        A dict of the current options (``precision``, ``threshold``, ``linewidth``, ...).

    Example:
        >>> jnp.get_printoptions()["precision"]
        8
    """
    return np.get_printoptions()


def printoptions(*args: Any, **kwargs: Any) -> Any:
    """Set the print options for the duration of a ``with`` block.

    The counterpart of :func:`numpy.printoptions` (the options are NumPy's, which Ember
    arrays use when they print).

    Args:
        *args: the options, as :func:`set_printoptions` takes them.
        **kwargs: the options by name.

    Returns:
        A context manager; leaving the block restores the previous options.

    Example:
        >>> with jnp.printoptions(precision=2):
        ...     print(jnp.array([1 / 3, 2 / 3]))
        [0.33 0.67]
    """
    return np.printoptions(*args, **kwargs)


def set_printoptions(*args: Any, **kwargs: Any) -> None:
    """Set the options that govern how arrays are printed.

    The counterpart of :func:`numpy.set_printoptions` (Ember arrays print through NumPy).
    Prefer :func:`printoptions`, which restores the previous options.

    Args:
        *args: NumPy's options, in NumPy's order.
        **kwargs: NumPy's options by name, such as ``precision``, ``threshold``,
            ``linewidth`` and ``suppress``.

    Returns:
        None.

    Example:
        >>> old = jnp.get_printoptions()["precision"]
        >>> jnp.set_printoptions(precision=3)
        >>> jnp.array([1 / 3])
        Array([0.333], dtype=float32)
        >>> jnp.set_printoptions(precision=old)
    """
    return np.set_printoptions(*args, **kwargs)


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """Load arrays from a ``.npy`` or ``.npz`` file, or a pickle.

    The counterpart of :func:`numpy.load`, run on the host (never traced).

    Args:
        file: a path or a file object.
        *args: passed on to :func:`numpy.load`.
        **kwargs: passed on to :func:`numpy.load` (``mmap_mode``,
            ``allow_pickle``, ...).

    Returns:
        An array read from a ``.npy`` file, as an Ember array (a dtype Ember does not hold
        stays a NumPy array); anything else (an ``.npz`` archive, a pickled object) as NumPy
        returns it.

    Example:
        >>> import io
        >>> buf = io.BytesIO()
        >>> jnp.save(buf, jnp.arange(3))
        >>> _ = buf.seek(0)
        >>> jnp.load(buf)
        Array([0, 1, 2], dtype=int32)
    """
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        try:
            out = jnp.asarray(out)
        except (TypeError, AssertionError):
            pass
    return out


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Any:
    """Read numbers from a text string into a 1-D array.

    The counterpart of :func:`numpy.fromstring` in its text mode, run on the host. NumPy's
    deprecated binary mode (``sep=""``) is not supported: ``sep`` is required.

    Args:
        string: the text.
        dtype: the element type (default the default float).
        count: how many numbers to read; -1 (default) reads all.
        sep: the separator between the numbers (whitespace around it is allowed).

    Returns:
        A 1-D Ember array of the numbers.

    Example:
        >>> jnp.fromstring("1, 2, 3.5", sep=",")
        Array([1. , 2. , 3.5], dtype=float32)
    """
    return jnp.asarray(np.fromstring(string=string, dtype=dtype, count=count, sep=sep))


def fromfile(*args: Any, **kwargs: Any) -> Any:
    """Not implemented, as in JAX: reading a file in a traced function is a side effect.

    :func:`numpy.fromfile` consumes a file object, which ``jit`` could not repeat or
    order. Read the file with NumPy outside the traced function instead:
    ``jnp.asarray(np.fromfile(...))``.

    Args:
        *args: ignored.
        **kwargs: ignored.

    Returns:
        Never: it raises ``NotImplementedError`` with JAX's message.

    Example:
        >>> jnp.fromfile("data.bin")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        NotImplementedError: jnp.fromfile() is not implemented because it may be non-pure...
    """
    raise NotImplementedError(
        "jnp.fromfile() is not implemented because it may be non-pure and thus unsafe for "
        "use with JIT and other JAX transformations. Consider using "
        "jnp.asarray(np.fromfile(...)) instead, although care should be taken if "
        "np.fromfile is used within a jax transformations because of its potential "
        "side-effect of consuming the file object; for more information see "
        "https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions")
