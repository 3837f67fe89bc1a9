"""`jax.experimental` in Ember: only the names that moved out of it keep their old homes
here (`shard_map`).

Input/Output: re-exports; a JAX name this package lacks raises ember._missing's error.
Invariant: nothing here is defined twice; each name is the public one it stands for.
"""

from ember._missing import module_getattr as _module_getattr

__getattr__ = _module_getattr(__name__)
