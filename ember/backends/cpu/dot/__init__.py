"""Products: dot and output fusions (a dot with its elementwise epilogue).

Input: an entry `dot` or kOutput `fusion`. Output: plan.py's `DotPlan` (pure data: BLAS
views or packed copies of each operand, the static partition into work units), emit.py's
kernels (packing, calls, epilogue), and the two libraries they call: Ember's own packed
GEMM (gemm.py) and the BLAS adapter (blas.py, over the library blas_find.py finds in the
process), both compiled once per process and disk-cached.
"""
