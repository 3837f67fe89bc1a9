"""`jax.sharding` in Ember: meshes, partition specs, shardings and arrays split over devices.

Input: devices from `ember.devices()` (config `jax_num_cpu_devices` and, once processes are
joined, `ember.distributed`). Output: `Mesh`, `PartitionSpec` (also `P`), `Sharding`,
`NamedSharding`, `SingleDeviceSharding`, and (re-exported at `ember.`) `make_mesh` and the
array constructors. Invariants: see `_mesh.py` (layout), `_shardings.py` (indices) and
`_array.py` (one buffer per addressable shard).
"""

from ember._missing import module_getattr as _module_getattr
from ember.sharding._mesh import AxisType, Mesh, PartitionSpec, get_mesh, make_mesh, set_mesh
from ember.sharding._shardings import NamedSharding, Sharding, SingleDeviceSharding

P = PartitionSpec

__all__ = ["AxisType", "Mesh", "PartitionSpec", "P", "Sharding", "NamedSharding",
           "SingleDeviceSharding", "make_mesh", "set_mesh", "get_mesh"]

__getattr__ = _module_getattr(__name__)
