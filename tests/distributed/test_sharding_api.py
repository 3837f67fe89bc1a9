"""Devices, meshes, shardings and sharded arrays (issue 27, items 1-2) over 8 CPU devices in
this process, checked against JAX 0.10.2's layouts (one JAX subprocess with 8 devices
prints its `devices_indices_map`s and shard shapes for a table of cases) and its texts."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import device_state
from ember.config import config
from ember.sharding import Mesh, NamedSharding, P, PartitionSpec, SingleDeviceSharding

CASES = [  # (mesh shape, mesh names, spec, global shape)
    ((4, 2), ("x", "y"), ("x", None), (8, 3)),
    ((4, 2), ("x", "y"), ("x", "y"), (4, 6)),
    ((4, 2), ("x", "y"), ("y", "x"), (2, 4)),
    ((4, 2), ("x", "y"), (("x", "y"),), (16,)),
    ((4, 2), ("x", "y"), (("y", "x"), None), (8, 1)),
    ((4, 2), ("x", "y"), (None, "y"), (3, 2, 5)),
    ((2, 2, 2), ("a", "b", "c"), ("c", ("a", "b")), (2, 8)),
    ((8,), ("d",), (), (5, 0)),
    ((8,), ("d",), (), ()),
]

JAX_SCRIPT = """
import json, sys
import jax
jax.config.update("jax_num_cpu_devices", 8)
from jax.sharding import NamedSharding, PartitionSpec as P
out = []
for mshape, names, spec, shape in json.loads(sys.argv[1]):
    mesh = jax.make_mesh(tuple(mshape), tuple(names))
    spec = [tuple(p) if isinstance(p, list) else p for p in spec]
    s = NamedSharding(mesh, P(*spec))
    m = s.devices_indices_map(tuple(shape))
    out.append({"shard": list(s.shard_shape(tuple(shape))),
                "replicated": s.is_fully_replicated,
                "idx": {str(d.id): [[i.start, i.stop] for i in idx] for d, idx in m.items()}})
