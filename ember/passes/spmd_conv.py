"""The SPMD partitioner's rule for `convolution`: split along batch, output features,
input features and spatial dims rather than computed whole on every device
(spmd_partitioner.py drives it; spmd_rules.py has the other opcode families).

Input: the partitioner's state (`get`, `emit`, `refuse`, the mesh, the values made so far).
Output: the `Local` of a convolution. Dims and what a split of each does:
  lhs batch            (batch_group_count 1) the result's batch dim keeps the split: each
                       device convolves its images, no communication
  kernel out features  (no groups) the result's feature dim keeps the split: each device
                       convolves with its filters, no communication
  input features       (no groups; lhs feature and kernel in split alike, or one side
                       sliced to match the other) each device convolves its channels: the
                       results are partial sums over those axes (an all-reduce where read,
                       as a dot's contraction; a conv's kernel gradient contracts the
                       batch this way)
  lhs spatial          (no base dilation, the output as long as the input over the stride,
                       and halos no longer than a block) each device convolves its block
                       extended by a halo: the last `lo` rows of the block before it and
                       the first `hi` rows of the block after (lo = the window's low
                       padding, hi = its extent less the stride less lo), zeros past the
                       ends (the convolution's own padding). The halos come from one
                       all-gather of every device's edge rows (lo + hi rows each), each
                       device then slicing its neighbours' pieces (no collective-permute:
                       it moves (n-1) edges rather than 2, a few rows); the local window
                       is unpadded along that dim.
  anything else        (kernel spatial dims, grouped convolutions' feature dims, a spatial
                       split the conditions above exclude) gathered first (a refusal).
A mesh axis wanted by two dims keeps the first (input features, batch, output features,
spatial dims in order).
Invariants: a device's local convolution reads exactly the input rows, padding and taps
the whole one reads for its block of the result; only sums over input features are left
to add (so results equal the whole convolution's, float sums perhaps in another order).
"""

from __future__ import annotations

from typing import Any

from ember.hlo.ir import Instruction
from ember.hlo.sharding import HloSharding
from ember.hlo.window import WindowDim, dilated, parse_dim_labels
from ember.passes.spmd_reshard import Local
from ember.passes.spmd_rules import fit, reader


def _halo(w: WindowDim, n: int, n_out: int, blocks: int) -> tuple[int, int] | None:
    """The rows (lo, hi) a device's block of `n // blocks` input rows needs from the
    blocks before and after it along a spatial dim of window `w`, or None where a split
    block cannot be convolved on its own so (base dilation, an output not cut in blocks
    aligned with the input's, a halo reaching past the next block)."""
    if w.lhs_dilate != 1 or n % blocks or n_out * w.stride != n:
        return None
    block = n // blocks
    lo = w.pad_lo
    hi = dilated(w.size, w.rhs_dilate) - w.stride - lo
    if block % w.stride or not (0 <= lo <= block and 0 <= hi <= block):
        return None
    return lo, hi


