"""Windows and convolution dimension labels: the attributes of `convolution` and
`reduce-window`, their text form and their arithmetic.

Input: per spatial dimension a `WindowDim(size, stride, pad_lo, pad_hi, lhs_dilate,
rhs_dilate)`; a convolution's `dim_labels` string as XLA prints it ("b01f_01io->b01f":
lhs batch/feature/spatial, kernel input/output feature/spatial, output batch/feature/spatial,
spatial dimension k spelled by the digit k).
Output: `format_window`/`parse_window` (XLA's `window={size=3x3 stride=2x2 pad=1_1x1_1
lhs_dilate=... rhs_dilate=...}`, fields at their default omitted), `parse_dim_labels`,
`format_dim_labels`, and `window_output_size`.
Invariants (XLA's semantics): a window dimension reads the base dilated by `lhs_dilate`
(lhs_dilate - 1 holes between elements), padded by pad_lo/pad_hi (negative crops), with the
window's taps `rhs_dilate` apart; output element i starts at i * stride. So with
n' = (n - 1) * lhs_dilate + 1 + lo + hi and window extent w' = (size - 1) * rhs_dilate + 1
the output has max(0, (n' - w') // stride + 1) elements (0 when n' < w').
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple


class WindowDim(NamedTuple):
    size: int
    stride: int = 1
    pad_lo: int = 0
    pad_hi: int = 0
    lhs_dilate: int = 1
    rhs_dilate: int = 1


class DimLabels(NamedTuple):
    """Dimension numbers of a convolution: positions in each operand's shape."""
    lhs_batch: int
    lhs_feature: int
    lhs_spatial: tuple[int, ...]
    rhs_in: int
    rhs_out: int
    rhs_spatial: tuple[int, ...]
    out_batch: int
    out_feature: int
    out_spatial: tuple[int, ...]


def make_window(size: Sequence[int], stride: Sequence[int] | None = None,
                padding: Sequence[tuple[int, int]] | None = None,
                lhs_dilate: Sequence[int] | None = None,
                rhs_dilate: Sequence[int] | None = None) -> tuple[WindowDim, ...]:
    n = len(size)
    stride = stride or (1,) * n
    padding = padding or ((0, 0),) * n
    lhs_dilate = lhs_dilate or (1,) * n
    rhs_dilate = rhs_dilate or (1,) * n
    return tuple(WindowDim(int(s), int(st), int(lo), int(hi), int(ld), int(rd))
                 for s, st, (lo, hi), ld, rd in zip(size, stride, padding, lhs_dilate,
                                                    rhs_dilate))


def dilated(n: int, dilation: int) -> int:
    """Elements of a dimension of n with dilation - 1 holes between neighbours."""
    return 0 if n == 0 else (n - 1) * dilation + 1


def window_output_size(n: int, w: WindowDim) -> int:
    base = dilated(n, w.lhs_dilate) + w.pad_lo + w.pad_hi
    extent = dilated(w.size, w.rhs_dilate)
    if base < extent or w.stride <= 0:
        return 0
    return (base - extent) // w.stride + 1


def format_window(window: Sequence[WindowDim]) -> str:
    if not window:
        return "{}"
    parts = ["size=" + "x".join(str(w.size) for w in window)]
    if any(w.stride != 1 for w in window):
        parts.append("stride=" + "x".join(str(w.stride) for w in window))
    if any(w.pad_lo or w.pad_hi for w in window):
        parts.append("pad=" + "x".join(f"{w.pad_lo}_{w.pad_hi}" for w in window))
    if any(w.lhs_dilate != 1 for w in window):
        parts.append("lhs_dilate=" + "x".join(str(w.lhs_dilate) for w in window))
    if any(w.rhs_dilate != 1 for w in window):
        parts.append("rhs_dilate=" + "x".join(str(w.rhs_dilate) for w in window))
    return "{" + " ".join(parts) + "}"


def parse_window(text: str) -> tuple[WindowDim, ...]:
    body = text.strip().strip("{}").strip()
    if not body:
        return ()
    fields: dict[str, list[str]] = {}
    for item in body.split():
        key, _, value = item.partition("=")
        fields[key] = value.split("x")
    unknown = set(fields) - {"size", "stride", "pad", "lhs_dilate", "rhs_dilate"}
    if unknown or "size" not in fields:
        raise ValueError(f"bad window {text!r}")
    n = len(fields["size"])
    pads = [tuple(int(v) for v in p.split("_")) for p in fields.get("pad", ["0_0"] * n)]
    return make_window([int(v) for v in fields["size"]],
                       [int(v) for v in fields.get("stride", ["1"] * n)],
                       [(p[0], p[1]) for p in pads],
                       [int(v) for v in fields.get("lhs_dilate", ["1"] * n)],
                       [int(v) for v in fields.get("rhs_dilate", ["1"] * n)])


def parse_dim_labels(text: str) -> DimLabels:
    """'b01f_01io->b01f' -> DimLabels (raises ValueError on a malformed string)."""
    try:
        operands, out = text.split("->")
        lhs, rhs = operands.split("_")
    except ValueError:
        raise ValueError(f"bad dim_labels {text!r}") from None

    def spatial(labels: str, others: str) -> tuple[int, ...]:
        rest = [c for c in labels if c not in others]
        if sorted(rest) != [str(k) for k in range(len(rest))] or len(labels) != len(rest) + 2:
            raise ValueError(f"bad dim_labels {text!r}")
        return tuple(labels.index(str(k)) for k in range(len(rest)))

    ls, rs, os_ = spatial(lhs, "bf"), spatial(rhs, "io"), spatial(out, "bf")
    if not len(ls) == len(rs) == len(os_):
        raise ValueError(f"bad dim_labels {text!r}")
    return DimLabels(lhs.index("b"), lhs.index("f"), ls, rhs.index("i"), rhs.index("o"), rs,
                     out.index("b"), out.index("f"), os_)


def format_dim_labels(d: DimLabels) -> str:
    def spell(rank: int, a: int, la: str, b: int, lb: str, sp: Sequence[int]) -> str:
        chars = [""] * rank
        chars[a], chars[b] = la, lb
        for k, p in enumerate(sp):
            chars[p] = str(k)
        return "".join(chars)

    n = len(d.lhs_spatial) + 2
    return (spell(n, d.lhs_batch, "b", d.lhs_feature, "f", d.lhs_spatial) + "_"
            + spell(n, d.rhs_in, "i", d.rhs_out, "o", d.rhs_spatial) + "->"
            + spell(n, d.out_batch, "b", d.out_feature, "f", d.out_spatial))
