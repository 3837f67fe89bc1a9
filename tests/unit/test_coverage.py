"""Registry coverage, in one place: every opcode and every primitive has every rule it needs.

Input: the registries as `import ember` leaves them: the opcode table (hlo/opcodes.py),
shape rules, the evaluator's handlers and NumPy rules, the CPU's scalar emitters
(codegen/scalar_ops.py), math library (backends/cpu/mathlib), element generators and kernel
kinds, the eager math kernels, the primitives and their public lax functions.
Output: one test that fails with ONE message listing every missing (or stale) rule, each
line "<opcode or primitive>: <what is missing> (<where it goes>)", so adding an opcode by
the recipe and forgetting two pieces names both. Opcodes the CPU backend does not compile
yet are an explicit list (the "Control flow" issue must keep it empty). Primitives without
a JVP rule are an explicit list too (`JVP_NOT_YET`, issue 19: it may only shrink), and every
primitive marked linear must have a transpose rule; primitives without a batching rule are
the list `BATCH_NOT_YET` (issue 21), which may only shrink as well; a primitive bound with
no operands (iota) can never reach one, and must not have one.
Invariant: each check reads the registry itself (a scalar emitter is probed by emitting
it), so this file lists no opcode except the exceptions below, each with its reason.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Any

import llvmlite.ir as ir

import ember  # noqa: F401  (registers the primitives and the eager math hook)
import ember.prims
from ember import lax
from ember.backends.cpu import mathlib
from ember.backends.cpu.runtime import eager_math
from ember.backends.cpu.support import UNSUPPORTED_OPCODES
from ember.codegen import scalar_ops
from ember.codegen.elemental import ElementGenerator
from ember.codegen.irtypes import reg_type
from ember.core.primitive import PRIMITIVES
from ember.hlo.evaluator import core as evaluator
from ember.hlo.evaluator import elementwise as ew
from ember.hlo.opcodes import MATH_OPCODES, OPCODES, TYPE_CLASSES
from ember.hlo.shape_inference import RULES as SHAPE_RULES

# Some primitive modules are imported on first use (prims/copy.py by jnp.piecewise): import
# every one, so the checks below see each primitive whatever ran before in this process.
for _module in pkgutil.iter_modules(ember.prims.__path__):
    importlib.import_module(f"ember.prims.{_module.name}")

# Opcodes the CPU backend does not compile (while and conditional are native loops and
# branches now: backends/cpu/emit/loops_native.py).
CPU_EXCEPTIONS: set[str] = set()
# Non-elementwise opcodes the CPU compiles as a kernel of their own, or as part of the entry
# function, rather than through an element generator (backends/cpu/emit/, dot/).
CPU_KERNEL_KINDS: frozenset[str] = frozenset({
    "reduce", "dot", "fusion", "tuple", "get-tuple-element", "parameter", "constant", "call",
    "custom-call",  # its host-callback target: backends/cpu/emit/callbacks.py
    "scatter", "sort",  # their own kernels: backends/cpu/emit/scatter.py, sort.py
    "cholesky", "triangular-solve",  # LAPACK and BLAS calls: backends/cpu/lapack/
    "fft",  # a host call into NumPy's pocketfft: backends/cpu/emit/fft.py
    "while", "conditional",  # native blocks of the entry: emit/loops_native.py
    # rewritten into pads, slices and dots before code generation (im2col: the CPU pipeline's
    # passes/window_expansion.py), so no kernel of their own
    "convolution", "reduce-window",
    # removed by the CPU pipeline once CSE has run (passes/barrier_removal.py)
    "opt-barrier",
    # host callbacks into the runtime's rendezvous (backends/cpu/collectives.py)
    "all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
})
# Elementwise opcodes no primitive binds: passes and other lowerings create them (round_p
# picks round-nearest-* by a parameter, select_n lowers to select, jnp.log2 and log10 divide
# logs; copy and reduce-precision come from passes and lax.reduce_precision's lowering).
NO_PRIMITIVE: frozenset[str] = frozenset({
    "round-nearest-afz", "round-nearest-even", "log2", "log10", "select", "copy"})
# Elementwise opcodes the evaluator runs with a handler of its own (attributes, or a result
# type of their own) instead of a NumPy rule in elementwise._NUMPY_RULES.
OWN_EVALUATOR_HANDLER: frozenset[str] = frozenset({
    "compare", "convert", "bitcast-convert", "reduce-precision", "map"})
# Primitives whose `hlo_opcode` names an XLA opcode Ember does not have: lowered otherwise.
FOREIGN_HLO_OPCODE: dict[str, str] = {"top_k": "topk"}  # lowered through sort
# The lax function of an elementwise primitive, where it is not named like the primitive.
LAX_NAME: dict[str, str] = {"and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
                            "not": "bitwise_not"}
# Elementwise primitives with no public lax function, as in JAX: add_any is bound only by
# autodiff (the sum of tangents, prims/add_any.py); jax.lax has no add_any either.
NO_LAX_FUNCTION: frozenset[str] = frozenset({"add_any"})

# Primitives without a JVP rule yet (issue 19's later slices); differentiating through one
# raises "Differentiation rule for '<name>' not implemented". A rule added here makes the
# test fail until its name is removed, so the set only shrinks. (Call primitives, jit, need
# no rule: every trace but the staging one inlines their body, see core/trace.py.)
JVP_NOT_YET: frozenset[str] = frozenset()

# Primitives without a batching rule yet (issue 21's slices); vmap through one raises
# "Batching rule for '<name>' not implemented". Like JVP_NOT_YET, it may only shrink.
BATCH_NOT_YET: frozenset[str] = frozenset({
})


def _takes_no_operands(prim: Any) -> bool:
    """Whether `prim` is bound with no operands (iota): vmap runs a primitive none of whose
    operands is mapped at the level below (core/batching.py), so such a primitive never
    reaches a batching rule, unless it is a collective naming the vmap's axis
    (`axis_name_param`, e.g. axis_index), whose rule runs anyway. Read off its abstract-eval
    rule: no positional parameter."""
    if prim.axis_name_param is not None or prim._abstract_eval is None:
        return False
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
             inspect.Parameter.VAR_POSITIONAL)
    params = inspect.signature(prim._abstract_eval).parameters.values()
    return not any(p.kind in kinds for p in params)

# A representative operand element type per `types` class, to probe the scalar emitters.
_PROBE_TYPE = {"any": "f32", "numeric": "f32", "float": "f32", "int": "s32", "bits": "s32",
               "inexact": "f32", "complex": "c64"}
# Opcodes whose result type is not their operands': complex parts give the component
# type, complex pairs two floats into c64 (codegen/complex_ops.py emits all three).
_PROBE_RESULT = {"real": "f32", "imag": "f32", "complex": "c64"}
_ATTRS = {"direction": "LT", "exponent_bits": 5, "mantissa_bits": 10}


def _scalar_emitter_missing(opcode: str, et: str) -> bool:
    """Whether codegen's scalar op table lacks `opcode` on `et` (without a math library)."""
    arity = OPCODES[opcode].arity or 1
    in_types = ["pred", et, et] if opcode == "select" else [et] * arity
    out_type = "pred" if opcode in ("compare", "is-finite") else _PROBE_RESULT.get(opcode, et)
    fn = ir.Function(ir.Module(), ir.FunctionType(ir.VoidType(),
                                                  [reg_type(t) for t in in_types]), "probe")
    b = ir.IRBuilder(fn.append_basic_block())
    try:
        scalar_ops.emit_elementwise(b, opcode, in_types, out_type, list(fn.args), _ATTRS,
                                    precise=False, math=None)
    except (NotImplementedError, KeyError):
        return True
    return False


