"""`ember.errors`: the public error classes, mirroring `jax.errors`.

Input: none (a re-export). Output: the classes defined in ember.core.errors, so
`except jax.errors.ConcretizationTypeError` works unchanged after `import ember as jax`.
Invariant: every name here is the same class object the tracing core raises.
"""

from ember.core.errors import (
    ConcretizationTypeError,
    JAXIndexError,
    JaxRuntimeError,
    JAXTypeError,
    KeyReuseError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

__all__ = ["ConcretizationTypeError", "JAXIndexError", "JaxRuntimeError", "JAXTypeError",
           "KeyReuseError", "NonConcreteBooleanIndexError", "TracerArrayConversionError",
           "TracerBoolConversionError", "TracerIntegerConversionError",
           "UnexpectedTracerError"]

# A JAX name this module lacks: AttributeError saying Ember does not implement it yet.
from ember._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)
