"""`ember.scipy`: SciPy's functions on Ember arrays, as `jax.scipy`.

Subpackages: `special` (special functions) and `stats` (distributions' densities and
CDFs); `import ember.scipy` alone imports neither, and each imports on first access as
`jax.scipy.special` does. JAX's other subpackages (linalg, signal, ...) raise the "not
implemented yet" AttributeError.
"""

from ember._missing import module_getattr

__getattr__ = module_getattr(__name__)
