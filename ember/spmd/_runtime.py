"""Running a shard_map body on every device: on its first run the per-device jaxpr is
cut at its collectives into stages; each stage runs on each of this process's devices at
once (one worker thread per device, the NumPy rules of `core.eval`), and each collective
is done by the runtime (`_collectives.py`: copies in memory within the process, the
communicator across). On the second run the whole body is compiled as one per-device
module whose collectives are HLO collectives (`_per_device.py`), used from then on; a
body that cannot be one module has each stage compiled as a jaxpr of its own instead
(`StagedBody`).

Input: the body's ClosedJaxpr (traced once, for the per-device shapes, with the mesh axis
names bound), the mesh and each device's input blocks. Output: each device's output
blocks. Call-like equations (a `jit` in the body) holding collectives are inlined into
the stages. Invariant: `runnable(jaxpr)` says whether every
collective is at the top level after inlining; when one sits in a loop or a branch, the
caller runs shard_map as one program instead (`_emulate.py`), which computes the same.
"""

from __future__ import annotations

import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ember.core.eval import eval_closed_numpy
from ember.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from ember.sharding._mesh import Mesh
from ember.spmd._collectives import COLLECTIVES, run_collective


def _holds_collective(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_holds_collective(v) for v in value)
    jaxpr = getattr(value, "jaxpr", value)
    if not isinstance(jaxpr, Jaxpr):
        return False
    return any(e.primitive.name in COLLECTIVES or
               any(_holds_collective(p) for p in e.params.values()) for e in jaxpr.eqns)


def _flatten(jaxpr: Jaxpr, consts: list[Any]) -> tuple[list, dict[int, Any]] | None:
    """The equations with call-like equations holding collectives inlined (their vars
    renamed by substitution), and the consts by var id; None if a collective sits inside
    a loop, a branch or a custom-derivative call."""
    out: list = []
    const_env = {v.id: np.asarray(c) for v, c in zip(jaxpr.constvars, consts)}
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in COLLECTIVES or not any(
                _holds_collective(p) for p in eqn.params.values()):
            out.append(eqn)
            continue
        if not eqn.primitive.is_call or not isinstance(eqn.params.get("jaxpr"), ClosedJaxpr):
            return None
        inner: ClosedJaxpr = eqn.params["jaxpr"]
        sub = _flatten(inner.jaxpr, list(inner.consts))
        if sub is None:
            return None
        eqns, consts_in = sub
        const_env.update(consts_in)
        # bind the callee's invars to the caller's operands, its outvars to the results
        out.append(("bind", list(inner.jaxpr.invars), list(eqn.invars)))
        out.extend(eqns)
        out.append(("bind", list(eqn.outvars), list(inner.jaxpr.outvars)))
    return out, const_env


def runnable(closed: ClosedJaxpr) -> bool:
    """Whether the runtime can run this body (every collective reachable at the top)."""
    return _flatten(closed.jaxpr, list(closed.consts)) is not None


