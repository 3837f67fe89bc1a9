"""Buffer assignment (ember/backends/cpu/plan/buffer_assignment.py): liveness-based sharing of the
scratch block, in-place chains, and the invariant that live buffers never overlap."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ember.backends.cpu.plan import buffer_assignment
from ember.backends.cpu.plan.buffer_assignment import ALIGNMENT, LogicalBuffer, assign_buffers

MB = 1 << 20


def _overlap_in_memory(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def test_disjoint_lifetimes_share_memory():
    bufs = [LogicalBuffer("t0", MB, 0, 1), LogicalBuffer("t1", MB, 2, 3)]
    ba = assign_buffers(bufs)
    assert ba.offsets == {"t0": 0, "t1": 0}
    assert ba.total_bytes == MB


def test_overlapping_lifetimes_do_not_share():
    # t1 is written by kernel 1, which reads t0: they overlap at kernel 1.
    bufs = [LogicalBuffer("t0", MB, 0, 1), LogicalBuffer("t1", MB, 1, 2)]
    ba = assign_buffers(bufs)
    assert ba.offsets["t0"] != ba.offsets["t1"]
    assert ba.total_bytes == 2 * MB


def test_in_place_chain_of_elementwise_kernels_uses_one_buffer():
    # x -> t0 -> t1 -> ... -> t19, each kernel elementwise over its dying operand.
    n = 20
    bufs = [LogicalBuffer("t0", MB, 0, 1)]
    bufs += [LogicalBuffer(f"t{k}", MB, k, k + 1, reusable=(f"t{k - 1}",)) for k in range(1, n)]
    ba = assign_buffers(bufs)
    assert set(ba.offsets.values()) == {0}
    assert ba.total_bytes == MB
    assert len(ba.chains) == 1
    assert "in place of t0" in ba.to_text()


def test_without_in_place_a_chain_ping_pongs_between_two_buffers():
    n = 200
    bufs = [LogicalBuffer(f"t{k}", MB, k, k + 1) for k in range(n)]
    ba = assign_buffers(bufs)
    assert ba.total_bytes == 2 * MB
    assert len(set(ba.offsets.values())) == 2


def test_in_place_refused_when_operand_lives_on_or_is_smaller():
    bufs = [LogicalBuffer("a", MB, 0, 2),                       # still read by kernel 2
            LogicalBuffer("b", MB, 1, 3, reusable=("a",)),
            LogicalBuffer("c", 16, 0, 1),
            LogicalBuffer("d", 32, 1, 2, reusable=("c",))]      # larger than c
    ba = assign_buffers(bufs)
    assert ba.offsets["a"] != ba.offsets["b"]
    assert not _overlap_in_memory((ba.offsets["c"], ba.offsets["c"] + 16),
                                  (ba.offsets["d"], ba.offsets["d"] + 32))


def test_a_chain_grows_only_at_its_end():
    # Two results both want to overwrite `a` (it dies in kernel 1); only one may.
    bufs = [LogicalBuffer("a", MB, 0, 1),
            LogicalBuffer("b", MB, 1, 2, reusable=("a",)),
            LogicalBuffer("c", MB, 1, 2, reusable=("a",))]
    ba = assign_buffers(bufs)
    assert ba.offsets["b"] != ba.offsets["c"]


def test_bad_input_is_refused():
    import pytest

    with pytest.raises(ValueError, match="unique"):
        assign_buffers([LogicalBuffer("a", 4, 0, 0), LogicalBuffer("a", 4, 1, 1)])
    with pytest.raises(ValueError, match="ends"):
        assign_buffers([LogicalBuffer("a", 4, 3, 1)])


_buffers = st.lists(
    st.tuples(st.integers(1, 5000), st.integers(0, 30), st.integers(0, 8), st.booleans()),
    min_size=0, max_size=40)


@settings(max_examples=200, deadline=None)
@given(_buffers)
def test_live_buffers_never_overlap(spec):
    bufs = []
    for k, (size, start, length, in_place) in enumerate(spec):
        reuse = tuple(b.name for b in bufs if in_place and b.end == start)
        bufs.append(LogicalBuffer(f"t{k}", size, start, start + length, reusable=reuse))
    ba = assign_buffers(bufs)
    assert assign_buffers(list(bufs)).offsets == ba.offsets
    # the NumPy first fit (many chains) places exactly where the Python loop does
    assert _assign_by(bufs, vector_from=0).offsets == ba.offsets
    assert _assign_by(bufs, vector_from=10**9).offsets == ba.offsets
    _assert_never_overlap(bufs, ba)


def _assign_by(bufs, vector_from: int):
    saved = buffer_assignment.VECTOR_MIN_CHAINS
    buffer_assignment.VECTOR_MIN_CHAINS = vector_from
    try:
        return assign_buffers(list(bufs))
    finally:
        buffer_assignment.VECTOR_MIN_CHAINS = saved


def _assert_never_overlap(bufs, ba):
    chained = {(p.name, q.name) for c in ba.chains for p, q in zip(c.members, c.members[1:])}
    for b in bufs:
        off = ba.offsets[b.name]
        assert off % ALIGNMENT == 0
        assert off + b.size <= ba.total_bytes
    for i, a in enumerate(bufs):
        for b in bufs[i + 1:]:
            if not (a.start <= b.end and b.start <= a.end):
                continue
            if (a.name, b.name) in chained or (b.name, a.name) in chained:
                continue
            ra = (ba.offsets[a.name], ba.offsets[a.name] + a.size)
            rb = (ba.offsets[b.name], ba.offsets[b.name] + b.size)
            assert not _overlap_in_memory(ra, rb), (a, b, ba.to_text())


def test_two_results_of_one_kernel_never_chain_onto_each_other():
    # Kernel 1 reads `a` (dying there) and writes both `b` (never read) and `c`: `b` may take
    # a's memory, but `c` must not take b's, since kernel 1 writes both at once.
    bufs = [LogicalBuffer("a", MB, 0, 1),
            LogicalBuffer("b", MB, 1, 1, reusable=("a",)),
            LogicalBuffer("c", MB, 1, 2, reusable=("b",))]
    ba = assign_buffers(bufs)
    assert ba.offsets["b"] != ba.offsets["c"]


def test_thousands_of_chains_alive_at_once():
    # an unrolled loop's per-step sums: scalars that all live until the last kernel, among
    # short-lived arrays (the NumPy first fit; the same offsets as the Python loop's)
    rng = np.random.default_rng(0)
    bufs = []
    for k in range(600):
        bufs.append(LogicalBuffer(f"x{k}", 4000, 2 * k, 2 * k + int(rng.integers(1, 4)),
                                  reusable=(f"x{k - 1}",) if k else ()))
        bufs.append(LogicalBuffer(f"s{k}", 4, 2 * k + 1, 1201))
    ba = assign_buffers(bufs)
    assert _assign_by(bufs, vector_from=10**9).offsets == ba.offsets
    _assert_never_overlap(bufs, ba)
    assert ba.total_bytes <= 600 * ALIGNMENT + 3 * 4032
