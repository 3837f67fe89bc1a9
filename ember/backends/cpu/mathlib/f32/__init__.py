"""Native f32 bodies of the math library (straight-line IR in f32 arithmetic, where the
two-width bodies would compute in f64): trig.py (tan, atan, atan2, asin, acos) and
powers.py (cbrt, and f32 pow in f64 lanes). mathlib/__init__.py's `_F32` table names them."""
