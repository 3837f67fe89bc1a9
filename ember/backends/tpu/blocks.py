"""Block shapes for Ember's Mosaic kernels: the 2-D view of a fusion and the block each
grid step works on.

Input: the fusion's shape, the element types of its windows, whether the columns must stay
whole (row kernels reduce along them). Output: `View` (rows R, columns C of the 2-D view)
and `Blocks` (block rows br, block columns bc, the grid).

The TPU's vector registers hold (8, 128) tiles of 32-bit values, (16, 128) of 16-bit ones:
a block's rows are a multiple of the sublane count of its narrowest type (8 for 32 bits, 16
for bf16) or all R rows, its columns a multiple of 128 or all C columns. Each step's
blocks live in scoped vector memory (VMEM, `SCOPED_VMEM` = 16 MiB on v5e), every window
double-buffered (the next block is copied in while this one is computed) plus about
`TEMPS` f32 blocks of intermediates: 2 * sum(window blocks) + TEMPS * br*bc*4 <= `BUDGET`,
3/4 of the 16 MiB. (Measured on the v5e, issue 20: a row softmax in 128x4096 f32 blocks
ran, 8 MiB + 4 MiB of temporaries; 512x4096 did not compile.) Blocks are capped at
`MAX_ROWS` rows or `MAX_BLOCK_ELEMS` elements, whichever is more: larger blocks gain
nothing once a step's copy hides the ~0.35 us per-step overhead. A view whose
rows do not divide by br gets a last, partial block (Mosaic masks what lies outside).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

SCOPED_VMEM = 16 * 1024 * 1024
BUDGET = SCOPED_VMEM * 3 // 4  # (what the blocks may take: Mosaic keeps scratch of its own)
TEMPS = 2
MAX_ROWS = 512
MAX_BLOCK_ELEMS = 512 * 1024  # (a narrow view's blocks: 2 MiB of f32 a window and step)
LANES = 128


@dataclass(frozen=True)
class View:
    rows: int
    cols: int


@dataclass(frozen=True)
class Blocks:
    rows: int   # br
    cols: int   # bc
    grid: tuple[int, ...]  # (ceil(R / br),) or (ceil(R / br), ceil(C / bc))


def sublanes(itemsize: int) -> int:
    """Rows of one vector tile for a type of `itemsize` bytes: 8 for 32 bits, 16 for 16."""
    return 8 * max(1, 4 // itemsize)


def view_of(dims: tuple[int, ...], keep_last: bool) -> View | None:
    """The 2-D view of a fusion of shape `dims`: (product of the outer dims, last dim) where
    the last dim is lane-aligned or must stay whole (`keep_last`: a row kernel); a vector
    of N elements as (N / 128, 128), a bitcast of the TPU's own layout of a vector (tiles
    of 1024 consecutive elements: exactly one (8, 128) tile of the view), so XLA copies
    nothing to hand it over (a wider view was measured at half the bandwidth: XLA
    relaid every operand out first). None: no view (a size-0 shape; a vector whose size
    is no multiple of 128; a higher-rank shape whose last dim is not lane-aligned, which
    no view reaches without a relayout: XLA fuses those)."""
    n = math.prod(dims)
    if n == 0 or not dims:
        return None
    if keep_last or (len(dims) >= 2 and dims[-1] % LANES == 0):
        return View(n // dims[-1], dims[-1])
    if len(dims) >= 2 or n % LANES:
        return None
    return View(n // LANES, LANES)


def choose(view: View, bytes_per_elem: int, min_itemsize: int,
           whole_rows: bool) -> Blocks | None:
    """Blocks for `view` whose windows take `bytes_per_elem` bytes per element in all (the
    sum over windows of full blocks); None where not even one tile of rows fits (a row
    kernel whose rows are too long)."""
    sub = sublanes(min_itemsize)
    per_elem = 2 * bytes_per_elem + TEMPS * 4
    cols = view.cols
    if min(sub, view.rows) * cols * per_elem > BUDGET:
        if whole_rows:
            return None
        cols = (BUDGET // (sub * per_elem)) // LANES * LANES
        if cols == 0:
            return None
    fit = BUDGET // (cols * per_elem)
    limit = min(fit, max(MAX_ROWS, MAX_BLOCK_ELEMS // cols))
    if view.rows <= limit:
        rows = view.rows
    else:
        rows = _best_rows(view.rows, limit, sub)
    grid = (-(-view.rows // rows),)
    if cols != view.cols:
        grid += (-(-view.cols // cols),)
    return Blocks(rows, cols, grid)


def _best_rows(n: int, limit: int, sub: int) -> int:
    """The largest multiple of `sub` up to `limit` that divides `n`, unless only a much
    smaller one does (then the largest multiple of `sub` up to `limit`, with a partial last
    block)."""
    top = limit // sub * sub
    for r in range(top, 0, -sub):
        if n % r == 0:
            return r if r * 4 >= top else top
    return top
