"""One-line docstrings for the ember.numpy callables written without one.

Input: the namespace of ember.numpy after its families are imported. Output: each public
callable that has no `__doc__` gets `<summary> (as numpy.<name> / jax.numpy.<name>).`, from
the table below, and each dtype scalar type (`jnp.float32`, ...) one generated from its
dtype. A callable that already has a docstring keeps it, so a family module that documents
a function in place takes over from this table. The table is kept in one place (rather than
a line in each of seven family modules) because its entries share one shape; the summaries
follow NumPy's, with Ember's and JAX's differences where there are any.
`tests/unit/test_docstrings.py` fails when a public callable has no docstring.
"""

from __future__ import annotations

from typing import Any

SUMMARIES: dict[str, str] = {
    # reductions
    # elementwise
    "arctan2": "Compute the arc tangent of x1/x2 element-wise, choosing the quadrant",
    "bitwise_and": "Compute the bit-wise AND of two arrays element-wise",
    "bitwise_or": "Compute the bit-wise OR of two arrays element-wise",
    "bitwise_xor": "Compute the bit-wise XOR of two arrays element-wise",
    "bitwise_not": "Compute the bit-wise inversion (NOT) element-wise; logical NOT for bool",
    "left_shift": "Shift the bits of an integer array to the left element-wise",
    "deg2rad": "Convert angles from degrees to radians element-wise",
    "rad2deg": "Convert angles from radians to degrees element-wise",
    "divmod": "Compute the element-wise quotient and remainder together (floor division)",
    "float_power": "Raise the first array to the powers of the second element-wise, in "
                   "floating point",
    "minimum": "Compute the element-wise minimum of two arrays (NaN if either is NaN)",
    "subtract": "Subtract two arrays element-wise",
    "isneginf": "Test element-wise for negative infinity",
    "isposinf": "Test element-wise for positive infinity",
    # creation
    "empty_like": "Create an array with the shape and dtype of another; as in JAX it is "
                  "filled with zeros (there is no uninitialized memory)",
    "frombuffer": "Interpret a buffer as a 1-d array (its bytes are copied into an Array)",
    "fromiter": "Create a 1-d array from an iterable (consumed on the host)",
    # manipulation
    "append": "Append values to the end of an array (a new array; flattened without axis)",
    "atleast_1d": "Convert inputs to arrays with at least one dimension",
    "broadcast_arrays": "Broadcast any number of arrays against each other",
    "concat": "Join a sequence of arrays along an existing axis (the array API name of "
              "concatenate)",
    "dsplit": "Split an array into sub-arrays along the third axis (depth)",
    "hsplit": "Split an array into sub-arrays horizontally (column-wise)",
    "vsplit": "Split an array into sub-arrays vertically (row-wise)",
    "dstack": "Stack arrays along the third axis (depth-wise)",
    "row_stack": "Stack arrays vertically (row-wise); an alias of vstack",
    "ndim": "Return the number of dimensions of an array (a Python int)",
    "shape": "Return the shape of an array (a tuple of Python ints)",
    "size": "Return the number of elements of an array, or along an axis (a Python int)",
    "permute_dims": "Permute the axes of an array (the array API name of transpose)",
    "ravel": "Flatten an array to one dimension (in C order)",
    # sorting
    "unique_all": "Find the unique elements of an array with their indices, inverse "
                  "indices and counts",
    "unique_counts": "Find the unique elements of an array and their counts",
    "unique_inverse": "Find the unique elements of an array and the indices that rebuild it",
    "unique_values": "Find the unique elements of an array",
}


def _scalar_type_doc(cls: Any) -> str:
    name = cls.__name__
    doc = (f"The {cls.dtype.name} scalar type (as numpy.{name} / jax.numpy.{name}). "
           f"``jnp.{name}(x)`` is a 0-d Array of that dtype; it is accepted wherever a "
           "dtype is.")
    if cls.dtype.itemsize == 8:
        doc += " Without jax_enable_x64 its arrays are 32-bit, as in JAX."
    return doc


def install(namespace: dict[str, Any]) -> None:
    """Give every public callable of `namespace` without a docstring its summary."""
    from ember.numpy._dtypes import _ScalarMeta
    for name, obj in namespace.items():
        if name.startswith("_") or not callable(obj) or getattr(obj, "__doc__", None):
            continue
        if isinstance(obj, _ScalarMeta):
            obj.__doc__ = _scalar_type_doc(obj)
            continue
        # An alias (`invert = bitwise_not`) is documented under the name it was defined as.
        own = getattr(obj, "__name__", name)
        summary = SUMMARIES.get(own) or SUMMARIES.get(name)
        if summary is not None:
            obj.__doc__ = f"{summary} (as numpy.{own} / jax.numpy.{own})."
