"""Dense linear algebra on the CPU: LAPACK (and BLAS trsm) called from compiled code.

Input: an entry `cholesky` or `triangular-solve` instruction, or a custom call whose target
is one of XLA's LAPACK names (lapack_?getrf_ffi, ?geqrf, ?orgqr, ?syevd, ?gesdd, ?gtsv).
Output: `plan.py` says which instructions these are and the scratch each needs (workspace
sizes asked of LAPACK once, at compile time); `emit.py` is their kernel kind (a loop over
the batch calling the routine, with the row-major <-> column-major copies each needs);
`find.py` binds the routines' symbols to SciPy's `cython_lapack` / `cython_blas` capsules
(looked up once per process), so object code names only symbols and stays disk-cacheable.
The semantics are the evaluator's (hlo/evaluator/linalg.py).
"""
