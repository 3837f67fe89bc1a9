"""Code generation: a schedule -> one LLVM module with one native entry point.

Input: the optimized module and its `Schedule` (plan/). Output: LLVM IR text whose
`<prefix>entry(ptr table)` runs every kernel in order. emitter.py builds the module and
dispatches each kernel to the module of its kind through kinds.py's table (loop and reduce
kernels in kernels.py, row kernels rows.py, sort, scatter, update_slice, host callbacks;
products in ../dot/), native while loops and conditionals (loops_emit.py, from the plans
of ../plan/loops_native.py, reached through control_steps.py), streaming stores, precise
reruns of fast trig (lazy_precise.py), and eager_kernels.py: the one-op kernels eager math
runs. Element values come from ember/codegen/ (elements.py plugs in the math of
../mathlib/).
"""
