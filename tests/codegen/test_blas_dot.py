"""dot_general on the CPU backend: every product form through BLAS (plain, transposed
operands, batch dims anywhere, packed operands, matrix-vector, vector-matrix, vector dot)
and through generated loops (integers, bool, f16, tiny products), against NumPy; the IR
calls the BLAS entry points exactly when it should; results do not depend on Ember's thread
count and leave BLAS's own thread count alone; the SciPy and no-BLAS fallbacks and the disk
cache work in fresh processes."""

from __future__ import annotations

import ctypes
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from codegen_util import edge_array

from ember.backends import cpu
from ember.backends.cpu.dot import blas, blas_find, gemm
from ember.backends.cpu.dot import plan as dot_plan
from ember.backends.cpu.jit import llvm_target
from ember.hlo import Builder, Shape

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def dot_module(et, ls, rs, lc, rc, lb=(), rb=(), out_et=None):
    b = Builder("dot")
    x, y = b.parameter(Shape(et, ls)), b.parameter(Shape(et, rs))
    d = b.dot(x, y, lc, rc, lb, rb)
    if out_et is not None:
        d = b.convert(d, out_et)
    return b.build(d)


def numpy_dot(x, y, lc, rc, lb, rb):
    """The dot_general by einsum in float64 (result dims: batch, lhs free, rhs free)."""
    lsub = [""] * x.ndim
    rsub = [""] * y.ndim
    it = iter(LETTERS)
    batch = []
    for dl, dr in zip(lb, rb):
        lsub[dl] = rsub[dr] = c = next(it)
        batch.append(c)
    for dl, dr in zip(lc, rc):
        lsub[dl] = rsub[dr] = next(it)
    lfree = [next(it) if not s else "" for s in lsub]
    rfree = [next(it) if not s else "" for s in rsub]
    lsub = [s or f for s, f in zip(lsub, lfree)]
    rsub = [s or f for s, f in zip(rsub, rfree)]
    out = "".join(batch) + "".join(lfree) + "".join(rfree)
    spec = f"{''.join(lsub)},{''.join(rsub)}->{out}"
    return np.einsum(spec, x.astype(np.float64), y.astype(np.float64))


def calls(exe, routine: str) -> bool:
    """Does the executable's IR call BLAS entry point `routine` (e.g. sgemm)?"""
    return re.search(rf'call void @"?{blas.SYMBOL_PREFIX}{routine}"?\(', exe.unoptimized_ir) \
        is not None


def calls_own(exe, et: str) -> bool:
    """Does the IR run the product on Ember's own GEMM (gemm.py), B packed first?"""
    p = "s" if et == "f32" else "d"
    ir_text = exe.unoptimized_ir
    return all(re.search(rf'call void @"?{gemm.PREFIX}{p}{what}"?\(', ir_text) is not None
               for what in ("pack_b", "gemm_packed"))


def own_expected(p, backend: str) -> bool:
    """Forced ("ember"), Ember's GEMM runs every plain product (dot_plan._own_plan)."""
    return backend == "ember" and p.form == "gemm"


