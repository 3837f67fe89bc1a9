"""Writes random_golden.py: JAX 0.10.2's values for every case of random_cases.py.

Run from the repository root with JAX installed: python tests/unit/random_golden_gen.py
The tests never import JAX; they compare Ember's values with the literals written here.
Float values are stored as their bit patterns (exact), with dtype and shape; draws of
more than 64 values keep their first 64.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _record(value) -> tuple[str, tuple, list[int]]:
    a = np.asarray(value)
    dtype = str(a.dtype)
    if a.dtype.kind == "f":
        a = a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])
    elif a.dtype == np.bool_:
        a = a.astype(np.uint8)
    # (large draws keep their first 64 values: the tests compare that prefix)
    return dtype, tuple(a.shape), [int(v) for v in a.ravel()[:64]]


def main() -> None:
    import jax
    import jax.random as jr
    from random_cases import CASES_32, GAMMA_CASES, X64_CASES, make_key

    assert jax.__version__ == "0.10.2", jax.__version__
    assert jax.config.jax_threefry_partitionable
    out = {}
    for cases, x64 in ((CASES_32, False), (GAMMA_CASES, False), (X64_CASES, True)):
        jax.config.update("jax_enable_x64", x64)
        for name, kind, seed, call, _check in cases:
            out[name] = _record(call(jr, make_key(jr, kind, seed)))
    jax.config.update("jax_enable_x64", False)
    lines = ['"""JAX 0.10.2\'s values for tests/unit/random_cases.py (written by',
             'random_golden_gen.py; floats as bit patterns): name -> (dtype, shape, values)."""',
             "", "GOLDEN = {"]
    for name, (dtype, shape, values) in out.items():
        lines.append(f"    {name!r}: ({dtype!r}, {shape!r},")
        text = repr(values)
        while len(text) > 88:  # wrap long lists at a comma
            cut = text.rfind(", ", 0, 88) + 1
            lines.append("        " + text[:cut])
            text = text[cut:].lstrip()
        lines.append("        " + text + "),")
    lines.append("}")
    (HERE / "random_golden.py").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
