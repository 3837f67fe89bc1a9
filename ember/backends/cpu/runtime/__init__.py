"""Running compiled code: executables, the fast call, memory and threads.

Input: loaded code (an engine and an entry address) and its `RuntimeSpec`. Output:
`Executable` (executable.py): called on NumPy arrays, one foreign call per call through the
fast-call trampoline (fastcall.py); outputs and temporaries from a caching allocator
(allocator.py); Ember's thread pool (pool.py, in LLVM IR) sized by threads.py; eager math
(eager_math.py): the one-op kernels eager mode runs, the same element code as jit's.
"""