def random(dt, shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(dt)


def check_float(exe, m_args, lc, rc, lb, rb, et):
    x, y = m_args
    got = exe(x, y)
    want = numpy_dot(x, y, lc, rc, lb, rb)
    k = int(np.prod([x.shape[d] for d in lc], dtype=np.int64))
    eps = np.finfo(np.float32 if et == "f32" else np.float64).eps
    # |error| <= K * eps * sum |x||y| (a bound for any summation order)
    scale = numpy_dot(np.abs(x), np.abs(y), lc, rc, lb, rb)
    assert got.shape == want.shape
    assert got.dtype == np.dtype(np.float32 if et == "f32" else np.float64)
    assert np.all(np.abs(got - want) <= (k + 2) * eps * scale + 1e-30), (et, x.shape, y.shape)


# (lhs shape, rhs shape, lhs contracting, rhs contracting, lhs batch, rhs batch, form)
FORMS = {
    "plain": ((129, 33), (33, 17), (1,), (0,), (), (), "gemm"),
    "odd": ((17, 129), (129, 129), (1,), (0,), (), (), "gemm"),
    "xT_y": ((33, 129), (33, 17), (0,), (0,), (), (), "gemm"),
    "x_yT": ((129, 33), (17, 33), (1,), (1,), (), (), "gemm"),
    "xT_yT": ((33, 129), (17, 33), (0,), (1,), (), (), "gemm"),
    "rows_of_one": ((3, 129), (129, 129), (1,), (0,), (), (), "gemm"),
    "outer": ((300,), (200,), (), (), (), (), "gemm"),
    "batch_lead": ((3, 33, 40), (3, 40, 29), (2,), (1,), (0,), (0,), "gemm"),
    "batch_mid": ((33, 3, 40), (3, 40, 29), (2,), (1,), (1,), (0,), "gemm"),
    "batch_mid_end": ((33, 3, 40), (40, 29, 3), (2,), (0,), (1,), (2,), "gemm"),
    "two_batch_swapped": ((2, 33, 3, 40), (3, 40, 2, 29), (3,), (1,), (0, 2), (2, 0), "gemm"),
    "two_free_dims": ((5, 7, 40), (40, 3, 11), (2,), (0,), (), (), "gemm"),
    "two_contracting": ((33, 5, 8), (5, 8, 29), (1, 2), (0, 1), (), (), "gemm"),
    "pack_lhs_contracting": ((33, 5, 8), (8, 5, 29), (2, 1), (0, 1), (), (), "gemm"),
    "pack_lhs_free": ((5, 40, 7), (40, 41), (1,), (0,), (), (), "gemm"),
    "pack_rhs_free": ((41, 40), (3, 40, 11), (1,), (1,), (), (), "gemm"),
    "matvec": ((300, 129), (129,), (1,), (0,), (), (), "gemv_m"),
    "matvec_T": ((129, 300), (129,), (0,), (0,), (), (), "gemv_m"),
    "vecmat": ((129,), (129, 300), (0,), (0,), (), (), "gemv_n"),
    "vecmat_T": ((129,), (300, 129), (0,), (1,), (), (), "gemv_n"),
    "batched_matvec": ((4, 300, 129), (129, 4), (2,), (0,), (0,), (1,), "gemv_m"),
    "vector_dot": ((40000,), (40000,), (0,), (0,), (), (), "gemv_m"),
    "row_col": ((1, 40000), (40000, 1), (1,), (0,), (), (), "gemv_m"),
}
# operands that are no BLAS view: a batch dim innermost in the rhs (N's stride is 3),
# contracting dims in the other order, free dims split by a contracting one
PACKED = {"batch_mid_end", "pack_lhs_contracting", "pack_lhs_free", "pack_rhs_free"}


@pytest.mark.parametrize("et", ["f32", "f64"])
@pytest.mark.parametrize("name", sorted(FORMS))
def test_float_forms_call_blas(name, et, matmul_backend):
    ls, rs, lc, rc, lb, rb, form = FORMS[name]
    m = dot_module(et, ls, rs, lc, rc, lb, rb)
    dt = np.float32 if et == "f32" else np.float64
    x, y = random(dt, ls, 1), random(dt, rs, 2)
    exe = cpu.compile(m)
    check_float(exe, (x, y), lc, rc, lb, rb, et)
    p = dot_plan.plan(exe.module.entry.root)
    assert (p.route, p.form) == ("blas", form)
    assert p.own == own_expected(p, matmul_backend)
    routine = blas.routine(et, "gemm" if form == "gemm" else "gemv")
    assert calls(exe, routine) != p.own
    assert calls_own(exe, et) == p.own
    ir_text = exe.unoptimized_ir
    assert ("pack_lhs" in ir_text or "pack_rhs" in ir_text) == (name in PACKED)


@pytest.mark.parametrize("n", [1, 3, 17, 129])
def test_square_sizes(n):
    """Every size: loops below the BLAS threshold, BLAS above; both match NumPy."""
    for et in ("f32", "f64"):
        m = dot_module(et, (n, n), (n, n), (1,), (0,))
        dt = np.float32 if et == "f32" else np.float64
        x, y = random(dt, (n, n), n), random(dt, (n, n), n + 1)
        exe = cpu.compile(m)
        check_float(exe, (x, y), (1,), (0,), (), (), et)
        library = "ember_blas_" in exe.unoptimized_ir or gemm.PREFIX in exe.unoptimized_ir
        assert library == (n ** 3 >= dot_plan.BLAS_MIN_MACS)


def test_ieee_specials_propagate(matmul_backend):
    """inf * 0 = NaN and NaN inputs poison exactly their row and column."""
    m = dot_module("f32", (40, 50), (50, 60), (1,), (0,))
    x, y = random(np.float32, (40, 50), 3), random(np.float32, (50, 60), 4)
    x[5, 7] = np.nan
    x[9, 3] = np.inf
    y[3, :] = 0.0
    y[11, 20] = -np.inf
    got = cpu.compile(m)(x, y)
    with np.errstate(invalid="ignore", over="ignore"):
        want = x.astype(np.float64) @ y.astype(np.float64)
    exe = cpu.compile(m)
    assert calls_own(exe, "f32") if matmul_backend == "ember" else calls(exe, "sgemm")
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(np.isinf(got), np.isinf(want))
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("et", ["s32", "s8", "u8", "s64", "pred"])
@pytest.mark.parametrize("name", ["plain", "xT_y", "batch_mid_end", "matvec", "vecmat",
                                  "pack_lhs_free"])
def test_other_types_are_loops(et, name):
    ls, rs, lc, rc, lb, rb, _ = FORMS[name]
    m = dot_module(et, ls, rs, lc, rc, lb, rb)
    dt = Shape(et, ()).dtype
    x, y = edge_array(dt, ls, seed=5), edge_array(dt, rs, seed=6)
    exe = cpu.compile(m)
    assert "ember_blas_" not in exe.unoptimized_ir
    got = exe(x, y)
    if et == "pred":
        want = numpy_dot(x.astype(np.int64), y.astype(np.int64), lc, rc, lb, rb) > 0
    else:  # integer products wrap in the result type (accumulating in it wraps the same)
        want = np.einsum(*_spec_args(x, y, lc, rc, lb, rb), dtype=np.int64).astype(dt)
    assert got.dtype == want.dtype
    assert np.array_equal(got, want)


def _spec_args(x, y, lc, rc, lb, rb):
    """einsum arguments of the dot (for integer products, exact in int64)."""
    lsub, rsub = [""] * x.ndim, [""] * y.ndim
    it = iter(LETTERS)
    batch = []
    for dl, dr in zip(lb, rb):
        lsub[dl] = rsub[dr] = c = next(it)
        batch.append(c)
    for dl, dr in zip(lc, rc):
        lsub[dl] = rsub[dr] = next(it)
    lfree = [next(it) if not s else "" for s in lsub]
    rfree = [next(it) if not s else "" for s in rsub]
    lsub = [s or f for s, f in zip(lsub, lfree)]
    rsub = [s or f for s, f in zip(rsub, rfree)]
    spec = f"{''.join(lsub)},{''.join(rsub)}->{''.join(batch)}{''.join(lfree)}{''.join(rfree)}"
    return spec, x.astype(np.int64), y.astype(np.int64)


def _dot_types(exe) -> list[str]:
    return [i.shape.element_type for c in exe.module.computations for i in c.instructions
            if i.opcode == "dot"]


@pytest.mark.parametrize("name", ["plain", "xT_y", "batch_mid_end", "matvec", "vecmat",
                                  "pack_lhs_free"])
def test_f16_products_are_f32_products(name):
    """float16 products accumulate in float32 (the float normalization pass): an f32 product
    between converts, so the result is the f32 product rounded once to f16."""
    ls, rs, lc, rc, lb, rb, _ = FORMS[name]
    exe = cpu.compile(dot_module("f16", ls, rs, lc, rc, lb, rb))
    assert _dot_types(exe) == ["f32"]
    x, y = random(np.float16, ls, 5), random(np.float16, rs, 6)
    got = exe(x, y)
    want = numpy_dot(x, y, lc, rc, lb, rb).astype(np.float16)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=2e-3,
                               atol=2e-3)


