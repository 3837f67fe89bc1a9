"""Scripts that fit the math library's polynomials and tables (run by hand, never imported
by the compiler): fit.py prints ../coeffs.py and ../coeffs32.py, fit_pow.py ../pow_tables.py.
"""
