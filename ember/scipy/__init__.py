"""`ember.scipy`: SciPy's functions on Ember arrays, as `jax.scipy`.

Subpackages: `special` (special functions), `stats` (distributions' densities and CDFs) and
`linalg` (decompositions and solvers); `import ember.scipy` alone imports none of them, and
each imports on first access as `jax.scipy.special` does. JAX's other subpackages (signal,
...) raise the "not implemented yet" AttributeError.
"""

from ember._missing import module_getattr

__getattr__ = module_getattr(__name__)
