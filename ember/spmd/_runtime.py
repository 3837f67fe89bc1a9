"""Running a shard_map body on every device: the per-device jaxpr cut at its collectives
into stages; each stage runs on each of this process's devices at once (one worker thread
per device, the NumPy rules of `core.eval`), and each collective is done by the runtime
(`_collectives.py`: copies in memory within the process, the communicator across).

Input: the body's ClosedJaxpr (traced once, for the per-device shapes, with the mesh axis
names bound), the mesh and each device's input blocks. Output: each device's output
blocks. Why stages and not calls out of compiled code: a collective at the top level of
the body is a point where every device must have arrived, which a stage boundary gives
without a rendezvous inside kernels; call-like equations (a `jit` in the body) holding
collectives are inlined into the stages. Invariant: `runnable(jaxpr)` says whether every
collective is at the top level after inlining; when one sits in a loop or a branch, the
caller runs shard_map as one program instead (`_emulate.py`), which computes the same.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ember.core.eval import eval_closed_numpy
from ember.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal
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


def run(closed: ClosedJaxpr, mesh: Mesh, devices: list, blocks: list[list[np.ndarray]],
        process: int = 0, communicator: Any = None) -> list[list[np.ndarray]]:
    """Each of `devices`' outputs from its input blocks (`blocks[k][j]`: argument j of
    devices[k])."""
    flat = _flatten(closed.jaxpr, list(closed.consts))
    assert flat is not None, "runnable() was not checked"
    items, const_env = flat
    envs: list[dict[int, Any]] = []
    for mine in blocks:
        env = dict(const_env)
        for v, x in zip(closed.jaxpr.invars, mine):
            env[v.id] = x
        envs.append(env)
    pool = _pool(len(devices)) if len(devices) > 1 else None

    def run_all(stage: list) -> None:
        if not stage:
            return
        if pool is None:
            for env in envs:
                _run_stage(stage, env)
            return
        for f in [pool.submit(_run_stage, stage, env) for env in envs]:
            f.result()

    stage: list = []
    for item in items:
        if isinstance(item, tuple) or item.primitive.name not in COLLECTIVES:
            stage.append(item)
            continue
        run_all(stage)
        stage = []
        eqn = item
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
    run_all(stage)

    def read(env: dict[int, Any], v: Any) -> Any:
        return v.val if isinstance(v, Literal) else env[v.id]
    return [[np.asarray(read(env, v)) for v in closed.jaxpr.outvars] for env in envs]
