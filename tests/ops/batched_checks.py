"""Batched eager / jit / NumPy checks: many small cases, one compiled program.

Input: cases added one at a time, each a function, its NumPy reference, its own arguments
and comparison options, exactly as `test_numpy_support.check` or
`op_tables.assert_eager_jit_numpy` take them. Output: on `run()` (and whenever
`max_cases` cases are waiting), ONE `ember.jit` of a function returning the tuple of every
waiting case's result (so the suite pays one trace -> HLO -> LLVM compile instead of one
per case: most of its time was compiling many tiny programs), called twice (the second
call must not retrace), then per case exactly the assertions the single-case helper makes:

- `NumpyBatch` (as `check`): eager == jit bit for bit, or within summation rounding when
  the case's own jaxpr holds a float sum/product/dot/scan; eager against NumPy with
  `assert_close` (rtol, atol, check_dtype).
- `LaxBatch` (as `assert_eager_jit_numpy`): eager == jit bit for bit (float reductions
  within rtol/atol), jit against NumPy with `assert_matches` (ulps, rtol, atol,
  ignore_zero_sign).

Invariant: each case's eager value, reference and comparison are computed from that case
alone; only the compile is shared. Everything about a case is fixed when it is added: its
eager value, its reference and its jaxpr (the shared program replays the jaxprs, so a
lambda that reads a loop variable late, as the test loops write them, still means what it
meant when added), and a failing eager call points at its own line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from op_tables import _eqns_reduce_floats, assert_matches
from op_tables import assert_bitwise_equal as lax_bitwise_equal
from test_numpy_support import assert_bitwise_equal, assert_close, assert_reduction_close

import ember
from ember.core.eval import eval_jaxpr
from ember.core.trace import get_aval
from ember.tree_util import tree_flatten


@dataclass
class _Case:
    closed: Any  # the ClosedJaxpr of fn at args, traced when the case was added
    args: tuple[Any, ...]
    eager: Any
    expected: Any
    float_reduction: bool
    opts: dict[str, Any] = field(default_factory=dict)


def _numpy_args(args: tuple[Any, ...]) -> list[Any]:
    return [np.asarray(a) if isinstance(a, ember.Array) else a for a in args]


def _reduces_floats(closed: Any) -> bool:
    """op_tables.has_float_reduction, on a jaxpr already traced."""
    return _eqns_reduce_floats(closed.jaxpr.eqns)


class _Batch:
    """Cases collected for one shared compile; subclasses say how a case is compared."""

    def __init__(self, max_cases: int | None = None) -> None:
        # Compile time grows faster than the case count for some big programs (the scans'
        # log-depth trees of transcendental kernels): max_cases runs the batch whenever
        # it holds that many cases.
        self.cases: list[_Case] = []
        self.max_cases = max_cases

    def _append(self, case: _Case) -> None:
        self.cases.append(case)
        if self.max_cases is not None and len(self.cases) >= self.max_cases:
            self.run()

    def _jit_all(self) -> tuple[Any, ...]:
        cases = self.cases

        def all_cases(arg_sets):
            outs = []
            for c, a in zip(cases, arg_sets):
                vals = eval_jaxpr(c.closed.jaxpr, c.closed.consts, *tree_flatten(a)[0])
                # A function returning a tuple (of one or more) gives a tuple.
                outs.append(tuple(vals) if isinstance(c.eager, tuple) else vals[0])
            return tuple(outs)

        jitted = ember.jit(all_cases)
        arg_sets = tuple(c.args for c in cases)
        out = jitted(arg_sets)
        count = jitted.trace_count
        again = jitted(arg_sets)
        assert jitted.trace_count == count, "retraced on a second call"
        for o, a in zip(out, again):
            for x, y in zip(_leaves(o), _leaves(a)):
                lax_bitwise_equal(x, y, "second jit call")
        return out

    def run(self) -> None:
        if not self.cases:
            return
        for case, jitted in zip(self.cases, self._jit_all()):
            self._compare(case, jitted)
        self.cases = []

    def _compare(self, case: _Case, jitted: Any) -> None:
        raise NotImplementedError


def _leaves(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return [leaf for v in x for leaf in _leaves(v)]
    return [x]


class NumpyBatch(_Batch):
    """`check(jfn, nfn, *args, rtol=, atol=, check_dtype=)`, many at a time."""

    def check(self, jfn: Callable[..., Any], nfn: Callable[..., Any], *args: Any,
              rtol: float | None = None, atol: float = 0.0,
              check_dtype: Any = None) -> Any:
        """Adds a case; returns its eager value (compared with NumPy at once)."""
        eager = jfn(*args)
        with np.errstate(all="ignore"):
            expected = nfn(*_numpy_args(args))
        assert_close(eager, expected, rtol, atol, check_dtype)
        closed = ember.make_jaxpr(jfn)(*args)
        self._append(_Case(closed, args, eager, expected, _reduces_floats(closed)))
        return eager

    def check_eager(self, jfn: Callable[..., Any], nfn: Callable[..., Any], *args: Any,
                    rtol: float | None = None, atol: float = 0.0,
                    check_dtype: Any = None) -> Any:
        """`check` without the jit half (eager runs NumPy rules, so costs no compile):
        for the variants a test checks eagerly over more axes than it compiles."""
        eager = jfn(*args)
        with np.errstate(all="ignore"):
            expected = nfn(*_numpy_args(args))
        assert_close(eager, expected, rtol, atol, check_dtype)
        return eager

    def _compare(self, case: _Case, jitted: Any) -> None:
        if case.float_reduction:
            assert_reduction_close(case.eager, jitted)
        else:
            assert_bitwise_equal(case.eager, jitted)


class LaxBatch(_Batch):
    """`assert_eager_jit_numpy(fn, np_fn, *args, ...)`, many at a time."""

    def add(self, fn: Callable[..., Any], np_fn: Callable[..., Any] | None, *args: Any,
            ulps: int | None = 0, rtol: float | None = None, atol: float = 0.0,
            ignore_zero_sign: bool = False, what: str = "",
            float_reduction: bool | None = None) -> None:
        closed = ember.make_jaxpr(fn)(*args)
        if float_reduction is None:
            float_reduction = _reduces_floats(closed)
        expected = None if np_fn is None else np_fn(*args)
        shapes = ", ".join(str(np.shape(a)) for a in args)
        label = f"{what or getattr(fn, '__name__', 'fn')}({shapes})"
        self._append(_Case(closed, args, fn(*args), expected, float_reduction,
                           dict(ulps=ulps, rtol=rtol, atol=atol,
                                ignore_zero_sign=ignore_zero_sign, what=label)))

    def add_eager(self, fn: Callable[..., Any], np_fn: Callable[..., Any], *args: Any,
                  ulps: int | None = 0, rtol: float | None = None, atol: float = 0.0,
                  ignore_zero_sign: bool = False, what: str = "",
                  float_reduction: bool | None = None) -> None:
        """`add` without the jit half: eager against NumPy at once, nothing compiled (for
        the variants a test checks eagerly over more shapes than it compiles)."""
        del float_reduction  # eager alone has no association order to forgive
        eager = fn(*args)
        ref = np_fn(*args)
        shapes = ", ".join(str(np.shape(a)) for a in args)
        label = f"{what or getattr(fn, '__name__', 'fn')}({shapes}) eager"
        outs = eager if isinstance(eager, tuple) else (eager,)
        refs = ref if isinstance(ref, tuple) else (ref,)
        for o, r in zip(outs, refs):
            assert_matches(o, r, ulps=ulps, rtol=rtol, atol=atol,
                           ignore_zero_sign=ignore_zero_sign, what=label)

    def _compare(self, case: _Case, jitted: Any) -> None:
        label = case.opts["what"]
        outs, eagers = ((jitted, case.eager) if isinstance(jitted, tuple)
                        else ((jitted,), (case.eager,)))
        for o, e in zip(outs, eagers):
            if case.float_reduction and get_aval(o).dtype.kind == "f":
                assert get_aval(o) == get_aval(e), f"{label}: avals differ"
                np.testing.assert_allclose(np.asarray(o), np.asarray(e),
                                           rtol=case.opts["rtol"] or 1e-5,
                                           atol=case.opts["atol"] or 1e-6, equal_nan=True,
                                           err_msg=label)
            else:
                lax_bitwise_equal(e, o, label)
        if case.expected is not None:
            refs = case.expected if isinstance(case.expected, tuple) else (case.expected,)
            for o, r in zip(outs, refs):
                assert_matches(o, r, **case.opts)
