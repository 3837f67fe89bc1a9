"""Complex matrix products: one BLAS cgemm/zgemm call (Ember's CPU route since issue 25)
against the four real products the complex-dot-expansion pass makes of it, NumPy (zgemm)
and JAX, in one process.

Run (OpenBLAS tuning variables unset for this command only, as the peers' table was taken):
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/complex_matmul.py

Rows: square products of c64 and c128 at n = 32 (where the expansion's three extra calls
and its part copies weigh most), 128, 512 and 1024. "ember" is `jit(a @ b)` (one cgemm
/ zgemm per work unit); "ember-4real" is the expansion written out in ember.numpy
(re(a) re(b) - im(a) im(b), re(a) im(b) + im(a) re(b): four real dots and the part copies,
as the pass compiled it before); both on Ember's threads. The implementations take turns in
blocks of calls (timing.interleaved_ms); medians with each one's time relative to NumPy's.
Informative only: compare ratios from one run.
"""

from __future__ import annotations

import argparse
import importlib.util

import numpy as np
from timing import interleaved_ms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--sizes", default="32,128,512,1024")
    args = ap.parse_args()
    import ember
    import ember.numpy as ejnp

    ember.config.update("jax_enable_x64", True)
    jax = None
    if importlib.util.find_spec("jax"):
        import jax

        jax.config.update("jax_platforms", "cpu")
        jax.config.update("jax_enable_x64", True)

    def four_real(a, b):
        ar, ai, br, bi = ejnp.real(a), ejnp.imag(a), ejnp.real(b), ejnp.imag(b)
        return ember.lax.complex(ar @ br - ai @ bi, ar @ bi + ai @ br)

    rng = np.random.default_rng(0)
    print(f"{'dtype':10} {'n':>5} {'impl':12} {'ms':>9} {'time / numpy':>13}")
    for dtype in (np.complex64, np.complex128):
        for n in (int(s) for s in args.sizes.split(",")):
            a = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(dtype)
            b = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(dtype)
            _row(ember, ejnp, jax, four_real, a, b, args.repeat)


def _row(ember, ejnp, jax, four_real, a, b, repeat: int) -> None:
    """One size and dtype: every implementation checked, then timed and printed."""
    ea, eb = ejnp.asarray(a), ejnp.asarray(b)
    one, four = ember.jit(lambda p, q: p @ q), ember.jit(four_real)
    fns = {"numpy": lambda: a @ b, "ember": lambda: one(ea, eb),
           "ember-4real": lambda: four(ea, eb)}
    if jax is not None:
        jf = jax.jit(lambda p, q: p @ q)
        ja, jb = jax.numpy.asarray(a), jax.numpy.asarray(b)
        fns["jax"] = lambda: jf(ja, jb).block_until_ready()
    want = a @ b
    for impl in ("ember", "ember-4real"):
        err = float(np.max(np.abs(np.asarray(fns[impl]()) - want)) / np.max(np.abs(want)))
        assert err < (1e-5 if a.dtype == np.complex64 else 1e-13), (impl, err)
    ms = interleaved_ms(fns, repeat)
    for impl, t in ms.items():
        print(f"{a.dtype.name:10} {a.shape[0]:5} {impl:12} {t:9.3f} {t / ms['numpy']:12.2f}x")

if __name__ == "__main__":
    main()
