"""Scripts that fit the math library's polynomials and tables (run by hand, never imported
by the compiler): fit.py prints ../tables/coeffs.py and ../tables/coeffs32.py, fit_pow.py
../tables/pow_tables.py.
"""
