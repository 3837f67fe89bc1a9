"""How a dot (or a kOutput fusion: a dot and its elementwise epilogue) runs: BLAS or loops,
each operand as a BLAS view or a packed copy, and the static partition into work units.

Input: an entry instruction, a `dot` or a `fusion` of kind kOutput. Output: a `DotPlan`
(pure data, no IR): what `dot_emit.py` emits and what the schedule reserves as work buffers.

A dot's result is [batch..., lhs free..., rhs free...]; per batch it is the product of an
M x K matrix (M = prod(lhs free), K = prod(contracting)) and a K x N one. An operand's dims
of one role (free, contracting) form one matrix axis when they are adjacent in memory in
that order: stride(d_i) = stride(d_i+1) * extent(d_i+1). A BLAS view also needs one axis of
stride 1 and the other (the leading dimension) at least the first's extent: stride 1 on
the second axis is a plain matrix (trans = 0), on the first a transposed one (trans = 1).
Batch dims may sit anywhere: each batch index just offsets the pointers. An operand that
is no view gets a packed copy [batch..., rows, cols] in scratch.

Routes: "blas" for f32/f64 products (operand and result types equal) with M*N*K >=
`BLAS_MIN_MACS` and buffers for both operands; forms "gemm", "gemv_m" (N = 1: y = A x,
vector dots included) and "gemv_n" (M = 1: y = x B). Complex products (c64/c128) reach
here only where `complex_gemm_runs` said so before the complex-dot-expansion pass (the
others become real dots): they take BLAS's cgemm/zgemm, always in the "gemm" form.
Everything else (integers, bool, f16, tiny products) is "loops": the generated loop nest
of kernels.emit_dot_kernel.

Partition: the product is cut into `units` = batch x pm row blocks x pn column blocks,
fixed at compile time from the shape and the machine's CPU count (never from the thread
count set at run time), so a result does not depend on how many threads run it. Each unit
is one BLAS call (which packs its blocks of A and B: smaller blocks pack more), chosen by
a cost model: ceil(units / cpus) * (2 mb nb K + PACK_COST (mb + nb) K + CALL_COST), among
partitions of at least UNITS_PER_CPU units per CPU for large products (dynamic balance).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from ember.hlo.ir import Instruction
from ember.hlo.shape import Shape

BLAS_MIN_MACS = 32 ** 3  # smaller products run as generated loops
# Below this a product stays on one thread. 2^20 multiply-adds: measured on 2 idle cores
# (us, one thread -> two): 102^3 12.4 -> 10.1, 128x128x64 10.8 -> 8.9; the skinny products
# of an MLP's 10-class layer, which BLAS runs far below its peak, gain most: 256x512x10
# 34 -> 23, its gradient 512x256x10 41 -> 15 (NumPy's threaded OpenBLAS: 20 and 24).
PARALLEL_MIN_MACS = 1 << 20
GEMV_MIN_BLOCK = 64  # rows (or columns) of a gemv unit
PACK_COST = 50  # flop-equivalents of packing one element (measured: ~0.6 ns vs ~90 GFLOP/s)
CALL_COST = 100_000  # flop-equivalents of one BLAS call (~1 us)
MAX_PIECES = 64
# Units per CPU a large product is cut into at least. Every unit repacks its blocks of A
# and B, so fewer units are faster on a quiet machine: on 2 CPUs, 1024^3 f32 in 8 units ran
# at 0.85-0.89x NumPy's (one threaded sgemm that packs B once), in 4 units (2 x 2 blocks)
# 0.90-1.0x, in 2 units 0.95-1.03x (benchmarks/blas.py method, 3 runs of 10 rounds). But
# the pool (pool.py) cannot take back a unit a worker has claimed: when another program's
# threads share that worker's core, 2 units took 2x as long (the caller waits for the
# slowed half), 4 units at most about 1.5x, since the caller runs the units left over.
UNITS_PER_CPU = 2
MIN_UNIT_MACS = 1 << 26  # ... and never units under ~0.5 ms of BLAS work
# Ember's own GEMM (gemm.py) under the default backend "auto" (see _own_plan)
OWN_MIN_MACS = 1 << 27  # ~1.3 ms of one core
OWN_MIN_ROWS = 48  # rows of one unit at least (8 register tiles)


@dataclass(frozen=True)
class View:
    """One operand as a matrix (rows x cols) per batch: element strides of the two axes and
    of each batch dim (in the result's batch order). `packed`: read from the packed copy."""

    s_rows: int
    s_cols: int
    batch: tuple[int, ...]
    packed: bool = False

    def blas(self, rows: int, cols: int) -> tuple[int, int]:
        """(trans, leading dimension) of this view for BLAS."""
        t = _orientation(self.s_rows, self.s_cols, rows, cols)
        assert t is not None, "a packed view is always plain"
        return t


@dataclass(frozen=True)
class DotPlan:
    dot: Instruction  # the dot (inside the fusion for kOutput)
    root: Instruction  # the epilogue's root (the dot itself when there is none)
    route: str  # "blas" | "loops"
    form: str  # "gemm" | "gemv_m" | "gemv_n" (blas route only)
    et: str
    batch: tuple[int, ...]  # batch extents, result order
    m: int
    n: int
    k: int
    lhs: View | None  # blas route only
    rhs: View | None
    pm: int = 1  # row blocks
    pn: int = 1  # column blocks
    dot_temp: bool = False  # the dot's value goes to a work buffer, not the output
    # Ember's own GEMM (gemm.py) instead of the BLAS library: B is packed once into panels
    # of `panel_cols` columns (by the parallel `<kernel>.pack_b`), units are row blocks
    own: bool = False
    panel_cols: int = 0  # the GEMM's register tile columns (NR)
    pack_units: int = 1  # units of the pack kernel: batch x column groups
    row_align: int = 1  # row blocks are multiples of this (the GEMM's register tile rows)

    @property
    def batch_count(self) -> int:
        return math.prod(self.batch)

    @property
    def mb(self) -> int:
        """Rows of a row block; whole register tiles for Ember's GEMM (`row_align`)."""
        rows = -(-self.m // self.pm)
        return -(-rows // self.row_align) * self.row_align

    @property
    def panel_elems(self) -> int:
        """Elements of one batch's packed B (Ember's GEMM only)."""
        from ember.backends.cpu.dot import gemm

        return gemm.packed_b_elements(self.panel_cols, self.k, self.n)

    @property
    def nb(self) -> int:
        return -(-self.n // self.pn)

    @property
    def units(self) -> int:
        return self.batch_count * self.pm * self.pn

    def work_shapes(self) -> list[tuple[str, Shape]]:
        """(role, shape) of each work buffer, in the order the kernel takes them."""
        out: list[tuple[str, Shape]] = []
        b = self.batch_count
        if self.lhs is not None and self.lhs.packed:
            out.append(("lhs", Shape(self.et, (b * self.m * self.k,))))
        if self.rhs is not None and self.rhs.packed:
            out.append(("rhs", Shape(self.et, (b * self.k * self.n,))))
        if self.dot_temp:
            out.append(("dot", self.dot.shape))
        if self.own:
            out.append(("panels", Shape(self.et, (b * self.panel_elems,))))
        return out


def _mnk(dot: Instruction) -> tuple[int, int, int]:
    lhs, rhs = dot.operands
    a = dot.attrs
    lb, lc = list(a["lhs_batch_dims"]), list(a["lhs_contracting_dims"])
    rb, rc = list(a["rhs_batch_dims"]), list(a["rhs_contracting_dims"])
    ld, rd = lhs.shape.dimensions, rhs.shape.dimensions
    m = math.prod(ld[d] for d in range(len(ld)) if d not in lb + lc)
    n = math.prod(rd[d] for d in range(len(rd)) if d not in rb + rc)
    return m, n, math.prod(ld[d] for d in lc)


def complex_gemm_runs(dot: Instruction) -> bool:
    """Whether the complex `dot` runs as one BLAS cgemm/zgemm (else the expansion makes it
    four real dots): both operands of its complex type, M*N*K of at least BLAS_MIN_MACS
    (smaller ones are cheaper as real loops), and neither operand a single element (which
    gets no buffer of its own). These hold whatever later passes do: they keep types and
    sizes. Measured on 2 cores (benchmarks/complex_matmul.py, c64 and c128), one cgemm/zgemm
    took 0.65-0.85x the time of the four real products (and their part copies) from 128^3
    to 1024^3, about the same at 32^3."""
    et = dot.shape.element_type
    lhs, rhs = dot.operands
    if et not in ("c64", "c128") or lhs.shape.element_type != et or (
            rhs.shape.element_type != et):
        return False
    m, n, k = _mnk(dot)
    return m * n * k >= BLAS_MIN_MACS and lhs.shape.size > 1 and rhs.shape.size > 1


def find_dot(inst: Instruction) -> tuple[Instruction, Instruction] | None:
    """(dot, epilogue root) of a dot or kOutput fusion; None for anything else."""
    if inst.opcode == "dot":
        return inst, inst
    if inst.opcode == "fusion" and inst.attrs.get("kind") == "kOutput":
        comp = inst.fused_computation
        dots = [i for i in comp.instructions if i.opcode == "dot"]
        if len(dots) == 1:
            return dots[0], comp.root
    return None


def has_buffer(operand: Instruction) -> bool:
    """Kernels get buffers for every operand but scalar constants (emitter._kernel_graph)."""
    return not (operand.opcode == "constant" and operand.shape.size == 1)


def plan(inst: Instruction, cpus: int | None = None) -> DotPlan:
    found = find_dot(inst)
    if found is None:
        raise ValueError(f"{inst.name} is neither a dot nor a kOutput fusion")
    dot, root = found
    for v in (dot, root):  # the kernels store the product's rows and columns row-major
        if not v.shape.is_row_major:
            from ember.backends.cpu.errors import CpuCompileError

            layout = ",".join(map(str, v.shape.layout))
            raise CpuCompileError(
                f"{inst.name}: {v.opcode} {v.name} has layout {{{layout}}}; a dot or kOutput "
                "fusion writes its result row-major (the fusion pass keeps layout changes "
                "out of epilogues)")
    lhs, rhs = dot.operands
    a = dot.attrs
    lb, lc = list(a["lhs_batch_dims"]), list(a["lhs_contracting_dims"])
    rb, rc = list(a["rhs_batch_dims"]), list(a["rhs_contracting_dims"])
    lf = [d for d in range(lhs.shape.rank) if d not in lb + lc]
    rf = [d for d in range(rhs.shape.rank) if d not in rb + rc]
    ld, rd = lhs.shape.dimensions, rhs.shape.dimensions
    batch = tuple(ld[d] for d in lb)
    m = math.prod(ld[d] for d in lf)
    k = math.prod(ld[d] for d in lc)
    n = math.prod(rd[d] for d in rf)
    et = dot.shape.element_type
    # the epilogue may overwrite the dot's value in place (each element is read, then its
    # result stored at the same place) only when both have the same size in memory
    temp = root is not dot and root.shape.dtype.itemsize != dot.shape.dtype.itemsize
    complex_ = et in ("c64", "c128")
    blas_ok = (et in ("f32", "f64", "c64", "c128") and lhs.shape.element_type == et
               and rhs.shape.element_type == et
               and (complex_ or m * n * k >= BLAS_MIN_MACS)
               and has_buffer(lhs) and has_buffer(rhs))
    if not blas_ok:
        return DotPlan(dot, root, "loops", "", et, batch, m, n, k, None, None, dot_temp=temp)
    lview = _view(ld, lb, lf, lc, m, k)
    rview = _view(rd, rb, rc, rf, k, n)
    form = "gemm" if complex_ else "gemv_m" if n == 1 else "gemv_n" if m == 1 else "gemm"
    cpus = cpus or cpu_hint()
    b = math.prod(batch)
    own = None if complex_ else _own_plan(et, form, rview, b, m, n, k, cpus)
    if own is not None:
        return DotPlan(dot, root, "blas", form, et, batch, m, n, k, lview, rview,
                       dot_temp=temp, **own)
    if b * m * n * k < PARALLEL_MIN_MACS:
        pm = pn = 1
    elif form == "gemm":
        pm, pn = _gemm_pieces(b, m, n, k, cpus)
    elif form == "gemv_m":
        pm, pn = _gemv_pieces(b, m, cpus), 1
    else:
        pm, pn = 1, _gemv_pieces(b, n, cpus)
    return DotPlan(dot, root, "blas", form, et, batch, m, n, k, lview, rview, pm, pn, temp)


def _own_plan(et: str, form: str, rview: View, b: int, m: int, n: int, k: int,
              cpus: int) -> dict[str, int | bool] | None:
    """The DotPlan fields of Ember's GEMM (pm, own, panel_cols, pack_units, row_align)
    when it runs the product, else None (BLAS). The GEMM takes every plain product ("gemm"
    form); under the default backend "auto" only where it measured at least BLAS's speed:
    products of at least OWN_MIN_MACS (its fixed costs, ~20-40 us: packing B, buffers, a
    second parallel region, are under 3% there) whose columns fill whole register tiles
    but for at most 1/16 of padding, with rows enough for OWN_MIN_ROWS per unit on every
    CPU, and B not transposed (its packing reads B's rows a pitch apart, 3x the plain
    packing's time: x @ y.T measured no faster than BLAS)."""
    from ember.config import config

    backend = config.ember_matmul_backend
    if backend not in ("auto", "ember", "blas"):
        raise ValueError(f"config ember_matmul_backend must be 'auto', 'ember' or 'blas', "
                         f"not {backend!r}")
    if backend == "blas" or form != "gemm":
        return None
    from ember.backends.cpu.dot import gemm
    from ember.backends.cpu.jit import llvm_target

    q = gemm.blocking(gemm.prec_of(et), llvm_target.target().features)
    panels = -(-n // q.nr)
    if backend == "auto" and (b * m * n * k < OWN_MIN_MACS or (panels * q.nr - n) * 16 > n
                              or rview.blas(k, n)[0] == 1):
        return None
    parallel = b * m * n * k >= PARALLEL_MIN_MACS and cpus > 1
    pm = 1
    if parallel:  # row blocks (each reads all of the packed B)
        pm = max(1, min(-(-UNITS_PER_CPU * cpus // b), m // OWN_MIN_ROWS))
        if b * pm < cpus and backend == "auto":
            return None  # too few rows to share: BLAS splits columns too
        rows = -(-m // pm)
        rows = -(-rows // q.mr) * q.mr  # whole register tiles per block...
        pm = -(-m // rows)  # ... and no block left empty by the rounding
    pack_units = b * (min(panels, 4 * cpus) if parallel else 1)
    return {"pm": pm, "own": True, "panel_cols": q.nr, "pack_units": pack_units,
            "row_align": q.mr}


def cpu_hint() -> int:
    """CPUs this process may use (a property of the machine, not of EMBER_NUM_THREADS)."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        n = os.cpu_count() or 1
    return max(1, min(n, MAX_PIECES))


# -- views ----------------------------------------------------------------------------------


def _row_major_strides(dims: tuple[int, ...]) -> list[int]:
    out, s = [], 1
    for d in reversed(dims):
        out.append(s)
        s *= d
    return out[::-1]


def _axis_stride(dims: tuple[int, ...], strides: list[int], axis: list[int]) -> int | None:
    """Element stride of a group of dims read as one axis (in the group's order), 0 when
    its extent is 1 (any stride will do), None when the dims do not form one axis."""
    live = [d for d in axis if dims[d] != 1]
    if not live:
        return 0
    for x, y in zip(live, live[1:]):
        if strides[x] != strides[y] * dims[y]:
            return None
    return strides[live[-1]]


def _orientation(s_rows: int, s_cols: int, rows: int, cols: int) -> tuple[int, int] | None:
    """(trans, ld) for a rows x cols view with these strides, or None. A stride of 0 means
    an axis of extent 1."""
    if s_cols in (0, 1):  # plain row-major: element (r, c) at r * ld + c
        ld = s_rows if rows > 1 else max(cols, 1)
        if ld >= max(cols, 1):
            return 0, ld
    if s_rows in (0, 1):  # the transpose is row-major: element (r, c) at c * ld + r
        ld = s_cols if cols > 1 else max(rows, 1)
        if ld >= max(rows, 1):
            return 1, ld
    return None


def _view(dims: tuple[int, ...], batch: list[int], row_axis: list[int], col_axis: list[int],
          rows: int, cols: int) -> View:
    strides = _row_major_strides(dims)
    sr = _axis_stride(dims, strides, row_axis)
    sc = _axis_stride(dims, strides, col_axis)
    if sr is not None and sc is not None and _orientation(sr, sc, rows, cols) is not None:
        return View(sr, sc, tuple(strides[d] for d in batch))
    # packed [batch..., rows, cols]: batch strides are those of the packed batch dims
    ext = [dims[d] for d in batch]
    packed_batch = [s * rows * cols for s in _row_major_strides(tuple(ext))]
    return View(cols if rows > 1 else 0, 1 if cols > 1 else 0, tuple(packed_batch), True)


# -- partition ------------------------------------------------------------------------------


def _gemm_pieces(b: int, m: int, n: int, k: int, cpus: int) -> tuple[int, int]:
    """(pm, pn) minimizing the cost model over pieces per matrix (see module docstring)."""
    best = (math.inf, 1, 1)
    want = min(UNITS_PER_CPU * cpus, b * m * n * k // MIN_UNIT_MACS) if cpus > 1 else 1
    for pn in range(1, min(n, MAX_PIECES) + 1):
        for pm in range(1, min(m, MAX_PIECES // pn) + 1):
            mb, nb = -(-m // pm), -(-n // pn)
            if (pm > 1 and mb < 16) or (pn > 1 and nb < 16):
                continue
            units = b * pm * pn
            if units < want:
                continue  # too coarse for a late worker to share (see UNITS_PER_CPU)
            per_unit = 2 * mb * nb * k + PACK_COST * (mb + nb) * k + CALL_COST
            cost = -(-units // cpus) * per_unit
            if cost < best[0] * 0.999:  # ties: fewer pieces, then row blocks first
                best = (cost, pm, pn)
    return best[1], best[2]


def _gemv_pieces(b: int, extent: int, cpus: int) -> int:
    """Pieces of the split axis of a batched gemv: enough for every CPU."""
    if b >= cpus:
        return 1
    want = -(-cpus // b)
    return max(1, min(want, extent // GEMV_MIN_BLOCK))
