"""Target-neutral LLVM IR building (llvmlite), shared by every backend that emits LLVM.

Input: HLO instructions and element types, an `ir.IRBuilder` positioned in a kernel.
Output: values in registers and loop nests. Modules:
  irtypes.py     XLA element types -> LLVM types (registers and memory), constants,
                 intrinsic declarations
  index.py       an element's multi-dimensional index, linear and layout offsets
  loops.py       canonical counted loops and loop nests, loop metadata hints
  convert.py     convert / bitcast-convert with XLA's semantics
  scalar_ops.py  the scalar op table: one emission per elementwise opcode; the
                 transcendental opcodes go to the `MathEmitter` the backend plugs in
  elemental.py   element generators: the value of any instruction of a fused graph at an
                 index, composed through the graph, so a fusion is one loop body
Invariant: nothing here imports a backend or knows the host; a backend supplies its math
(the CPU's vector math library, ember/backends/cpu/mathlib) and its own kernels and ABI.
Importing this package imports nothing (llvmlite loads with the modules that emit).
"""
