"""The SPMD partitioner's rule for `convolution`: split along batch, output features,
input features and spatial dims rather than computed whole on every device
(spmd_partitioner.py drives it; spmd_rules.py has the other opcode families).

Input: the partitioner's state (`get`, `emit`, `refuse`, the mesh, the values made so far).
Output: the `Local` of a convolution. Dims and what a split of each does:
  lhs batch            (batch_group_count 1) the result's batch dim keeps the split: each
                       device convolves its images, no communication
  feature groups       (feature_group_count g > 1, a depthwise convolution: lhs features
                       and kernel out features split alike into a number of blocks that
                       divides g) each device convolves its whole groups (g / blocks of
                       them), no communication
  kernel out features  (no groups) the result's feature dim keeps the split: each device
                       convolves with its filters, no communication
  input features       (no groups; lhs feature and kernel in split alike, or one side
                       sliced to match the other) each device convolves its channels: the
                       results are partial sums over those axes (an all-reduce where read,
                       as a dot's contraction; a conv's kernel gradient contracts the
                       batch this way)
  lhs spatial          (no base dilation, input and output rows cut evenly, halos no
                       longer than a block: SAME, VALID, strided, any padding) each device
                       convolves its block extended by a halo, `Halo`: the last `lo` rows
                       of the block before it and the first `hi` rows of the block after
                       (the most any block's output rows read past its own), zeros past
                       the ends (the convolution's own padding), then cut to the rows its
                       output block reads (a table of starts by device where they differ);
                       the local window unpadded along that dim. The halos come from one
                       all-gather of every device's edge rows (lo + hi rows each), each
                       device slicing its neighbours' pieces (no collective-permute: it
                       moves (n-1) edges rather than 2, a few rows).
  lhs and kernel       (a kernel gradient: its window, the output gradient, split as its
  spatial alike        input is; window stride and base dilation 1) each device sums the
                       taps it holds over every output position, its input block extended
                       by the halo those taps read (as above): partial sums over those axes
  anything else        (other kernel spatial splits, grouped convolutions' features cut
                       into blocks that do not divide the groups, a spatial split the
                       conditions above exclude) gathered first (a refusal).
A mesh axis wanted by two dims keeps the first (input features or groups, batch, output
features, spatial dims in order).
Invariants: a device's local convolution reads exactly the input rows, padding and taps
the whole one reads for its block of the result; only sums over input features and split
taps are left to add (so results equal the whole convolution's, float sums perhaps in
another order).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ember.hlo.ir import Instruction
from ember.hlo.sharding import HloSharding, block_index
from ember.hlo.window import WindowDim, dilated, parse_dim_labels
from ember.passes.spmd_reshard import Local
from ember.passes.spmd_rules import AxisTaker, fit, reader


class Halo(NamedTuple):
    """What a device's block of input rows needs along a split spatial dim: `lo` rows from
    the block before it and `hi` from the block after (zeros past the ends), then, of that
    extended block, `length` rows from `starts[k]` for block k (its output rows' windows)."""
    lo: int
    hi: int
    starts: tuple[int, ...]
    length: int


def _halo(w: WindowDim, n: int, n_out: int, blocks: int) -> Halo | None:
    """The halo along a spatial dim of `n` input rows, `n_out` output rows and window `w`
    split in `blocks` (see `Halo`), or None where a block cannot be convolved on its own
    so: base dilation, input or output rows not cut evenly, a halo reaching past the next
    block. Output block k's rows read input rows [k*Bo*s - lo, k*Bo*s - lo + (Bo-1)*s +
    extent) (Bo output rows a block, s the stride, lo the low padding): rows before 0 and
    from n on are the padding, the zeros past the ends."""
    if w.lhs_dilate != 1 or n % blocks or n_out % blocks or not n_out:
        return None
    block, bo = n // blocks, n_out // blocks
    length = (bo - 1) * w.stride + dilated(w.size, w.rhs_dilate)
    return _block_halo([k * bo * w.stride - w.pad_lo for k in range(blocks)], block, length)


def _tap_halo(w: WindowDim, n: int, m: int, n_out: int, blocks: int) -> Halo | None:
    """The halo along a spatial dim of `n` input rows whose window of `m` taps is split
    alike (`blocks` blocks of both: a kernel gradient's convolution, the window being the
    output gradient), where each device sums the taps it holds over every output row
    (partial sums), or None (a window stride or base dilation, rows not cut evenly, a halo
    past the next block). Output row t reads input rows t - lo + j*r for taps j (r the
    window dilation): block k's taps [k*mb, (k+1)*mb) read rows [k*mb*r - lo,
    k*mb*r - lo + (mb-1)*r + n_out)."""
    if w.stride != 1 or w.lhs_dilate != 1 or n % blocks or m % blocks or not n_out:
        return None
    block, mb = n // blocks, m // blocks
    length = (mb - 1) * w.rhs_dilate + n_out
    return _block_halo([k * mb * w.rhs_dilate - w.pad_lo for k in range(blocks)], block,
                       length)


def _block_halo(first: list[int], block: int, length: int) -> Halo | None:
    """The halo when block k (of `block` rows) reads `length` rows from row `first[k]`, or
    None when it reaches past a neighbouring block."""
    need_lo = [k * block - f for k, f in enumerate(first)]
    need_hi = [f + length - (k + 1) * block for k, f in enumerate(first)]
    lo, hi = max(0, *need_lo), max(0, *need_hi)
    if lo > block or hi > block:
        return None
    return Halo(lo, hi, tuple(lo - m for m in need_lo), length)


class ConvRules:
    """Mixed into the partitioner (see the module docstring)."""

    def _convolution(self: Any, inst: Instruction) -> Local:
        lhs, rhs = inst.operands
        at = inst.attrs
        dl = parse_dim_labels(at["dim_labels"])
        window = list(at["window"])
        fg, bg = at.get("feature_group_count", 1), at.get("batch_group_count", 1)
        grouped = fg != 1 or bg != 1
        sl, sr = self.env[lhs].sharding, self.env[rhs].sharding
        take = AxisTaker()
        contract = () if grouped else take(sl.dims[dl.lhs_feature] or sr.dims[dl.rhs_in])
        # (feature groups, a depthwise convolution's channels: whole groups a device, its
        # input features and its filters cut alike)
        groups: tuple[str, ...] = ()
        if fg > 1 and bg == 1:
            axes = sl.dims[dl.lhs_feature] or sr.dims[dl.rhs_out]
            if axes and fg % math.prod(sl.sizes[a] for a in axes) == 0:
                groups = take(axes)
        batch = take(sl.dims[dl.lhs_batch]) if bg == 1 else ()
        feature = groups or (() if grouped else take(sr.dims[dl.rhs_out]))
        halos: dict[int, Halo] = {}
        spatial: list[tuple[str, ...]] = []
        taps: set[int] = set()  # (spatial dims whose kernel taps are split too: summed)
        for k, (i, j, o) in enumerate(zip(dl.lhs_spatial, dl.rhs_spatial, dl.out_spatial)):
            axes = sl.dims[i]
            n, n_out = lhs.shape.dimensions[i], inst.shape.dimensions[o]
            halo = None
            if axes and take.free(axes):
                if sr.dims[j] == axes:
                    halo = _tap_halo(window[k], n, rhs.shape.dimensions[j], n_out,
                                     sl.blocks(i))
                    if halo is not None:
                        taps.add(k)
                if halo is None:
                    halo = _halo(window[k], n, n_out, sl.blocks(i))
            spatial.append(take(axes) if halo is not None else ())
            if halo is not None:
                halos[k] = halo
        tl: list[tuple[str, ...]] = [()] * lhs.shape.rank
        tr: list[tuple[str, ...]] = [()] * rhs.shape.rank
        tr[dl.rhs_in] = contract
        tl[dl.lhs_feature] = groups or contract
        tl[dl.lhs_batch] = batch
        tr[dl.rhs_out] = feature
        for k, (i, axes) in enumerate(zip(dl.lhs_spatial, spatial)):
            tl[i] = axes
            if k in taps:
                tr[dl.rhs_spatial[k]] = axes
        want_l = fit(HloSharding(self.mesh, tuple(tl)), lhs.shape.dimensions)
        want_r = fit(HloSharding(self.mesh, tuple(tr)), rhs.shape.dimensions)
        if groups and want_l.dims[dl.lhs_feature] != want_r.dims[dl.rhs_out]:
            want_l = want_l.with_dim(dl.lhs_feature, ())
            want_r = want_r.with_dim(dl.rhs_out, ())
            groups = ()
        if not groups and want_l.dims[dl.lhs_feature] != want_r.dims[dl.rhs_in]:
            want_l = want_l.with_dim(dl.lhs_feature, ())  # (uneven on one side)
            want_r = want_r.with_dim(dl.rhs_in, ())
        dropped = [d for d in range(lhs.shape.rank) if sl.dims[d] and
                   sl.dims[d] != want_l.dims[d]]
        dropped += [d for d in range(rhs.shape.rank) if sr.dims[d] and
                    sr.dims[d] != want_r.dims[d]]
        if dropped:  # (a whole operand sliced to match is no refusal: it moves nothing)
            self.refuse(inst, "convolution: a kernel spatial dim, a grouped convolution's "
                        "features, a spatial split its window does not allow (base "
                        "dilation, output blocks not aligned with the input's, a halo "
                        "past the next block), or a mesh axis wanted twice: gathered")
        dims: list[tuple[str, ...]] = [()] * inst.shape.rank
        dims[dl.out_batch] = want_l.dims[dl.lhs_batch]
        dims[dl.out_feature] = want_r.dims[dl.rhs_out]
        for k, (i, o) in enumerate(zip(dl.lhs_spatial, dl.out_spatial)):
            dims[o] = () if k in taps else want_l.dims[i]
        s = HloSharding(self.mesh, tuple(dims))
        why = reader(inst)
        x = self.get(lhs, want_l, why)
        for k, i in enumerate(dl.lhs_spatial):
            if want_l.dims[i]:
                x = self._with_halo(inst, x, i, want_l.dims[i], halos[k])
                window[k] = window[k]._replace(pad_lo=0, pad_hi=0)
                if k in taps:  # (the taps this device holds)
                    window[k] = window[k]._replace(size=want_r.local_shape(
                        rhs.shape.dimensions)[dl.rhs_spatial[k]])
        ops = [x, self.get(rhs, want_r, why)]
        attrs = {**at, "window": tuple(window)}
        # (the sums left to add: over split input features, and over split taps)
        summed = {a for k in taps for a in want_l.dims[dl.lhs_spatial[k]]}
        if groups:
            attrs["feature_group_count"] = fg // want_l.blocks(dl.lhs_feature)
        else:
            summed |= set(want_l.dims[dl.lhs_feature])
        partial = tuple(a for a, _ in self.mesh if a in summed)
        return Local(self.emit(inst, ops, s, attrs), s, partial)

    def _with_halo(self: Any, inst: Instruction, x: Instruction, d: int,
                   axes: tuple[str, ...], halo: Halo) -> Instruction:
        """Block `x` (split over `axes` along `d`) extended by the last `halo.lo` rows of
        the block before it and the first `halo.hi` rows of the block after it (zeros
        past the ends), then cut to the rows its output block reads."""
        b = self.b
        dims = list(x.shape.dimensions)
        n = dims[d]
        lo, hi = halo.lo, halo.hi

        def along(start: int | Instruction, size: int, y: Instruction) -> Instruction:
            zero = b.scalar(0, "s32")
            if isinstance(start, int):
                return b.slice(y, [start if k == d else 0 for k in range(len(dims))],
                               [start + size if k == d else m for k, m in
                                enumerate(y.shape.dimensions)])
            return b.dynamic_slice(y, [start if k == d else zero for k in range(len(dims))],
                                   [size if k == d else m for k, m in
                                    enumerate(y.shape.dimensions)])

        pieces = [x]
        if lo or hi:
            edges = ([along(0, hi, x)] if hi else []) + ([along(n - lo, lo, x)] if lo else [])
            edge = edges[0] if len(edges) == 1 else b.concatenate(edges, d)
            e = lo + hi
            got = self.rs.all_gather(edge, d, axes, f"the halo of %{inst.name} "
                                     "(convolution): each device's edge rows")
            # (an edge's worth of zeros before the first device's and after the last's: the
            # convolution's padding, where the blocks have no neighbour)
            padded = b.pad(got, b.scalar(0, x.shape.element_type),
                           [(e, e, 0) if k == d else (0, 0, 0) for k in range(len(dims))])
            k_e = self.rs.offset(axes, e)  # (device k's edges start at (k + 1) * e)
            if lo:  # (block k - 1's last lo rows: at k * e + hi)
                at = b.add(k_e, b.scalar(hi, "s32")) if hi else k_e
                pieces.insert(0, along(at, lo, padded))
            if hi:  # (block k + 1's first hi rows: at (k + 2) * e)
                pieces.append(along(b.add(k_e, b.scalar(2 * e, "s32")), hi, padded))
        ext = pieces[0] if len(pieces) == 1 else b.concatenate(pieces, d)
        if len(set(halo.starts)) == 1:
            if halo.starts[0] == 0 and halo.length == lo + n + hi:
                return ext
            return along(halo.starts[0], halo.length, ext)
        # (blocks whose output rows start at different places in their extended blocks:
        # a table of starts by device)
        count = math.prod(s for _, s in self.mesh)
        table = np.array([halo.starts[block_index(self.mesh, axes, p)] for p in range(count)],
                         np.int32)
        start = b.reshape(b.dynamic_slice(b.constant(table), [self.rs.pid], [1]), ())
        return along(start, halo.length, ext)