print(json.dumps(out))
"""


def _jax_layouts() -> list:
    proc = subprocess.run([sys.executable, "-c", JAX_SCRIPT, json.dumps(CASES)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_devices_and_processes(devices8):
    assert ember.device_count() == 8 and ember.local_device_count() == 8
    devs = ember.devices()
    assert [d.id for d in devs] == list(range(8))
    assert repr(devs[3]) == "CpuDevice(id=3)"
    assert (devs[3].platform, devs[3].device_kind, devs[3].process_index) == ("cpu", "cpu", 0)
    assert ember.local_devices() == devs
    assert ember.process_index() == 0 and ember.process_count() == 1
    with pytest.raises(RuntimeError, match="Unknown backend: 'gpu' requested"):
        ember.devices("gpu")


def test_num_cpu_devices_is_fixed_once_started(devices8):
    config.update("jax_num_cpu_devices", 8)  # (the same value is accepted, as in JAX)
    with pytest.raises(RuntimeError, match="jax_num_cpu_devices config should be updated "
                                           "before backends are initialized"):
        config.update("jax_num_cpu_devices", 2)
    assert config.jax_num_cpu_devices == 8


def test_layouts_match_jax(devices8):
    for (mshape, names, spec, shape), want in zip(CASES, _jax_layouts()):
        mesh = ember.make_mesh(mshape, names)
        s = NamedSharding(mesh, P(*spec))
        got = {str(d.id): [[i.start, i.stop] for i in idx]
               for d, idx in s.devices_indices_map(shape).items()}
        assert got == want["idx"], (mshape, spec, shape)
        assert list(s.shard_shape(shape)) == want["shard"]
        assert s.is_fully_replicated == want["replicated"]


def test_mesh_and_spec_api(devices8):
    mesh = ember.make_mesh((4, 2), ("x", "y"))
    assert dict(mesh.shape) == {"x": 4, "y": 2} and mesh.axis_names == ("x", "y")
    assert mesh.devices.shape == (4, 2) and mesh.size == 8
    assert mesh.device_ids.tolist() == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert repr(mesh) == ("Mesh(axis_sizes=(4, 2), axis_names=('x', 'y'), "
                          "axis_types=(Explicit, Explicit))")
    same = Mesh(np.array(ember.devices()).reshape(4, 2), ("x", "y"))
    assert same == mesh and hash(same) == hash(mesh)
    assert repr(P("x", None)) == "P('x', None)" and repr(P("x")) == "P('x',)"
    assert P("x") != P("x", None) and PartitionSpec is P
    s = NamedSharding(mesh, P("x", None))
    assert repr(s) == ("NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Explicit, "
                       "Explicit)), spec=P('x', None), memory_kind=device)")
    assert hash(s) == hash(NamedSharding(mesh, P("x"))) and s != NamedSharding(mesh, P("x"))
    assert s.is_equivalent_to(NamedSharding(mesh, P("x")), 2)
    assert s.num_devices == 8 and s.addressable_devices == set(ember.devices())
    assert s.is_fully_addressable
    with pytest.raises(ValueError, match=r"Resource axis: z of P\('z',\) is not found in "
                                         r"mesh: \('x', 'y'\)."):
        NamedSharding(mesh, P("z"))
    with pytest.raises(ValueError, match="has duplicate entries for `x`"):
        NamedSharding(mesh, P("x", "x"))
    with pytest.raises(ValueError, match="implies that array axis 0 is partitioned 4 times, "
                                         "but the dimension size is 7"):
        s.shard_shape((7, 3))
    with pytest.raises(ValueError, match="Number of devices 8 must equal the product"):
        ember.make_mesh((3, 2), ("x", "y"))
    typed = ember.make_mesh((8,), ("d",), axis_types=(ember.sharding.AxisType.Auto,))
    assert typed.axis_types == ("Auto",) and repr(typed) == (
        "Mesh(axis_sizes=(8,), axis_names=('d',), axis_types=(Auto,))")
    with pytest.raises(ValueError, match="Number of axis names should match"):
        Mesh(np.array(ember.devices()), ("d",), axis_types=(ember.sharding.AxisType.Auto,) * 2)
    one = SingleDeviceSharding(ember.devices()[2])
    assert repr(one) == "SingleDeviceSharding(device=CpuDevice(id=2), memory_kind=device)"
    assert one.is_fully_replicated and one.shard_shape((3, 4)) == (3, 4)
    with mesh:
        assert ember.device_put(np.ones((4, 2)), P("x")).sharding == NamedSharding(mesh,
                                                                                 P("x"))
    assert ember.sharding.get_mesh() is None
    with ember.set_mesh(mesh):
        assert ember.sharding.get_mesh() is mesh
        assert ember.device_put(np.ones(4), P("y")).sharding == NamedSharding(mesh, P("y"))
    assert ember.sharding.get_mesh() is None
    ember.set_mesh(mesh)  # a global setter too
    try:
        assert ember.sharding.get_mesh() is mesh
    finally:
        ember.set_mesh(None)
    with pytest.raises(ValueError, match="can only be used outside of `jax.jit`"):
        ember.jit(lambda v: ember.set_mesh(mesh) and v)(1.0)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_device_put_shards(devices8, dtype):
    mesh = ember.make_mesh((4, 2), ("x", "y"))
    for spec, shape in [(P("x", "y"), (8, 6)), (P(None, "x"), (3, 4)), (P(), ()),
                        (P(("x", "y")), (0, 2))]:
        x = (np.arange(int(np.prod(shape))).reshape(shape) % 3).astype(dtype)
        s = NamedSharding(mesh, spec)
        a = ember.device_put(x, s)
        assert a.sharding == s and a.dtype == x.dtype and a.shape == x.shape
        np.testing.assert_array_equal(np.asarray(a), x)
        shards = a.addressable_shards
        assert [sh.device for sh in shards] == ember.devices()
        for k, sh in enumerate(shards):
            np.testing.assert_array_equal(np.asarray(sh.data), x[sh.index])
            np.testing.assert_array_equal(np.asarray(a.addressable_data(k)), x[sh.index])
            assert sh.data.shape == s.shard_shape(shape)
        # replicas: devices along the mesh axes the spec leaves out hold copies
        assert sorted({sh.replica_id for sh in shards}) == list(
            range(8 // len({tuple((i.start, i.stop) for i in sh.index) for sh in shards})))
        assert a.is_fully_replicated == (spec == P())
        # eager ops and jit read the assembled value
        np.testing.assert_array_equal(np.asarray(jnp.add(a, a)), x + x)
        np.testing.assert_array_equal(np.asarray(ember.jit(lambda v: v * 2)(a)),
                                      (x * 2).astype(dtype) if dtype != np.bool_ else x * 2)


def test_single_device_arrays_and_callbacks(devices8):
    mesh = ember.make_mesh((2, 4), ("a", "b"))
    s = NamedSharding(mesh, P("b", "a"))
    x = np.arange(40, dtype=np.float32).reshape(8, 5 * 1)[:, :4]
    seen = []
    a = ember.make_array_from_callback((8, 4), s, lambda idx: seen.append(idx) or x[idx])
    assert len(seen) == 8 and a.sharding == s
    np.testing.assert_array_equal(np.asarray(a), x)
    b = ember.make_array_from_single_device_arrays((8, 4), s,
                                                   [sh.data for sh in a.addressable_shards])
    np.testing.assert_array_equal(np.asarray(b), x)
    c = ember.make_array_from_process_local_data(s, x)
    assert c.shape == (8, 4) and c.sharding == s
    np.testing.assert_array_equal(np.asarray(c), x)
    with pytest.raises(ValueError, match=r"Expected shard shape \(2, 2\) doesn't match"):
        ember.make_array_from_callback((8, 4), s, lambda idx: np.zeros((3, 2)))
    # a value on one device: SingleDeviceSharding, one shard
    v = jnp.arange(3)
    assert v.sharding == SingleDeviceSharding(ember.devices()[0])
    (shard,) = v.addressable_shards
    assert shard.device == ember.devices()[0] and shard.index == (slice(None),)
    w = ember.device_put(np.ones(2), ember.devices()[5])
    assert w.sharding == SingleDeviceSharding(ember.devices()[5])
    assert w.device == ember.devices()[5]


class _RemoteHalf(NamedSharding):
    """A sharding whose last four devices belong to another process (as after joining)."""

    @property
    def addressable_devices(self) -> set:
        return set(ember.devices()[:4])


def test_not_fully_addressable_value_raises(devices8):
    from ember.core.aval import ShapedArray
    from ember.sharding._array import ShardedArray
    s = _RemoteHalf(ember.make_mesh((8,), ("d",)), P("d"))
    assert not s.is_fully_addressable
    a = ShardedArray(ShapedArray((8,), np.dtype(np.float32)), s,
                     {d: np.full(1, d.id, np.float32) for d in ember.devices()[:4]})
    assert [float(sh.data[0]) for sh in a.addressable_shards] == [0, 1, 2, 3]
    with pytest.raises(RuntimeError, match="spans non-addressable"):
        np.asarray(a)
    with pytest.raises(RuntimeError, match="spans non-addressable"):
        jnp.add(a, 1)
    # replicated over every device: this process's copy is the value
    r = _RemoteHalf(ember.make_mesh((8,), ("d",)), P())
    b = ShardedArray(ShapedArray((2,), np.dtype(np.float32)), r,
                     {d: np.array([1.0, 2.0], np.float32) for d in ember.devices()[:4]})
    np.testing.assert_array_equal(np.asarray(b), [1.0, 2.0])


def test_visualize(devices8, capsys):
    mesh = ember.make_mesh((4, 2), ("x", "y"))
    ember.debug.visualize_array_sharding(ember.device_put(np.zeros((4, 4)),
                                                          NamedSharding(mesh, P("x", "y"))))
    rows = capsys.readouterr().out.splitlines()
    assert rows[1] == "| CPU 0 | CPU 1 |" and rows[7] == "| CPU 6 | CPU 7 |"
    ember.debug.visualize_array_sharding(ember.device_put(np.zeros(8),
                                                          NamedSharding(mesh, P("y"))))
    assert capsys.readouterr().out.splitlines()[1] == "| CPU 0,2,4,6 | CPU 1,3,5,7 |"
    with pytest.raises(ValueError, match="only works for 1D or 2D"):
        ember.debug.visualize_array_sharding(jnp.zeros((1, 1, 1)))


def test_device_list_restored_after(devices8):
    assert device_state.started()
