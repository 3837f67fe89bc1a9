"""An update that reads the array it overwrites only inside its own window, element by
element (`u = u.at[1:-1].set(u[1:-1] + c * v)`, hlo/window_reads.py), fuses with its update
computation and is written in place; any other read of that array (shifted, strided,
reversed, or through a function the CPU may rerun) keeps the update in a kernel of its own.
Values against NumPy in every case."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import lax
from ember.hlo.parser import parse_module
from ember.hlo.window_reads import reads_only_its_window


def _dus_module(update_expr: str, read: str = "[1:9]") -> str:
    return (
        "HloModule t\n\nENTRY %t (u: f32[10], v: f32[8]) -> f32[10] {\n"
        "  %u = f32[10] parameter(0)\n  %v = f32[8] parameter(1)\n"
        f"  %s = f32[8] slice(%u), slice={{{read}}}\n"
        f"  %w = f32[8] {update_expr}\n"
        "  %one = s32[] constant(1)\n"
        "  ROOT %r = f32[10] dynamic-update-slice(%u, %w, %one)\n}\n")


@pytest.mark.parametrize("update_expr, read, aligned", [
    ("add(%s, %v)", "[1:9]", True),          # u[1:9] + v, written at 1
    ("add(%s, %v)", "[0:8]", False),         # u[0:8]: a neighbour, maybe already written
    ("add(%s, %v)", "[2:10]", False),
    ("sine(%s)", "[1:9]", False),            # (the CPU may rerun sine's loop nest)
    ("reverse(%s), dimensions={0}", "[1:9]", False),
])
def test_which_reads_stay_in_the_window(update_expr, read, aligned) -> None:
    comp = parse_module(_dus_module(update_expr, read)).entry
    assert reads_only_its_window(comp.root) is aligned


def _step(kind):
    def body(i, c):
        u, v = c
        if kind == "aligned":  # (reads u[1:-1] where it writes it)
            u = u.at[1:-1].set(u[1:-1] * 0.5 + v[1:-1])
        elif kind == "shifted":  # (reads u[:-2]: the left neighbour, already updated)
            u = u.at[1:-1].set(u[:-2] * 0.5 + v[1:-1])
        else:  # "row": x.at[0].set(row), then the rest from the rows above, FDTD-style
            u = u.at[0].set(v[0] + i.astype(u.dtype))
            u = u.at[1:].set(u[1:] - 0.5 * (v[1:] - v[:-1]))
        return u, v * 0.9
    return body


def _numpy_loop(kind, u, v, steps):
    u, v = u.copy(), v.copy()
    for i in range(steps):
        if kind == "aligned":
            u[1:-1] = u[1:-1] * 0.5 + v[1:-1]
        elif kind == "shifted":
            u[1:-1] = u[:-2] * 0.5 + v[1:-1]
        else:
            u[0] = v[0] + i
            u[1:] = u[1:] - 0.5 * (v[1:] - v[:-1])
        v = v * np.float32(0.9)
    return u


@pytest.mark.parametrize("kind", ["aligned", "shifted", "row"])
@pytest.mark.parametrize("shape", [(7,), (33, 5), (130,)])
def test_updates_reading_their_window_equal_numpy(kind, shape) -> None:
    if kind == "row" and len(shape) == 1:
        shape = (shape[0], 3)
    rng = np.random.default_rng(len(shape) + shape[0])
    u, v = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    f = ember.jit(lambda u, v: lax.fori_loop(0, 5, _step(kind), (u, v))[0])
    np.testing.assert_allclose(np.asarray(f(u, v)), _numpy_loop(kind, u, v, 5),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind, fused", [("aligned", True), ("shifted", False)])
def test_only_an_aligned_update_fuses_with_its_computation(kind, fused) -> None:
    u = np.ones(64, np.float32)
    a = ember.explain.analyze(lambda u, v: lax.fori_loop(0, 3, _step(kind), (u, v))[0], u, u)
    refused = [str(d) for d in a.decisions if "the update reads the array" in str(d)]
    assert bool(refused) is not fused


def test_a_chain_of_window_updates_writes_the_carry_in_place() -> None:
    """u.at[0].set(r) then u.at[1:].set(u[1:] - ...) in a loop body: both write into the
    carry's own buffer (loops_native._chain_in_place); the first used to copy all of u into
    a temporary each iteration. One full-size temporary fewer (3 -> 2 here), same values."""
    def body(i, c):
        u, v = c
        u = u.at[0].set(v[0] + i.astype(u.dtype))
        return u.at[1:].set(u[1:] - 0.5 * (v[1:] - v[:-1])), v

    u = np.random.default_rng(5).standard_normal((256, 64)).astype(np.float32)
    v = np.random.default_rng(6).standard_normal((256, 64)).astype(np.float32)
    f = ember.jit(lambda u, v: lax.fori_loop(0, 5, body, (u, v))[0])
    assert f.lower(u, v).compile().memory_analysis().temp_size_in_bytes <= 2 * u.nbytes
    want = u.copy()
    for i in range(5):
        want[0] = v[0] + i
        want[1:] = want[1:] - np.float32(0.5) * (v[1:] - v[:-1])
    np.testing.assert_allclose(np.asarray(f(u, v)), want, rtol=1e-5, atol=1e-6)
