"""Generated tables of the math library: fitted polynomial coefficients (coeffs.py for f64,
coeffs32.py for native f32 bodies) and the table-driven pow's tables (pow_tables.py), each
printed by a script in ../tools/ and not edited by hand."""
