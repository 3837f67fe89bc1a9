"""Generated tables of the math library: fitted polynomial coefficients (coeffs.py for f64,
coeffs32.py for native f32 bodies), the table-driven pow's tables (pow_tables.py) and f32
erf's (erf_tables.py), each printed by a script in ../tools/ and not edited by hand."""
