"""A plain-text picture of how an array of rank 1 or 2 is laid out over devices (what
`jax.debug.visualize_array_sharding` draws with the `rich` library, without it).

Input: a global shape and a `Sharding`. Output: a box per distinct shard, in a grid of the
row and column blocks, each labelled with the devices holding it ("CPU 0,1"). Invariant:
every device of the sharding appears in exactly one box.
"""

from __future__ import annotations

from typing import Any


def _blocks(index_map: dict, dim: int, n: int) -> list[tuple[int, int]]:
    spans = {(s[dim].start or 0, n if s[dim].stop is None else s[dim].stop)
             for s in index_map.values()}
    return sorted(spans)


def sharding_text(shape: tuple[int, ...], sharding: Any, *, cell_width: int = 0) -> str:
    """The table as a string (see the module docstring)."""
    if len(shape) not in (1, 2):
        raise ValueError("visualize_array_sharding only works for 1D or 2D arrays, "
                         f"got an array of rank {len(shape)}")
    shape2 = tuple(shape) if len(shape) == 2 else (1,) + tuple(shape)
    index_map = sharding.devices_indices_map(tuple(shape))
    if len(shape) == 1:
        index_map = {d: (slice(None),) + tuple(i) for d, i in index_map.items()}
    rows = _blocks(index_map, 0, shape2[0])
    cols = _blocks(index_map, 1, shape2[1])
    owners: dict[tuple[int, int], list[int]] = {}
    for dev, idx in index_map.items():
        r = rows.index((idx[0].start or 0, shape2[0] if idx[0].stop is None else idx[0].stop))
        c = cols.index((idx[1].start or 0, shape2[1] if idx[1].stop is None else idx[1].stop))
        owners.setdefault((r, c), []).append(dev.id)
    labels = {k: "CPU " + ",".join(map(str, sorted(v))) for k, v in owners.items()}
    width = max([cell_width] + [len(t) + 2 for t in labels.values()])
    line = "+" + "+".join("-" * width for _ in cols) + "+"
    out = [line]
    for r in range(len(rows)):
        out.append("|" + "|".join(labels.get((r, c), "").center(width)
                                  for c in range(len(cols))) + "|")
        out.append(line)
    return "\n".join(out)
