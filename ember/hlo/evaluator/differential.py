"""Differential checking: does a module still compute what it computed before a pass?

Input: a Module before a pass (`Reference.capture`) and the same module after it
(`Reference.check`). Output: None, or `DifferentialError` naming the pass and the first
output leaf whose values changed.
The one checker of EMBER_ENABLE_CHECKS=1: the pass pipeline (ember/passes/base.py) checks
every leaf pass against the module before the outermost pipeline, and the jit compile path
(ember/compiler.py, `check_same_values`) checks the whole optimization end to end (the
backend's own steps outside the pipeline included), passing a jitted function's hidden
constants as `fixed` values; the tests use it directly.
Inputs are random and seeded: floats standard normal, signed ints in [-5, 5], unsigned in
[0, 10], bools fair coins; tuple parameters are filled leaf by leaf. Comparison is bit-exact
(NaN payloads included), except float leaves that depend on a float reduce or dot (directly
or through any chain of ops, fusions and calls): passes may reorder those sums, so they are
compared with a tolerance scaled to the type's precision and the leaf's magnitude.
A module is skipped (capture returns None) when it is too expensive to evaluate (more than
MAX_PARAMETER_ELEMENTS parameter elements or MAX_VALUE_ELEMENTS elements across all
instruction results), when a parameter's type has no random generator (bf16 without
ml_dtypes), or when evaluating it fails (an unknown custom-call, a while loop that runs
past MAX_WHILE_ITERATIONS on random inputs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ember.hlo.evaluator.core import Value, evaluate, while_iteration_limit
from ember.hlo.ir import Computation, Instruction, Module
from ember.hlo.shape import Shape, element_type_from_numpy, is_float

MAX_PARAMETER_ELEMENTS = 1_000_000
MAX_VALUE_ELEMENTS = 10_000_000
MAX_WHILE_ITERATIONS = 10_000
SEED = 0

# relative tolerance for reordered float sums, per element type
_RTOL = {"f16": 2e-2, "bf16": 5e-2, "f32": 1e-4, "f64": 1e-10}


class DifferentialError(AssertionError):
    """A pass changed the values a module computes."""


def random_value(rng: np.random.Generator, shape: Shape) -> Value:
    """A random argument of `shape` (see the module docstring for the distributions)."""
    if shape.is_tuple:
        return tuple(random_value(rng, s) for s in shape.tuple_shapes)
    dt = shape.dtype  # TypeError when the type has no NumPy dtype
    dims = shape.dimensions
    if dt == np.bool_:
        return rng.random(dims) < 0.5
    if dt.kind == "f" or dt.name == "bfloat16":
        return rng.standard_normal(dims).astype(dt)
    lo, hi = (-5, 5) if dt.kind == "i" else (0, 10)
    return rng.integers(lo, hi, size=dims, endpoint=True).astype(dt)


def _value_elements(module: Module) -> int:
    return sum(inst.shape.size for comp in module.computations for inst in comp.instructions)


def _calls_inexact(comp: Computation, memo: dict[Computation, bool]) -> bool:
    if comp not in memo:
        memo[comp] = False  # no recursion in HLO; guards against malformed modules
        memo[comp] = any(_is_inexact_source(i, memo) for i in comp.instructions)
    return memo[comp]


def _is_inexact_source(inst: Instruction, memo: dict[Computation, bool]) -> bool:
    if inst.opcode in ("reduce", "dot", "convolution", "reduce-window"):
        shapes = inst.shape.tuple_shapes if inst.shape.is_tuple else (inst.shape,)
        return any(is_float(s.element_type) for s in shapes)
    return any(_calls_inexact(c, memo) for c in inst.called_computations)


def inexact_leaves(module: Module) -> list[bool]:
    """For each leaf of the entry root (one entry for an array root): whether its value may
    depend on the summation order of a float reduce, dot, convolution or reduce-window."""
    memo: dict[Computation, bool] = {}
    tainted: dict[Instruction, bool] = {}
    for inst in module.entry.post_order():
        tainted[inst] = _is_inexact_source(inst, memo) or any(tainted[o]
                                                              for o in inst.operands)
    root = module.entry.root
    assert root is not None

    def leaves(inst: Instruction, shape: Shape) -> list[bool]:
        if not shape.is_tuple:
            return [tainted[inst]]
        if inst.opcode == "tuple":
            return [x for o in inst.operands for x in leaves(o, o.shape)]
        return [tainted[inst]] * _leaf_count(shape)

    return leaves(root, root.shape)


def _leaf_count(shape: Shape) -> int:
    return sum(_leaf_count(s) for s in shape.tuple_shapes) if shape.is_tuple else 1


def _flatten(v: Value) -> list[np.ndarray]:
    if isinstance(v, tuple):
        return [x for e in v for x in _flatten(e)]
    return [np.asarray(v)]


def _mismatch(want: np.ndarray, got: np.ndarray, inexact: bool) -> str | None:
    if want.dtype != got.dtype or want.shape != got.shape:
        return f"{got.dtype}{list(got.shape)} instead of {want.dtype}{list(want.shape)}"
    if want.tobytes() == got.tobytes():
        return None
    if inexact and (want.dtype.kind == "f" or want.dtype.name == "bfloat16"):
        rtol = _RTOL[element_type_from_numpy(want.dtype)]
        w, g = want.astype(np.float64), got.astype(np.float64)
        finite = np.isfinite(w)
        scale = float(np.max(np.abs(w[finite]), initial=1.0))
        if np.allclose(g, w, rtol=rtol, atol=rtol * scale, equal_nan=True):
            return None
    bad = np.flatnonzero(_differs(want, got))
    k = int(bad[0]) if bad.size else 0
    idx = np.unravel_index(k, want.shape) if want.ndim else ()
    return (f"at index {list(map(int, idx))}: {want.reshape(-1)[k]!r} became "
            f"{got.reshape(-1)[k]!r}" + (" (beyond the reordering tolerance)" if inexact else ""))


def _differs(want: np.ndarray, got: np.ndarray) -> np.ndarray:
    """Per element (flattened): whether the bits differ."""
    def as_bytes(x: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(x).reshape(x.size, 1).view(np.uint8)

    return np.any(as_bytes(want) != as_bytes(got), axis=1)


@dataclass
class Reference:
    """The module's outputs on fixed random inputs, captured before any pass ran."""

    args: list[Value]
    outputs: list[np.ndarray]
    inexact: list[bool]
    param_shapes: list[Shape]

    @staticmethod
    def capture(module: Module, seed: int = SEED,
                fixed: Sequence[Value] = ()) -> Reference | None:
        """Evaluate `module` on random inputs, or None when it should not be checked.
        `fixed`: the values of the last `len(fixed)` parameters, used as they are (a jitted
        function's hidden constants: random values there would check another program)."""
        params = module.entry.parameters
        if sum(p.shape.size for p in params) > MAX_PARAMETER_ELEMENTS:
            return None
        if _value_elements(module) > MAX_VALUE_ELEMENTS:
            return None
        n_random = len(params) - len(fixed)
        if n_random < 0:
            raise ValueError(f"{len(fixed)} fixed values for {len(params)} parameters")
        rng = np.random.default_rng(seed)
        try:
            args = [random_value(rng, p.shape) for p in params[:n_random]] + list(fixed)
        except TypeError:
            return None
        try:
            with while_iteration_limit(MAX_WHILE_ITERATIONS):
                out = evaluate(module, *args)
        except Exception:
            return None
        return Reference(args, _flatten(out), inexact_leaves(module),
                         [p.shape.without_layout() for p in params])

    def check(self, module: Module, changed_by: str) -> None:
        """Raise DifferentialError if `module` no longer computes the captured outputs;
        the message blames `changed_by` (`pass cse`, `the optimization passes`)."""
        where = f"{changed_by} changed the values of module {module.name}"
        shapes = [p.shape.without_layout() for p in module.entry.parameters]
        if shapes != self.param_shapes:
            raise DifferentialError(f"{where}: parameters are now "
                                    f"({', '.join(map(str, shapes))})")
        try:
            with while_iteration_limit(MAX_WHILE_ITERATIONS * 10):
                got = _flatten(evaluate(module, *self.args))
        except Exception as e:
            raise DifferentialError(f"{where}: evaluating it now fails: "
                                    f"{type(e).__name__}: {e}") from e
        if len(got) != len(self.outputs):
            raise DifferentialError(f"{where}: {len(got)} outputs instead of "
                                    f"{len(self.outputs)}")
        for k, (w, g, inexact) in enumerate(zip(self.outputs, got, self.inexact)):
            msg = _mismatch(w, g, inexact)
            if msg is not None:
                raise DifferentialError(f"{where}: output {k}: {msg}")