_pools: dict[int, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()


def _pool(n: int) -> ThreadPoolExecutor:
    with _pools_lock:
        pool = _pools.get(n)
        if pool is None:
            pool = _pools[n] = ThreadPoolExecutor(max_workers=n,
                                                  thread_name_prefix="ember-device")
        return pool


def _run_stage(stage: list, env: dict[int, Any]) -> None:
    def read(v: Any) -> Any:
        return v.val if isinstance(v, Literal) else env[v.id]

    for item in stage:
        if isinstance(item, tuple):  # ("bind", dst vars, src atoms)
            _, dsts, srcs = item
            for d, s in zip(dsts, srcs):
                env[d.id] = read(s)
            continue
        eqn: JaxprEqn = item
        invals = [read(v) for v in eqn.invars]
        prim = eqn.primitive
        if prim.is_call:
            outs = eval_closed_numpy(eqn.params["jaxpr"], invals)
        else:
            outs = prim.impl(*invals, **eqn.params)
            if not prim.multiple_results:
                outs = [outs]
        for v, o in zip(eqn.outvars, outs):
            o = np.asarray(o)
            env[v.id] = o if o.dtype == v.aval.dtype else o.astype(v.aval.dtype)


class _Segment:
    """A run of equations between two collectives, as one jaxpr of its own: the values it
    reads from before it in, those read after it out (compiled on the body's second run,
    then reused)."""

    def __init__(self, eqns: list[JaxprEqn], later: set[int]) -> None:
        self.eqns = eqns
        made: set[int] = set()
        reads: list[Var] = []
        for eqn in eqns:
            for v in eqn.invars:
                if isinstance(v, Var) and v.id not in made and v not in reads:
                    reads.append(v)
            made.update(v.id for v in eqn.outvars)
        self.invars = reads
        self.outvars = [v for eqn in eqns for v in eqn.outvars if v.id in later]
        self.compiled: Any = None

    def compile(self) -> None:
        from ember.dispatch import compile_jaxpr

        if not self.outvars:  # (effects only: evaluated each time)
            return
        jaxpr = Jaxpr([], list(self.invars), list(self.outvars), list(self.eqns))
        try:
            self.compiled = compile_jaxpr(ClosedJaxpr(jaxpr, []), "shard_map_stage")
        except Exception:  # noqa: BLE001 - a stage jit cannot take stays evaluated (same values)
            self.compiled = None

    def run(self, env: dict[int, Any]) -> None:
        if self.compiled is None:
            _run_stage(self.eqns, env)
            return
        outs = self.compiled([np.require(env[v.id], v.aval.dtype, "C")
                              for v in self.invars])
        for v, o in zip(self.outvars, outs):
            env[v.id] = o


class StagedBody:
    """A shard_map body cut at its collectives, built once per traced body: `run` runs it
    on the devices; the first run evaluates each stage with NumPy, the second compiles
    each stage once (one jit cannot compile stays evaluated), later runs reuse them."""

    def __init__(self, closed: ClosedJaxpr) -> None:
        self.closed = closed
        self.per_device: Any = None  # (_per_device.PerDeviceBody, from the second run)
        flat = _flatten(closed.jaxpr, list(closed.consts))
        assert flat is not None, "runnable() was not checked"
        items, self.const_env = flat
        self.invars = list(closed.jaxpr.invars)
        self.outvars = list(closed.jaxpr.outvars)
        # the values read after each point: what a segment must hand on
        later: set[int] = {v.id for v in self.outvars if isinstance(v, Var)}
        steps: list[Any] = []
        run: list[JaxprEqn] = []
        after_run: set[int] = set()  # (what is read after the run being collected)
        for item in reversed(items):  # (last first: `later` is what later items read)
            if isinstance(item, tuple) or item.primitive.name in COLLECTIVES:
                if run:
                    steps.append(_Segment(run[::-1], after_run))
                    run = []
                steps.append(item)
                reads = item[2] if isinstance(item, tuple) else item.invars
                later.update(v.id for v in reads if isinstance(v, Var))
                continue
            if not run:
                after_run = set(later)
            run.append(item)
            later.update(v.id for v in item.invars if isinstance(v, Var))
        if run:
            steps.append(_Segment(run[::-1], after_run))
        self.steps = steps[::-1]
        self.runs = 0

    def run(self, mesh: Mesh, devices: list, blocks: list[list[np.ndarray]],
            process: int = 0, communicator: Any = None) -> list[list[np.ndarray]]:
        """Each of `devices`' outputs from its input blocks (`blocks[k][j]`: argument j of
        devices[k])."""
        self.runs += 1
        if self.runs == 2:  # (a body run once never pays for compiling)
            self._compile(mesh)
        if self.per_device is not None:
            return self.per_device.run(mesh, devices, blocks, process, communicator)
        envs: list[dict[int, Any]] = []
        for mine in blocks:
            env = dict(self.const_env)
            for v, x in zip(self.invars, mine):
                env[v.id] = x
            envs.append(env)
        pool = _pool(len(devices)) if len(devices) > 1 else None

        def run_all(seg: _Segment) -> None:
            if pool is None:
                for env in envs:
                    seg.run(env)
                return
            for f in [pool.submit(seg.run, env) for env in envs]:
                f.result()

        for step in self.steps:
            if isinstance(step, _Segment):
                run_all(step)
                continue
            if isinstance(step, tuple):  # ("bind", dst vars, src atoms)
                for env in envs:
                    _run_stage([step], env)
                continue
            eqn = step
            local = {}
            for dev, env in zip(devices, envs):
                local[dev] = (np.zeros(()) if not eqn.invars else
                              (eqn.invars[0].val if isinstance(eqn.invars[0], Literal)
                               else env[eqn.invars[0].id]))
            results = run_collective(mesh, eqn.primitive.name, eqn.params, local, process,
                                     communicator)
            (outvar,) = eqn.outvars
            for dev, env in zip(devices, envs):
                r = np.asarray(results[dev])
                env[outvar.id] = r.astype(outvar.aval.dtype, copy=False)

        def read(env: dict[int, Any], v: Any) -> Any:
            return v.val if isinstance(v, Literal) else env[v.id]
        return [[np.asarray(read(env, v)) for v in self.outvars] for env in envs]

    def _compile(self, mesh: Mesh) -> None:
        """The whole body as one per-device module whose collectives are HLO collectives;
        where it cannot be one (_per_device.py says when), each stage compiled alone."""
        from ember.spmd._per_device import PerDeviceBody

        try:
            self.per_device = PerDeviceBody(self.closed, mesh)
            return
        except Exception as e:  # noqa: BLE001 - the stages compute the same values
            self.per_device = None
            from ember.compiler import debug_level

            if debug_level() >= 1:  # (EMBER_DEBUG=1 says why, as for a backend refusal)
                print(f"[ember] shard_map body stays in stages: {type(e).__name__}: {e}",
                      file=sys.stderr)
        for s in self.steps:
            if isinstance(s, _Segment):
                s.compile()


def run(closed: ClosedJaxpr, mesh: Mesh, devices: list, blocks: list[list[np.ndarray]],
        process: int = 0, communicator: Any = None) -> list[list[np.ndarray]]:
    """Each of `devices`' outputs from its input blocks, the body evaluated once (no
    compiling; a body called again keeps a `StagedBody`)."""
    return StagedBody(closed).run(mesh, devices, blocks, process, communicator)
