"""The errors Ember raises when a traced value is used where a concrete one is needed.

Names and base classes follow `jax.errors`, so `except jax.errors.ConcretizationTypeError`
works unchanged. Each message names the user's argument the value depends on and the
source line, when the trace knows them.
"""

from __future__ import annotations

_DOCS = "See the Ember README (Tracing) for the JAX rules this follows."


class JAXTypeError(TypeError):
    pass


class ConcretizationTypeError(JAXTypeError):
    """A traced (abstract) value was used where Python needs a concrete one."""


class TracerBoolConversionError(ConcretizationTypeError):
    """`bool(x)` / `if x:` on a traced value."""


class TracerIntegerConversionError(JAXTypeError):
    """`int(x)`, `range(x)` or `x.__index__()` on a traced value."""


class TracerArrayConversionError(JAXTypeError):
    """`np.asarray(x)` on a traced value."""


class JAXIndexError(IndexError):
    pass


class NonConcreteBooleanIndexError(JAXIndexError):
    """A boolean mask whose result shape depends on traced data."""


class UnexpectedTracerError(JAXTypeError):
    """A tracer escaped the transformation that created it and was used later."""


class KeyReuseError(JAXTypeError):
    pass


class JaxRuntimeError(RuntimeError):
    """An error raised while running a compiled program (XLA's runtime error in JAX)."""


__all__ = ["JAXTypeError", "JAXIndexError", "ConcretizationTypeError",
           "TracerBoolConversionError", "TracerIntegerConversionError",
           "TracerArrayConversionError", "NonConcreteBooleanIndexError",
           "UnexpectedTracerError", "KeyReuseError", "JaxRuntimeError"]
