"""The runtime's collectives across processes, against the Communicator protocol: two
'processes' (threads) with two devices each exchange through an in-memory communicator,
and every device's result equals what one process holding all four devices computes."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from ember.device_state import CpuDevice
from ember.sharding import Mesh
from ember.spmd._collectives import run_collective


class _Hub:
    """What the members of one communicator share: a slot each and a barrier."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.slots: list = [None] * size
        self.barrier = threading.Barrier(size, timeout=20)
        self.subs: dict = {}
        self.lock = threading.Lock()

    def exchange(self, rank: int, value: np.ndarray) -> list[np.ndarray]:
        self.slots[rank] = np.array(value, copy=True)
        self.barrier.wait()
        got = list(self.slots)
        self.barrier.wait()
        return got


class FakeComm:
    """The Communicator protocol over a hub, one object per member."""

    def __init__(self, hub: _Hub, rank: int, ranks: tuple[int, ...]) -> None:
        self.hub, self.rank, self.size, self.ranks = hub, rank, hub.size, ranks
        self.calls: list[str] = []

    def all_reduce(self, send, op):
        self.calls.append("all_reduce")
        fn = {"sum": np.add, "max": np.maximum, "min": np.minimum, "prod": np.multiply}[op]
        vals = self.hub.exchange(self.rank, send)
        out = vals[0]
        for v in vals[1:]:
            out = fn(out, v)
        return out

    def all_gather(self, send):
        self.calls.append("all_gather")
        return np.stack(self.hub.exchange(self.rank, send))

    def reduce_scatter(self, send, op):
        self.calls.append("reduce_scatter")
        assert send.shape[0] % self.size == 0
        vals = self.hub.exchange(self.rank, send)
        return np.split(np.sum(vals, axis=0), self.size)[self.rank]

    def all_to_all(self, send):
        self.calls.append("all_to_all")
        vals = self.hub.exchange(self.rank, send)
        return np.concatenate([np.split(v, self.size)[self.rank] for v in vals])

    def permute(self, send, pairs):
        vals = self.hub.exchange(self.rank, send)
        src = {d: s for s, d in pairs}
        return vals[src[self.rank]] if self.rank in src else np.zeros_like(send)

    def exchange(self, sends, receives):
        self.calls.append("exchange")
        posted = self.hub.exchange(self.rank, np.array(
            [(d, t, np.array(b, copy=True)) for d, t, b in sends] + [None], dtype=object))
        for r, t, out in receives:
            (buf,) = [b for d, tag, b in posted[r][:-1] if d == self.rank and tag == t]
            out[...] = buf

    def subgroup(self, ranks):
        with self.hub.lock:
            hub = self.hub.subs.setdefault(tuple(ranks), _Hub(len(ranks)))
        self.hub.barrier.wait()
        return FakeComm(hub, list(ranks).index(self.rank), tuple(ranks))

    def barrier(self):
        self.hub.barrier.wait()


def _mesh(shape, names, process_of):
    devs = np.empty(4, dtype=object)
    devs[:] = [CpuDevice(i, process_of(i), i % 2) for i in range(4)]
    return Mesh(devs.reshape(shape), names)


CASES = [  # (mesh shape, names, collective, params)
    ((4,), ("i",), "psum", {"axes": ("i",), "axis_index_groups": None}),
    ((4,), ("i",), "pmax", {"axes": ("i",), "axis_index_groups": None}),
    ((4,), ("i",), "all_gather", {"all_gather_dimension": 1, "axis_name": ("i",),
                                  "axis_index_groups": None, "axis_size": 4, "tiled": True}),
    ((4,), ("i",), "reduce_scatter", {"axis_name": ("i",), "scatter_dimension": 0,
                                      "axis_index_groups": None, "axis_size": 4,
                                      "tiled": True}),
    ((4,), ("i",), "ppermute", {"axis_name": ("i",), "perm": ((0, 3), (3, 1), (1, 0))}),
    ((4,), ("i",), "ppermute", {"axis_name": ("i",), "perm": ((0, 1), (1, 2), (2, 3),
                                                               (3, 0))}),
    ((4,), ("i",), "ppermute", {"axis_name": ("i",), "perm": ((2, 0),)}),
    ((2, 2), ("p", "l"), "ppermute", {"axis_name": ("p",), "perm": ((0, 1), (1, 0))}),
    ((4,), ("i",), "all_to_all", {"axis_name": ("i",), "split_axis": 0, "concat_axis": 1,
                                  "axis_index_groups": None, "tiled": True}),
    ((4,), ("i",), "axis_index", {"axis_name": "i"}),
    ((2, 2), ("p", "l"), "psum", {"axes": ("p",), "axis_index_groups": None}),
    ((2, 2), ("p", "l"), "psum", {"axes": ("l",), "axis_index_groups": None}),
    ((2, 2), ("p", "l"), "all_gather", {"all_gather_dimension": 0, "axis_name": ("l", "p"),
                                        "axis_index_groups": None, "axis_size": 4,
                                        "tiled": False}),
    ((2, 2), ("p", "l"), "reduce_scatter", {"axis_name": ("p",), "scatter_dimension": 1,
                                            "axis_index_groups": None, "axis_size": 3,
                                            "tiled": False}),
    ((2, 2), ("p", "l"), "reduce_scatter", {"axis_name": ("l", "p"), "scatter_dimension": 0,
                                            "axis_index_groups": None, "axis_size": 4,
                                            "tiled": True}),
    ((2, 2), ("p", "l"), "all_to_all", {"axis_name": ("p",), "split_axis": 0,
                                        "concat_axis": 1, "axis_index_groups": None,
                                        "tiled": True}),
    ((2, 2), ("p", "l"), "all_to_all", {"axis_name": ("l", "p"), "split_axis": 0,
                                        "concat_axis": 0, "axis_index_groups": None,
                                        "tiled": True}),
]
# the communicator method each collective across processes must call (MPI's matching one)
MATCHING = {"psum": "all_reduce", "pmax": "all_reduce", "all_gather": "all_gather",
            "reduce_scatter": "reduce_scatter", "all_to_all": "all_to_all",
            "ppermute": "exchange"}