def test_mixed_types_are_f32_products():
    """f16 operands accumulated in f32 (preferred_element_type): an f32 product of the
    operands converted (the float normalization pass)."""
    b = Builder("mixed")
    x, y = b.parameter(Shape("f16", (40, 50))), b.parameter(Shape("f16", (50, 60)))
    d = b.op("dot", (x, y), {"lhs_contracting_dims": (1,), "rhs_contracting_dims": (0,),
                             "lhs_batch_dims": (), "rhs_batch_dims": ()},
             shape=Shape("f32", (40, 60)))
    exe = cpu.compile(b.build(d))
    assert _dot_types(exe) == ["f32"]
    xv, yv = random(np.float16, (40, 50), 1), random(np.float16, (50, 60), 2)
    want = xv.astype(np.float64) @ yv.astype(np.float64)
    np.testing.assert_allclose(exe(xv, yv), want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dims", [((0, 40), (40, 50)), ((40, 0), (0, 50))])
def test_empty(dims):
    m = dot_module("f32", dims[0], dims[1], (1,), (0,))
    x, y = np.ones(dims[0], np.float32), np.ones(dims[1], np.float32)
    got = cpu.compile(m)(x, y)
    assert np.array_equal(got, x @ y)


def test_transpose_feeding_dot_is_a_flag_not_a_copy(matmul_backend):
    b = Builder("xty")
    x, y = b.parameter(Shape("f32", (129, 65))), b.parameter(Shape("f32", (129, 33)))
    m = b.build(b.dot(b.transpose(x, (1, 0)), y, (1,), (0,)))
    exe = cpu.compile(m)
    assert len(exe.kernel_names) == 1 and exe.kernel_names[0].startswith("dot")
    assert "transpose" not in exe.as_text()
    flags = (r'ember_gemm_sgemm_packed"?\(i32 1,' if matmul_backend == "ember"
             else r'ember_blas_sgemm"?\(i32 1, i32 0')
    assert re.search(r'call void @"?' + flags, exe.unoptimized_ir)
    xv, yv = random(np.float32, (129, 65), 1), random(np.float32, (129, 33), 2)
    check_float(exe, (xv, yv), (0,), (0,), (), (), "f32")  # x.T @ y


def _numpy_blas_threads() -> tuple[int, object] | None:
    found = blas_find.find()
    if found is None or not found.get_threads:
        return None
    get = ctypes.CFUNCTYPE(ctypes.c_int)(found.get_threads)
    return get(), get


def test_results_do_not_depend_on_thread_count(matmul_backend):
    b = Builder("big")
    x, y = b.parameter(Shape("f32", (700, 300))), b.parameter(Shape("f32", (300, 500)))
    m = b.build(b.dot(x, y, (1,), (0,)))
    xv, yv = random(np.float32, (700, 300), 1), random(np.float32, (300, 500), 2)
    before = _numpy_blas_threads()
    saved = dot_plan.cpu_hint
    dot_plan.cpu_hint = lambda: 4  # several units whatever this machine has
    try:
        exe = cpu.compile(m, use_cache=False)
    finally:
        dot_plan.cpu_hint = saved
    assert exe.parallel_kernels == (exe.kernel_names if llvm_target.target().gomp else [])
    threads = cpu.get_num_threads()
    try:
        results = []
        for n in (1, 2, 3):
            cpu.set_num_threads(n)
            results.append(exe(xv, yv))
    finally:
        cpu.set_num_threads(threads)
    for r in results[1:]:
        assert np.array_equal(r, results[0])
    check_float(exe, (xv, yv), (1,), (0,), (), (), "f32")
    if before is not None:  # BLAS ran single-threaded inside and got its count back
        assert before[1]() == before[0]


def _run_fresh(code: str, **env: str) -> str:
    full = dict(os.environ, **env)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


_FRESH = """
    import sys, numpy as np
    from ember.backends import cpu
    from ember.backends.cpu.dot import blas
    from ember.hlo import Builder, Shape
    b = Builder("fresh")
    x, y = b.parameter(Shape("f64", (70, 90))), b.parameter(Shape("f64", (90, 50)))
    v = b.parameter(Shape("f32", (300, 129)))
    w = b.parameter(Shape("f32", (129,)))
    m = b.build(b.tuple([b.dot(x, y, (1,), (0,)), b.dot(v, w, (1,), (0,))]))
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(t) for s, t in
            [((70, 90), np.float64), ((90, 50), np.float64), ((300, 129), np.float32),
             ((129,), np.float32)]]
    exe = cpu.compile(m)
    got = exe(*args)
    np.testing.assert_allclose(got[0], args[0] @ args[1], rtol=1e-12)
    np.testing.assert_allclose(got[1], args[2].astype(np.float64) @ args[3], rtol=1e-4,
                               atol=1e-4)
    info = blas.info()
    from ember.backends.cpu.jit.disk_cache import source_hash
    print("scipy" in sys.modules, exe.from_disk, info.abi if info else "loops", source_hash())
"""


_ADAPTER = """
    import ctypes, numpy as np
    from ember.backends.cpu.jit import llvm_target
    from ember.backends.cpu.dot import blas
    engine, _ = blas.register_symbols(llvm_target.target().llvm)
    L, P = ctypes.c_int64, ctypes.c_void_p
    gemm_t = ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_int32, L, L, L, P, L, P, L, P, L)
    gemv_t = ctypes.CFUNCTYPE(None, ctypes.c_int32, L, L, P, L, P, L, P, L)
    rng = np.random.default_rng(0)
    for dt, p in [(np.float32, "s"), (np.float64, "d")]:
        gemm = gemm_t(engine.get_function_address(f"ember_blas_{p}gemm"))
        gemv = gemv_t(engine.get_function_address(f"ember_blas_{p}gemv"))
        tol = 1e-4 if dt == np.float32 else 1e-12
        m, n, k = 17, 29, 33
        for ta in (0, 1):
            for tb in (0, 1):
                a = rng.standard_normal((k, m + 3) if ta else (m, k + 3)).astype(dt)
                b = rng.standard_normal((n, k + 2) if tb else (k, n + 2)).astype(dt)
                c = np.full((m, n + 1), np.nan, dt)
                gemm(ta, tb, m, n, k, a.ctypes.data, a.shape[1], b.ctypes.data, b.shape[1],
                     c.ctypes.data, n + 1)
                want = (a[:, :m].T if ta else a[:, :k]) @ (b[:, :k].T if tb else b[:, :n])
                np.testing.assert_allclose(c[:, :n], want, rtol=tol, atol=tol)
                assert np.isnan(c[:, n]).all()  # nothing written past a row
        for t in (0, 1):
            a = rng.standard_normal((13, 21)).astype(dt)
            x = rng.standard_normal(50).astype(dt)
            y = np.full(70, np.nan, dt)
            gemv(t, 13, 21, a.ctypes.data, 21, x.ctypes.data, 2, y.ctypes.data, 3)
            n_in, n_out = (13, 21) if t else (21, 13)
            want = (a.T if t else a) @ x[::2][:n_in]
            np.testing.assert_allclose(y[::3][:n_out], want, rtol=tol, atol=tol)
            assert np.isnan(y[1::3]).all()
        # a leading dimension beyond 32-bit BLAS integers: one row, so it is never used
        a, b = rng.standard_normal((1, 40)).astype(dt), rng.standard_normal((40, 8)).astype(dt)
        c = np.empty((1, 8), dt)
        gemm(0, 0, 1, 8, 40, a.ctypes.data, 2**31 + 5, b.ctypes.data, 8, c.ctypes.data, 8)
        np.testing.assert_allclose(c, a @ b, rtol=tol, atol=tol)
    for dt, p in [(np.complex64, "c"), (np.complex128, "z")]:  # cgemm / zgemm
        gemm = gemm_t(engine.get_function_address(f"ember_blas_{p}gemm"))
        tol = 1e-4 if dt == np.complex64 else 1e-12

        def crand(*shape):
            return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
        m, n, k = 9, 14, 11
        for ta in (0, 1):
            for tb in (0, 1):
                a = crand(*((k, m + 3) if ta else (m, k + 3)))
                b = crand(*((n, k + 2) if tb else (k, n + 2)))
                c = np.full((m, n + 1), np.nan, dt)
                gemm(ta, tb, m, n, k, a.ctypes.data, a.shape[1], b.ctypes.data, b.shape[1],
                     c.ctypes.data, n + 1)
                want = (a[:, :m].T if ta else a[:, :k]) @ (b[:, :k].T if tb else b[:, :n])
                np.testing.assert_allclose(c[:, :n], want, rtol=tol, atol=tol)
                assert np.isnan(c[:, n]).all()
        a, b = crand(1, 40), crand(40, 8)  # the loops, past 32-bit BLAS integers
        c = np.empty((1, 8), dt)
        gemm(0, 0, 1, 8, 40, a.ctypes.data, 2**31 + 5, b.ctypes.data, 8, c.ctypes.data, 8)
        np.testing.assert_allclose(c, a @ b, rtol=tol, atol=tol)
    print("ok")
"""


@pytest.mark.parametrize("mode", ["numpy", "scipy", "none"])
def test_adapter_entry_points(mode, tmp_path):
    """The fixed entry points on each BLAS source: transposes, pitches, strided vectors,
    nothing written outside the result, and sizes too big for 32-bit BLAS (loops)."""
    if mode == "scipy":
        pytest.importorskip("scipy")
    assert _run_fresh(_ADAPTER, EMBER_BLAS=mode, EMBER_CACHE_DIR=str(tmp_path)).strip() == "ok"


@pytest.mark.parametrize("mode,abi", [("numpy", "cblas"), ("scipy", "fortran"),
                                      ("none", "loops")])
def test_blas_sources_in_fresh_processes(mode, abi, tmp_path):
    if mode == "scipy":
        pytest.importorskip("scipy")
    if mode == "numpy" and blas_find.find() is None:
        pytest.skip("this NumPy exposes no BLAS symbols")
    out = _run_fresh(_FRESH, EMBER_BLAS=mode, EMBER_CACHE_DIR=str(tmp_path)).split()
    assert out[2] == abi
    if mode == "numpy":
        assert out[0] == "False"  # SciPy is never imported when NumPy's BLAS serves


def test_disk_cache_object_code_relinks_in_a_new_process(tmp_path):
    """Cached object code names the entry points, never an address: a fresh process links
    it to its own BLAS (or to the loops, when it has none)."""
    for _ in range(3):  # retried only if the compiler's sources changed in between
        first = _run_fresh(_FRESH, EMBER_CACHE_DIR=str(tmp_path)).split()
        again = _run_fresh(_FRESH, EMBER_CACHE_DIR=str(tmp_path)).split()
        loops = _run_fresh(_FRESH, EMBER_CACHE_DIR=str(tmp_path), EMBER_BLAS="none").split()
        if first[3] == again[3] == loops[3]:
            break
    assert first[1] == "False"
    assert again[1:3] == ["True", "cblas" if blas_find.find() else "fortran"]
    assert loops[1:3] == ["True", "loops"]


@pytest.fixture
def cpu_backend(monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", "cpu")


def _jit_cpu(f, *args):
    import ember

    c = ember.jit(f).lower(*args).compile()
    assert c._compiled.backend == "cpu"
    return c


def test_jnp_product_forms(cpu_backend):
    import ember.numpy as jnp
    from ember import lax

    rng = np.random.default_rng(0)
    a, c = rng.standard_normal((129, 65)).astype(np.float32), rng.standard_normal(
        (129, 33)).astype(np.float32)
    t3, u3 = rng.standard_normal((4, 33, 40)).astype(np.float32), rng.standard_normal(
        (40, 4, 29)).astype(np.float32)
    cases = [
        (lambda x, y: x.T @ y, (a, c), lambda x, y: x.T @ y),
        (lambda x, y: x @ y.T, (c.T.copy(), a.T.copy()), lambda x, y: x @ y.T),
        (lambda x, y: jnp.einsum("bij,jbk->bik", x, y), (t3, u3),
         lambda x, y: np.einsum("bij,jbk->bik", x, y)),
        (lambda x, y: jnp.einsum("bij,jbk->kib", x, y), (t3, u3),
         lambda x, y: np.einsum("bij,jbk->kib", x, y)),
        (lambda x, y: lax.dot_general(x, y, (((2,), (0,)), ((0,), (1,)))), (t3, u3),
         lambda x, y: np.einsum("bij,jbk->bik", x, y)),
        (lambda x, y: jnp.dot(x[0], y), (a.T.copy(), c), lambda x, y: x[0] @ y),
    ]
    for f, args, ref in cases:
        comp = _jit_cpu(f, *args)
        got = np.asarray(comp(*args))
        want = ref(*[v.astype(np.float64) for v in args])
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-4)
    text = _jit_cpu(lambda x, y: x.T @ y, a, c).as_text()
    assert "transpose" not in text.split("ENTRY")[1]


@pytest.mark.parametrize("dims,cpus,units", [
    (((1024, 1024), (1024, 1024), (1,), (0,)), 1, 1),
    # large products: at least UNITS_PER_CPU units per CPU (each unit repacks its blocks)
    (((1024, 1024), (1024, 1024), (1,), (0,)), 2, 4),
    (((1024, 1024), (1024, 1024), (1,), (0,)), 16, 16),  # 4 x 4 blocks of 256 x 256
    (((64, 64), (64, 64), (1,), (0,)), 16, 1),  # too small to split
    (((4096, 512), (512,), (1,), (0,)), 4, 4),  # gemv rows
    (((3, 512, 512), (3, 512, 512), (2,), (1,)), 2, 6),  # batch 3 on 2 CPUs: halves
])
def test_partition(dims, cpus, units, blas_backend):
    """Units depend on the shape and the machine's CPU count only; blocks tile the result."""
    ls, rs, lc, rc = dims
    lb, rb = ((0,), (0,)) if len(ls) == 3 else ((), ())
    m = dot_module("f32", ls, rs, lc, rc, lb, rb)
    p = dot_plan.plan(m.entry.root, cpus=cpus)
    assert p.units == units
    assert p.mb * p.pm >= p.m > p.mb * (p.pm - 1) and p.nb * p.pn >= p.n > p.nb * (p.pn - 1)


@pytest.mark.parametrize("dims,cpus,units,pack_units", [
    (((1024, 1024), (1024, 1024), (1,), (0,)), 1, 1, 1),
    # row blocks only (B is packed once for all of them), UNITS_PER_CPU per CPU
    (((1024, 1024), (1024, 1024), (1,), (0,)), 2, 4, 8),
    # 21 blocks of 49 rows -> 19 of 54 (whole 6-row tiles); 16 panels of B
    (((1024, 1024), (1024, 1024), (1,), (0,)), 16, 19, 16),
    (((3, 512, 512), (3, 512, 512), (2,), (1,)), 2, 6, 3 * 8),
    (((1024, 1024), (1024, 1000), (1,), (0,)), 2, 4, 8),  # 24 columns of padding: ok
    (((64, 64), (64, 64), (1,), (0,)), 16, None, None),  # too small: BLAS
    (((1024, 1024), (1024, 200), (1,), (0,)), 2, None, None),  # 56 of 256 padding: BLAS
    (((30, 4096), (4096, 4096), (1,), (0,)), 4, None, None),  # 30 rows for 4 CPUs: BLAS
    (((1024, 1024), (1024, 1024), (1,), (1,)), 2, None, None),  # x @ y.T: BLAS
])
def test_own_partition(dims, cpus, units, pack_units):
    """The default backend ("auto"): which products Ember's GEMM takes, and its units."""
    import ember

    assert ember.config.ember_matmul_backend == "auto"
    ls, rs, lc, rc = dims
    lb, rb = ((0,), (0,)) if len(ls) == 3 else ((), ())
    p = dot_plan.plan(dot_module("f32", ls, rs, lc, rc, lb, rb).entry.root, cpus=cpus)
    if units is None:
        assert not p.own
        return
    assert p.own and p.pn == 1 and p.units == units and p.pack_units == pack_units
    assert p.mb * p.pm >= p.m > p.mb * (p.pm - 1) and p.mb % p.row_align == 0
    assert dict(p.work_shapes())["panels"].dimensions == (p.batch_count * p.panel_elems,)


def test_unknown_matmul_backend_is_an_error():
    import ember

    m = dot_module("f32", (64, 64), (64, 64), (1,), (0,))
    ember.config.update("ember_matmul_backend", "mkl")
    try:
        with pytest.raises(ValueError, match="ember_matmul_backend"):
            dot_plan.plan(m.entry.root)
    finally:
        ember.config.update("ember_matmul_backend", "auto")



def test_changing_the_matmul_backend_recompiles_a_jitted_function():
    import ember

    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 64)).astype(np.float32)
    f = ember.jit(lambda x, y: x @ y)
    texts = []
    try:
        for backend in ("blas", "ember"):
            ember.config.update("ember_matmul_backend", backend)
            np.testing.assert_allclose(np.asarray(f(a, a)), a @ a, rtol=1e-4, atol=1e-4)
            texts.append(f.lower(a, a).compile().llvm_ir())
        assert f._cache_size() == 2  # one entry per backend: the call compiled again
    finally:
        ember.config.update("ember_matmul_backend", "auto")
    assert "ember_gemm_" not in texts[0] and "ember_gemm_" in texts[1]


