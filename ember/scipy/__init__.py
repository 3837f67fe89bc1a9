"""ember.scipy: `jax.scipy`'s submodules (linalg, ...), each imported on first use as
`jax.scipy.linalg` is after `import jax.scipy`."""

from ember._missing import module_getattr as _module_getattr

__getattr__ = _module_getattr(__name__)