def _opcode_gaps() -> list[str]:
    out = []
    generators = {name[1:].replace("_", "-") for name in dir(ElementGenerator)
                  if name.startswith("_") and not name.startswith("__")}
    bound = {getattr(p, "hlo_opcode", None) for p in PRIMITIVES.values()}
    for op, row in sorted(OPCODES.items()):
        if row.types not in TYPE_CLASSES:
            out.append(f"{op}: types={row.types!r} is not one of {TYPE_CLASSES} "
                       "(hlo/opcodes.py)")
        if op not in SHAPE_RULES:
            out.append(f"{op}: shape rule (hlo/shape_inference.py)")
        if op not in evaluator.HANDLERS and op != "parameter":
            where = ("NumPy rule (hlo/evaluator/elementwise.py _NUMPY_RULES)"
                     if row.elementwise and op not in OWN_EVALUATOR_HANDLER
                     else "evaluator handler (hlo/evaluator/)")
            out.append(f"{op}: {where}")
        # (eager math compiles the vectorized body: a C-library fallback is not enough)
        if row.math and op not in mathlib.VECTORIZED:
            out.append(f"{op}: CPU math entry (backends/cpu/mathlib/__init__.py _FNS)")
        if row.math and op not in eager_math.OPCODES:
            out.append(f"{op}: eager math kernel (backends/cpu/runtime/eager_math.py)")
        if op in UNSUPPORTED_OPCODES:
            continue
        if row.elementwise and op != "map":
            et = _PROBE_TYPE[row.types]
            # math opcodes are the math library's on floats; integer power is scalar_ops'
            if (not row.math or et != "f32") and _scalar_emitter_missing(op, et):
                out.append(f"{op}: CPU scalar emitter on {et} (codegen/scalar_ops.py _TABLE)")
            if op not in bound and op not in NO_PRIMITIVE:
                out.append(f"{op}: primitive (prims/elementwise.py)")
        elif op not in generators and op not in CPU_KERNEL_KINDS:
            out.append(f"{op}: CPU element generator (codegen/elemental.py) or kernel kind "
                       "(backends/cpu/emit/)")
    return out


