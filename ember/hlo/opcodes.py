"""The HLO opcode table: one row per opcode, the single source of truth about opcodes.

Input: nothing. Output: `OPCODES: dict[str, OpInfo]` keyed by the XLA spelling, and helpers.
Each row says how many operands the opcode takes (None: variadic), whether it is
elementwise (result element i depends only on operand elements i; bitcast-convert between
types of different widths is the exception, see `Instruction.is_elementwise`), whether it is
"expensive" (fusion should not duplicate it), per-element flop and transcendental weights
for cost analysis, the attribute names it carries, and the roles of the computations it
calls (in the order they are stored in `Instruction.called_computations`).
Two more columns for elementwise opcodes, so that no other module keeps its own opcode set:
  types: the operand element types the verifier's shape rule accepts (`TYPE_CLASSES`).
  math: the result is not correctly rounded on floats, so a backend's math library computes
    it (exp, log, sin, pow, erf, ...; not sqrt or divide, which are exact everywhere).
    `MATH_OPCODES` collects them: the evaluator serves them through a backend's kernels,
    the CPU's eager math covers exactly these, and the coverage test checks the CPU math
    library has each (tests/unit/test_coverage.py).
Adding an elementwise opcode (tests/unit/test_coverage.py names any piece left out):
  1. its row here (`ew(...)`, or `ew_math(...)` for a transcendental): costs, fusion expense,
     shape rule and operand types all follow from the row;
  2. its NumPy rule in hlo/evaluator/elementwise.py (`_NUMPY_RULES`);
  3. its primitive in prims/elementwise.py (`_unary`/`_binary`: lowering from the opcode);
  4. its public function in lax/_ops.py (and a jnp one in numpy/_ufuncs.py if NumPy has one);
  5. on the CPU, a scalar emitter in codegen/scalar_ops.py (`_TABLE`), or for a `math` opcode
     an entry in backends/cpu/mathlib/__init__.py naming its vectorized body (a function in
     one of mathlib's modules); eager mode then runs that body too (runtime/eager_math.py).

Attribute names, per opcode (values as stored in `Instruction.attrs`):
  compare: direction ("EQ"|"NE"|"LT"|"LE"|"GT"|"GE")
  broadcast: dimensions (operand dim i -> result dim dimensions[i])
  transpose: dimensions (result dim i = operand dim dimensions[i])
  reverse, reduce, map: dimensions
  slice: slice (tuple of (start, limit, stride))
  dynamic-slice: dynamic_slice_sizes
  pad: padding (tuple of (low, high, interior))
  concatenate, sort: dimension (int; printed dimensions={d}); sort also is_stable
  iota: iota_dimension; constant: value (np.ndarray); parameter: parameter_number
  get-tuple-element: index; fusion: kind ("kLoop"|"kInput"|"kOutput"|"kCustom")
  dot: lhs_contracting_dims, rhs_contracting_dims, lhs_batch_dims, rhs_batch_dims
  gather: offset_dims, collapsed_slice_dims, start_index_map, index_vector_dim,
          slice_sizes, indices_are_sorted
  scatter: update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
           index_vector_dim, indices_are_sorted, unique_indices
  custom-call: custom_call_target, custom_call_has_side_effect (optional),
               backend_config (optional)
  reduce-precision: exponent_bits, mantissa_bits
  convolution: window (tuple of hlo/window.py WindowDim), dim_labels ("b01f_01io->b01f"),
               feature_group_count, batch_group_count (ints, printed unless 1)
  reduce-window: window (operand, init value; to_apply the scalar combiner)
  cholesky: lower (bool); triangular-solve: left_side, lower, unit_diagonal (bools),
            transpose_a ("NO_TRANSPOSE"|"TRANSPOSE"|"ADJOINT")
  fft: fft_type ("FFT"|"IFFT"|"RFFT"|"IRFFT"), fft_length (the 1-3 transform lengths,
       printed fft_length={8,4})
  all-reduce, all-gather, reduce-scatter, all-to-all (the collectives of a partitioned
       per-device module): replica_groups (a tuple of groups, each a tuple of partition
       ids in position order, printed replica_groups={{0,1},{2,3}}); all-gather,
       reduce-scatter and all-to-all also dimensions (the one dimension gathered,
       scattered, or cut into one block per member, block j sent to member j and the
       blocks received put back in member order along it, as XLA's array all-to-all);
       all-reduce and reduce-scatter call to_apply, the scalar combiner
  collective-permute: source_target_pairs (a tuple of (source, target) partition id
       pairs, sources distinct and targets distinct, printed
       source_target_pairs={{0,1},{1,0}}); the target of a pair receives its source's
       operand, a device no pair targets receives zeros (as XLA)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OpInfo:
    name: str
    arity: int | None  # None: variadic
    elementwise: bool = False
    expensive: bool = False
    flops: float = 0.0  # per result element
    transcendentals: float = 0.0  # per result element
    attrs: tuple[str, ...] = ()
    called: tuple[str, ...] = ()  # roles of called computations, printed as role=%comp
    types: str = "any"  # operand element types the shape rule accepts: a TYPE_CLASSES key
    math: bool = False  # not correctly rounded on floats: a backend math library's op


# Operand element-type classes of the `types` column (the shape rule checks the operands'
# common element type): "numeric" excludes pred, "bits" is pred or integer, "inexact" is
# float or complex (XLA's exp, log, sqrt, the trig functions), "complex" is c64/c128.
TYPE_CLASSES: tuple[str, ...] = ("any", "numeric", "float", "int", "bits", "inexact",
                                 "complex")
# Real-only math: XLA has no complex erf, cbrt or atan2.
_REAL_ONLY_MATH = frozenset({"cbrt", "erf", "erfc", "erf-inv"})


def _rows() -> list[OpInfo]:
    rows: list[OpInfo] = []

    def ew(name: str, arity: int, types: str, flops: float = 1.0, trans: float = 0.0,
           expensive: bool = False, math: bool = False) -> None:
        rows.append(OpInfo(name, arity, True, expensive, flops, trans, types=types, math=math))

    def ew_math(name: str, arity: int, types: str = "float") -> None:
        # XLA's cost analysis counts a transcendental op as transcendentals only, never flops.
        ew(name, arity, types, flops=0.0, trans=1.0, expensive=True, math=True)

    # (the rows keep the table's historical order: printers and test corpora iterate it)
    # pred is allowed where XLA defines a logical meaning: add = or, multiply = and, ...
    for name, types in (("add", "any"), ("subtract", "numeric"), ("multiply", "any"),
                        ("maximum", "any"), ("minimum", "any"), ("and", "bits"),
                        ("or", "bits"), ("xor", "bits"), ("shift-left", "int"),
                        ("shift-right-logical", "int"), ("shift-right-arithmetic", "int")):
        ew(name, 2, types)
    ew("divide", 2, "numeric", expensive=True)
    ew("remainder", 2, "numeric", expensive=True)
    ew_math("power", 2, "numeric")  # integer power is exact: the scalar emitter's
    ew_math("atan2", 2)
    for name, types in (("negate", "numeric"), ("abs", "numeric"), ("sign", "numeric"),
                        ("floor", "float"), ("ceil", "float"), ("round-nearest-afz", "float"),
                        ("round-nearest-even", "float"), ("not", "bits"), ("popcnt", "int"),
                        ("clz", "int"), ("is-finite", "float")):
        ew(name, 1, types)
    for name in ("exponential", "exponential-minus-one", "log", "log-plus-one", "sine",
                 "cosine", "tan", "tanh", "logistic", "sqrt", "rsqrt", "cbrt", "erf",
                 "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erfc",
                 "erf-inv", "exp2", "log2", "log10"):
        types = "float" if name in _REAL_ONLY_MATH else "inexact"
        if name in ("sqrt", "rsqrt"):
            # transcendentals to cost analysis (as XLA counts them), but correctly rounded
            ew(name, 1, types, flops=0.0, trans=1.0, expensive=True)
        else:
            ew_math(name, 1, types)
    # complex parts: real/imag take c64/c128 and give f32/f64; complex pairs two floats
    ew("real", 1, "complex")
    ew("imag", 1, "complex")
    ew("complex", 2, "float")
    rows.append(OpInfo("compare", 2, True, False, 1.0, attrs=("direction",)))
    rows.append(OpInfo("select", 3, True, False, 1.0))
    rows.append(OpInfo("clamp", 3, True, False, 1.0))
    rows.append(OpInfo("convert", 1, True, False, 1.0))  # XLA counts converts as flops
    # Elementwise only between types of one width; see ir.Instruction.is_elementwise.
    rows.append(OpInfo("bitcast-convert", 1, True))
    rows.append(OpInfo("copy", 1, True))
    rows.append(OpInfo("reduce-precision", 1, True, False, 1.0,
                       attrs=("exponent_bits", "mantissa_bits"), types="float"))
    rows.append(OpInfo("map", None, False, False, 1.0, attrs=("dimensions",),
                       called=("to_apply",)))

    rows.append(OpInfo("broadcast", 1, attrs=("dimensions",)))
    rows.append(OpInfo("reshape", 1))
    rows.append(OpInfo("transpose", 1, attrs=("dimensions",)))
    rows.append(OpInfo("slice", 1, attrs=("slice",)))
    rows.append(OpInfo("dynamic-slice", None, attrs=("dynamic_slice_sizes",)))
    rows.append(OpInfo("dynamic-update-slice", None))
    rows.append(OpInfo("gather", 2, attrs=("offset_dims", "collapsed_slice_dims",
                                           "start_index_map", "index_vector_dim",
                                           "slice_sizes", "indices_are_sorted")))
    rows.append(OpInfo("scatter", 3, flops=1.0,
                       attrs=("update_window_dims", "inserted_window_dims",
                              "scatter_dims_to_operand_dims", "index_vector_dim",
                              "indices_are_sorted", "unique_indices"),
                       called=("to_apply",)))
    rows.append(OpInfo("pad", 2, attrs=("padding",)))
    rows.append(OpInfo("concatenate", None, attrs=("dimension",)))
    rows.append(OpInfo("reverse", 1, attrs=("dimensions",)))
    rows.append(OpInfo("iota", 0, attrs=("iota_dimension",)))
    rows.append(OpInfo("constant", 0, attrs=("value",)))
    rows.append(OpInfo("parameter", 0, attrs=("parameter_number",)))
    rows.append(OpInfo("reduce", None, flops=1.0, attrs=("dimensions",), called=("to_apply",)))
    rows.append(OpInfo("sort", None, expensive=True, attrs=("dimension", "is_stable"),
                       called=("to_apply",)))
    rows.append(OpInfo("dot", 2, expensive=True, flops=2.0,
                       attrs=("lhs_batch_dims", "lhs_contracting_dims", "rhs_batch_dims",
                              "rhs_contracting_dims")))
    rows.append(OpInfo("convolution", 2, expensive=True, flops=2.0,
                       attrs=("window", "dim_labels", "feature_group_count",
                              "batch_group_count")))
    rows.append(OpInfo("reduce-window", 2, flops=1.0, attrs=("window",), called=("to_apply",)))
    rows.append(OpInfo("tuple", None))
    rows.append(OpInfo("get-tuple-element", 1, attrs=("index",)))
    # a tuple passed through unchanged, which no pass may look through (prims/barrier.py)
    rows.append(OpInfo("opt-barrier", 1))
    rows.append(OpInfo("while", 1, expensive=True, called=("condition", "body")))
    rows.append(OpInfo("conditional", None, expensive=True, called=("branch_computations",)))
    rows.append(OpInfo("call", None, expensive=True, called=("to_apply",)))
    rows.append(OpInfo("fusion", None, expensive=True, attrs=("kind",), called=("calls",)))
    rows.append(OpInfo("custom-call", None, expensive=True,
                       attrs=("custom_call_target", "custom_call_has_side_effect",
                              "backend_config")))
    # dense linear algebra (the LAPACK-backed rest is custom calls: hlo/evaluator/linalg.py)
    rows.append(OpInfo("cholesky", 1, expensive=True, attrs=("lower",)))
    rows.append(OpInfo("triangular-solve", 2, expensive=True,
                       attrs=("left_side", "lower", "unit_diagonal", "transpose_a")))
    # the discrete Fourier transform over the minor 1-3 dimensions (hlo/evaluator/fft.py)
    rows.append(OpInfo("fft", 1, expensive=True, attrs=("fft_type", "fft_length")))
    # collectives between the devices running one per-device module
    # (passes/spmd_partitioner.py makes them; hlo/evaluator/collectives.py runs them)
    rows.append(OpInfo("all-reduce", 1, expensive=True, flops=1.0,
                       attrs=("replica_groups",), called=("to_apply",)))
    rows.append(OpInfo("all-gather", 1, expensive=True,
                       attrs=("dimensions", "replica_groups")))
    rows.append(OpInfo("reduce-scatter", 1, expensive=True, flops=1.0,
                       attrs=("dimensions", "replica_groups"), called=("to_apply",)))
    rows.append(OpInfo("all-to-all", 1, expensive=True,
                       attrs=("dimensions", "replica_groups")))
    rows.append(OpInfo("collective-permute", 1, expensive=True,
                       attrs=("source_target_pairs",)))
    return rows


OPCODES: dict[str, OpInfo] = {row.name: row for row in _rows()}

# The elementwise opcodes a backend's math library computes on floats (the `math` column).
MATH_OPCODES: frozenset[str] = frozenset(n for n, r in OPCODES.items() if r.math)

COMPARISON_DIRECTIONS: tuple[str, ...] = ("EQ", "NE", "LT", "LE", "GT", "GE")
FUSION_KINDS: tuple[str, ...] = ("kLoop", "kInput", "kOutput", "kCustom")

# Binary elementwise opcodes that are associative and commutative (for reduce fast paths and
# algebraic rewrites): the identity element per element type family lives with the users.
COMMUTATIVE: frozenset[str] = frozenset(
    {"add", "multiply", "maximum", "minimum", "and", "or", "xor"}
)


def info(opcode: str) -> OpInfo:
    try:
        return OPCODES[opcode]
    except KeyError:
        raise ValueError(f"unknown HLO opcode {opcode!r}") from None


def is_elementwise(opcode: str) -> bool:
    return info(opcode).elementwise


def is_expensive(opcode: str) -> bool:
    return info(opcode).expensive
