"""Per-device programs over a mesh (`jax.shard_map`): the API (`_shard_map.py`), the spec
bookkeeping (`_specs.py`), the runtime that runs the body on every device and does the
collectives (`_runtime.py`, `_collectives.py`), and the one-program form used under
transformations (`_emulate.py`). Also the runtime of jit partitioned over a mesh: the
calls that partition (`_jit.py`) and the per-device module run on every device with its
collectives meeting in a rendezvous (`_partitioned.py`).

Input/Output: see `shard_map`. Invariant: the runtime and the one-program form give the
same values.
"""

from ember.spmd._shard_map import shard_map

__all__ = ["shard_map"]