class ConvRules:
    """Mixed into the partitioner (see the module docstring)."""

    def _convolution(self: Any, inst: Instruction) -> Local:
        lhs, rhs = inst.operands
        at = inst.attrs
        dl = parse_dim_labels(at["dim_labels"])
        window = list(at["window"])
        grouped = at.get("feature_group_count", 1) != 1 or at.get("batch_group_count", 1) != 1
        sl, sr = self.env[lhs].sharding, self.env[rhs].sharding
        used: set[str] = set()

        def take(axes: tuple[str, ...]) -> tuple[str, ...]:
            if not axes or used & set(axes):
                return ()
            used.update(axes)
            return axes

        contract = () if grouped else take(sl.dims[dl.lhs_feature] or sr.dims[dl.rhs_in])
        batch = take(sl.dims[dl.lhs_batch]) if at.get("batch_group_count", 1) == 1 else ()
        feature = () if grouped else take(sr.dims[dl.rhs_out])
        halos: dict[int, tuple[int, int]] = {}
        spatial: list[tuple[str, ...]] = []
        for k, (i, o) in enumerate(zip(dl.lhs_spatial, dl.out_spatial)):
            axes = sl.dims[i]
            halo = None if not axes or used & set(axes) else _halo(
                window[k], lhs.shape.dimensions[i], inst.shape.dimensions[o], sl.blocks(i))
            spatial.append(take(axes) if halo is not None else ())
            if halo is not None:
                halos[k] = halo
        tl: list[tuple[str, ...]] = [()] * lhs.shape.rank
        tr: list[tuple[str, ...]] = [()] * rhs.shape.rank
        tl[dl.lhs_feature] = tr[dl.rhs_in] = contract
        tl[dl.lhs_batch] = batch
        tr[dl.rhs_out] = feature
        for i, axes in zip(dl.lhs_spatial, spatial):
            tl[i] = axes
        want_l = fit(HloSharding(self.mesh, tuple(tl)), lhs.shape.dimensions)
        want_r = fit(HloSharding(self.mesh, tuple(tr)), rhs.shape.dimensions)
        if want_l.dims[dl.lhs_feature] != want_r.dims[dl.rhs_in]:  # (uneven on one side)
            want_l = want_l.with_dim(dl.lhs_feature, ())
            want_r = want_r.with_dim(dl.rhs_in, ())
        if want_l != sl or want_r != sr:
            self.refuse(inst, "convolution: a kernel spatial dim, a grouped convolution's "
                        "features, a spatial split its window does not allow (base "
                        "dilation, output blocks not aligned with the input's, a halo "
                        "past the next block), or a mesh axis wanted twice: gathered")
        dims: list[tuple[str, ...]] = [()] * inst.shape.rank
        dims[dl.out_batch] = want_l.dims[dl.lhs_batch]
        dims[dl.out_feature] = want_r.dims[dl.rhs_out]
        for i, o in zip(dl.lhs_spatial, dl.out_spatial):
            dims[o] = want_l.dims[i]
        s = HloSharding(self.mesh, tuple(dims))
        why = reader(inst)
        x = self.get(lhs, want_l, why)
        for k, i in enumerate(dl.lhs_spatial):
            if want_l.dims[i]:
                lo, hi = halos[k]
                x = self._with_halo(inst, x, i, want_l.dims[i], lo, hi)
                window[k] = window[k]._replace(pad_lo=0, pad_hi=0)
        ops = [x, self.get(rhs, want_r, why)]
        partial = tuple(a for a, _ in self.mesh if a in want_l.dims[dl.lhs_feature])
        return Local(self.emit(inst, ops, s, {**at, "window": tuple(window)}), s, partial)

    def _with_halo(self: Any, inst: Instruction, x: Instruction, d: int,
                   axes: tuple[str, ...], lo: int, hi: int) -> Instruction:
        """Block `x` (split over `axes` along `d`) with the last `lo` rows of the block
        before it and the first `hi` rows of the block after it (zeros past the ends)."""
        if not lo and not hi:
            return x
        b = self.b
        dims = list(x.shape.dimensions)
        n = dims[d]

        def cut(start: int, stop: int) -> Instruction:
            return b.slice(x, [start if k == d else 0 for k in range(len(dims))],
                           [stop if k == d else m for k, m in enumerate(dims)])

        edges = [cut(0, hi)] if hi else []
        edges += [cut(n - lo, n)] if lo else []
        edge = edges[0] if len(edges) == 1 else b.concatenate(edges, d)
        e = lo + hi
        got = self.rs.all_gather(edge, d, axes, f"the halo of %{inst.name} (convolution): "
                                 "each device's edge rows")
        zero = b.scalar(0, x.shape.element_type)
        # (an edge's worth of zeros before the first device's and after the last's: the
        # convolution's padding, where the blocks have no neighbour)
        padded = b.pad(got, zero, [(e, e, 0) if k == d else (0, 0, 0)
                                   for k in range(len(dims))])
        k_e = self.rs.offset(axes, e)  # (device k's edges start at (k + 1) * e in `padded`)
        zero_i = b.scalar(0, "s32")
        pieces = []
        size = [e if k == d else m for k, m in enumerate(dims)]
        if lo:  # (block k - 1's last lo rows: at k * e + hi)
            start = b.add(k_e, b.scalar(hi, "s32")) if hi else k_e
            pieces.append(b.dynamic_slice(padded, [start if k == d else zero_i
                                                   for k in range(len(dims))],
                                          [lo if k == d else m for k, m in enumerate(size)]))
        pieces.append(x)
        if hi:  # (block k + 1's first hi rows: at (k + 2) * e)
            start = b.add(k_e, b.scalar(2 * e, "s32"))
            pieces.append(b.dynamic_slice(padded, [start if k == d else zero_i
                                                   for k in range(len(dims))],
                                          [hi if k == d else m for k, m in enumerate(size)]))
        return b.concatenate(pieces, d)
