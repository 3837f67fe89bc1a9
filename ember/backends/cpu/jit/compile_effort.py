"""How much LLVM loop optimization a module's code is worth: the full O3 loop passes, or
light ones.

Input: the optimized HLO module about to be emitted. Output: `loop_options(module)`, the
keyword flags of `llvm_target.optimize`, and `optimize_options(module)`, those plus the
pipeline's speed level. Small elementwise modules (every loop short, no reduction) drop
loop interleaving, unrolling and epilogue vectorization: those passes could save at most a
fraction of a microsecond per call and cost a quarter of the LLVM time of, say, the fusion
example at 1000 elements (~33 -> ~26 ms). They also run LLVM's O1 pipeline, with the loop
and SLP vectorizers on as at O3 (`LIGHT_SPEED_LEVEL`): on such straight elementwise loops
O1 and O3 give the same code (measured on 19 kernels, math-heavy ones included: identical
IR for 17, one clamp more in two index computations of concatenate and pad), and a fresh
process's first compile runs fewer passes for the first time (~2-4 ms of ~20 on the fusion
example). Elementwise results do not depend on how a loop is vectorized or which passes
ran (no fast-math), so every variant gives the same bits; every variant vectorizes at the
host's widest width.
Modules that reduce (reduce, dot) keep the full passes even when small: their float
additions and products carry `reassoc`, so any change of loop shape changes the
summation order, and a product of tiny terms reordered can move by tens of ulps through
an underflowed partial product. (Row kernels, softmax and layernorm, keep the full passes
but their row loops carry "vectorize, do not unroll" hints: rows.py, loops.VECTOR_NO_UNROLL.)
Invariants: an instruction's work is its longest loop in elements: the largest of its
result and operands; a module with a `while` loop is never light (its body runs an
unknown number of times); the decision depends only on the module, so the compile caches
(keyed by the canonical HLO) stay exact.
"""

from __future__ import annotations

from ember.hlo.ir import Instruction, Module
from ember.hlo.shape import Shape

# Largest work, in elements, of any instruction of a light module: 8192 f32 are 32 KB, a
# few microseconds of any kernel. Measured on the fusion example and the tanh/exp/log1p
# chain up to 16384 elements, the light variant's run time is within noise of the full
# one's.
LIGHT_MAX_ELEMENTS = 8192
FULL: dict[str, bool] = {"interleave": True, "unroll": True, "epilogue": True}
# The new pass manager's speed level of light modules (full ones: 3, O3).
LIGHT_SPEED_LEVEL = 1
# Opcodes that keep the full passes whatever their size: loops of unknown trip count,
# reductions, whose summation order the loop shape decides, and scatter, which combines
# duplicate indices in loop order.
ORDERED = frozenset({"while", "reduce", "reduce-window", "dot", "scatter"})


def _elements(shape: Shape) -> int:
    if shape.is_tuple:
        return max((_elements(s) for s in shape.tuple_shapes), default=0)
    return shape.size


def instruction_work(inst: Instruction) -> int:
    """Elements of `inst`'s longest loop: its largest array."""
    return max([_elements(inst.shape)] + [_elements(o.shape) for o in inst.operands])


def loop_options(module: Module) -> dict[str, bool]:
    """`llvm_target.optimize`'s flags for `module`: all off when it is light (no
    instruction of any computation works on more than LIGHT_MAX_ELEMENTS elements,
    nothing loops, nothing reduces), else FULL."""
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode in ORDERED or instruction_work(inst) > LIGHT_MAX_ELEMENTS:
                return dict(FULL)
    return {"interleave": False, "unroll": False, "epilogue": False}


def light_pipeline(module: Module) -> bool:
    """Whether `module` gets the light loop passes."""
    return loop_options(module) != FULL


def optimize_options(module: Module) -> dict[str, bool | int]:
    """`llvm_target.optimize`'s keyword arguments for `module`: `loop_options` and the
    pipeline's speed `level` (LIGHT_SPEED_LEVEL for light modules, else 3)."""
    opts: dict[str, bool | int] = dict(loop_options(module))
    opts["level"] = 3 if opts == FULL else LIGHT_SPEED_LEVEL
    return opts