def _stale_entries() -> list[str]:
    """Rules for opcodes the table does not have (a removed or misspelled opcode)."""
    out = [f"{op}: NumPy rule but no opcode row (hlo/evaluator/elementwise.py)"
           for op in sorted(ew.NUMPY_ELEMENTWISE) if op not in OPCODES]
    out += [f"{op}: scalar emitter but no opcode row (codegen/scalar_ops.py)"
            for op in sorted(scalar_ops._TABLE) if op not in OPCODES]
    out += [f"{op}: shape rule but no opcode row (hlo/shape_inference.py)"
            for op in sorted(SHAPE_RULES) if op not in OPCODES]
    out += [f"{op}: CPU math entry but math=False in its opcode row (hlo/opcodes.py)"
            for op in sorted(mathlib.MATH_OPCODES) if op not in MATH_OPCODES]
    out += [f"{op}: in NO_PRIMITIVE but bound by a primitive (tests/unit/test_coverage.py)"
            for op in sorted(NO_PRIMITIVE)
            if any(getattr(p, "hlo_opcode", None) == op for p in PRIMITIVES.values())]
    return out


def _primitive_gaps() -> list[str]:
    # (The collectives of prims/collectives.py have a NumPy rule and a lowering for a named
    # axis that raise JAX's unbound-axis NameError: the vmap naming an axis replaces the
    # collective before either could run, so reaching one means no vmap defines the name.)
    out = []
    for name, prim in sorted(PRIMITIVES.items()):
        if prim.is_call:
            continue  # jit: inlined by the lowering driver, run by the dispatcher
        if prim._abstract_eval is None:
            out.append(f"primitive {name}: abstract eval")
        if prim._impl is None:
            out.append(f"primitive {name}: NumPy rule (impl)")
        if prim.lowering is None:
            out.append(f"primitive {name}: lowering")
        opcode = getattr(prim, "hlo_opcode", None)
        if opcode is None or FOREIGN_HLO_OPCODE.get(name) == opcode:
            continue
        if opcode not in OPCODES:
            out.append(f"primitive {name}: hlo_opcode {opcode!r} has no opcode row "
                       "(hlo/opcodes.py)")
        elif OPCODES[opcode].elementwise and name not in NO_LAX_FUNCTION and not hasattr(
                lax, LAX_NAME.get(name, name)):
            out.append(f"primitive {name}: public function ember.lax.{LAX_NAME.get(name, name)}"
                       " (lax/_ops.py)")
    return out


def _autodiff_gaps() -> list[str]:
    out = []
    for name, prim in sorted(PRIMITIVES.items()):
        if prim.is_call:
            continue  # inlined under AD (core/trace.py Trace.process_call)
        if prim.jvp_rule is None and name not in JVP_NOT_YET:
            out.append(f"primitive {name}: JVP rule (prim.def_jvp or core/ad.py's defjvp, "
                       "next to the primitive in prims/)")
        if prim.jvp_rule is not None and name in JVP_NOT_YET:
            out.append(f"primitive {name}: has a JVP rule now; remove it from JVP_NOT_YET "
                       "(tests/unit/test_coverage.py)")
        if _takes_no_operands(prim):
            if prim.batch_rule is not None:
                out.append(f"primitive {name}: takes no operands, so its batching rule can "
                           "never run; remove it")
            if name in BATCH_NOT_YET:
                out.append(f"primitive {name}: takes no operands and needs no batching rule; "
                           "remove it from BATCH_NOT_YET (tests/unit/test_coverage.py)")
        elif prim.batch_rule is None and name not in BATCH_NOT_YET:
            out.append(f"primitive {name}: batching rule (prim.def_batch, next to the "
                       "primitive in prims/; core/batching.py has the protocol)")
        if prim.batch_rule is not None and name in BATCH_NOT_YET:
            out.append(f"primitive {name}: has a batching rule now; remove it from "
                       "BATCH_NOT_YET (tests/unit/test_coverage.py)")
        if prim.is_linear and prim.transpose_rule is None:
            out.append(f"primitive {name}: linear, but no transpose rule (prim.def_transpose)")
    out += [f"primitive {name}: in JVP_NOT_YET but not a primitive (tests/unit/test_coverage.py)"
            for name in sorted(JVP_NOT_YET) if name not in PRIMITIVES]
    out += [f"primitive {name}: in BATCH_NOT_YET but not a primitive "
            "(tests/unit/test_coverage.py)" for name in sorted(BATCH_NOT_YET)
            if name not in PRIMITIVES]
    return out


def test_every_opcode_and_primitive_has_every_rule():
    missing = _opcode_gaps() + _stale_entries() + _primitive_gaps() + _autodiff_gaps()
    if set(UNSUPPORTED_OPCODES) != CPU_EXCEPTIONS:
        missing.append(f"CPU: unsupported opcodes {sorted(UNSUPPORTED_OPCODES)} differ from "
                       f"the explicit list {sorted(CPU_EXCEPTIONS)} (backends/cpu/support.py)")
    assert not missing, "missing rules:\n  " + "\n  ".join(missing)