@pytest.mark.parametrize("case", CASES, ids=[f"{c[2]}-{''.join(c[1])}-{i}"
                                             for i, c in enumerate(CASES)])
def test_two_processes_match_one(case):
    shape, names, name, params = case
    bufs = [np.arange(8 * 3, dtype=np.float32).reshape(8, 3) * (k + 1) - 5 * k
            for k in range(4)]
    alone = _mesh(shape, names, lambda i: 0)
    want = run_collective(alone, name, params, {d: bufs[d.id] for d in alone.devices.flat})
    split = _mesh(shape, names, lambda i: i // 2)
    hub = _Hub(2)
    comms = [FakeComm(hub, r, (0, 1)) for r in range(2)]
    got: dict = {}
    errors: list = []

    def process(p: int) -> None:
        try:
            mine = {d: bufs[d.id] for d in split.devices.flat if d.process_index == p}
            out = run_collective(split, name, params, mine, p, comms[p])
            assert set(out) == set(mine)
            got.update({d.id: v for d, v in out.items()})
        except Exception as e:  # (re-raised in the main thread)
            errors.append(e)

    threads = [threading.Thread(target=process, args=(p,)) for p in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    assert sorted(got) == [0, 1, 2, 3]
    for d, v in want.items():
        np.testing.assert_array_equal(got[d.id], v, err_msg=f"device {d.id}")
    # a group within one process never touches the communicator
    local_only = name == "axis_index" or (names == ("p", "l") and params.get("axes") == ("l",))
    assert (not comms[0].calls) == local_only
    if not local_only:
        assert set(comms[0].calls) == {MATCHING[name]}, comms[0].calls


def test_without_communicator_a_cross_process_group_raises():
    split = _mesh((4,), ("i",), lambda i: i // 2)
    mine = {d: np.ones(2, np.float32) for d in split.devices.flat if d.process_index == 0}
    with pytest.raises(RuntimeError, match="no communicator is set"):
        run_collective(split, "psum", {"axes": ("i",), "axis_index_groups": None}, mine)


def test_sub_communicators_are_made_once():
    """Four 'processes' of one device each, a psum over one axis of a 2x2 mesh (groups of
    two processes): the first call makes both groups' sub-communicators (every process
    takes part in each), later calls make none, and each sums within its group."""
    devs = np.empty(4, dtype=object)
    devs[:] = [CpuDevice(i, i, 0) for i in range(4)]
    mesh = Mesh(devs.reshape(2, 2), ("p", "l"))
    hub = _Hub(4)
    comms = [FakeComm(hub, r, (0, 1, 2, 3)) for r in range(4)]
    made = [0] * 4
    for r, c in enumerate(comms):
        def counted(ranks, c=c, r=r, make=c.subgroup):
            made[r] += 1
            return make(ranks)
        c.subgroup = counted
    got: dict = {}
    errors: list = []

    def process(p: int) -> None:
        try:
            for call in range(3):
                dev = mesh.devices.flat[p]
                out = run_collective(mesh, "psum", {"axes": ("l",), "axis_index_groups": None},
                                     {dev: np.full(2, p + 1.0, np.float32)}, p, comms[p])
                got[(p, call)] = out[dev]
        except Exception as e:  # (re-raised in the main thread)
            errors.append(e)

    threads = [threading.Thread(target=process, args=(p,)) for p in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    assert made == [2, 2, 2, 2], made
    for (p, _), v in got.items():
        np.testing.assert_array_equal(v, np.full(2, 3.0 if p < 2 else 7.0, np.float32))
