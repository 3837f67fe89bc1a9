"""Native f32 bodies of the math library (straight-line IR in f32 arithmetic, where the
two-width bodies would compute in f64): trig.py (tan, atan, atan2, asin, acos),
powers.py (cbrt, and f32 pow in f64 lanes), special.py (erf, erfc, erf-inv) and log.py
(the division-free, table-driven log of AVX-512 hosts, reached through exp_log.log_fn).
mathlib/__init__.py's `_F32` table names the others."""