@pytest.mark.parametrize("et", ["c64", "c128"])
def test_complex_products_call_cgemm_zgemm(et, x64):
    """Complex products of both operands' type and at least BLAS_MIN_MACS multiply-adds are
    one cgemm/zgemm per unit (no real dots: the expansion keeps them); forms as the real
    ones: transposed operands, batch dims, matrix-vector shapes, a fused epilogue."""
    import ember
    import ember.numpy as jnp

    dt = np.complex64 if et == "c64" else np.complex128
    rng = np.random.default_rng(1)

    def crand(*shape):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    cases = [(lambda p, q: p @ q, crand(40, 50), crand(50, 33)),
             (lambda p, q: p.T @ q, crand(50, 40), crand(50, 33)),
             (lambda p, q: p @ q.T, crand(40, 50), crand(33, 50)),
             (lambda p, q: jnp.einsum("bik,bkj->bij", p, q), crand(3, 20, 40), crand(3, 40, 45)),
             (lambda p, q: jnp.einsum("ikb,bkj->bji", p, q), crand(20, 40, 3), crand(3, 40, 45)),
             (lambda p, q: p @ q, crand(300, 200), crand(200)),
             (lambda p, q: p @ q, crand(200), crand(200, 300)),
             (lambda p, q: jnp.exp(0.01 * (p @ q)) + 1, crand(40, 50), crand(50, 33))]
    tol = 1e-5 if et == "c64" else 1e-13
    for f, x, y in cases:
        c = ember.jit(f).lower(x, y).compile()
        ir = c.llvm_ir()
        assert f"ember_blas_{'c' if et == 'c64' else 'z'}gemm" in ir
        assert "ember_blas_sgemm" not in ir and "ember_blas_dgemm" not in ir
        want = np.asarray(f(x.astype(np.complex128), y.astype(np.complex128)))
        got = np.asarray(c(x, y))
        assert got.dtype == dt
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    small = ember.jit(lambda p, q: p @ q).lower(crand(4, 4), crand(4, 4)).compile()
    assert "gemm" not in small.llvm_ir()  # (tiny products: real loops, as before)
