"""Builder: the convenient way to construct HLO computations and modules.

Input: calls like `b.add(x, b.constant(np.float32(1)))`. Output: `Instruction`s added to the
builder's computation with shapes from `shape_inference`; `build(root)` returns a Module,
`build_computation(root)` a Computation to pass as to_apply/condition/body/branch/fusion.

    b = Builder("f")
    x = b.parameter(Shape("f32", (3,)))
    m = b.build(root=b.add(x, b.constant(np.float32(1))))

Invariants: broadcasts are explicit (binary ops need equal shapes); compare needs a
direction; parameters are numbered in creation order unless a number is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ember.hlo.ir import Computation, Instruction, Module
from ember.hlo.opcodes import OPCODES
from ember.hlo.shape import Shape, element_type_from_numpy, numpy_dtype
from ember.hlo.shape_inference import ShapeError, bitcast_convert_dimensions, infer_shape

_BINARY = [n for n, r in OPCODES.items() if r.elementwise and r.arity == 2 and n != "compare"]
_UNARY = [n for n, r in OPCODES.items() if r.elementwise and r.arity == 1
          and n not in ("convert", "bitcast-convert", "reduce-precision")]


def _method_name(opcode: str) -> str:
    name = opcode.replace("-", "_")
    return name + "_" if name in ("and", "or", "not", "abs") else name


class Builder:
    """Builds one computation; make a separate Builder for each sub-computation."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.computation = Computation(name)
        self.metadata: dict[str, Any] = {}

    # -- generic --------------------------------------------------------------------------

    def op(self, opcode: str, operands: Sequence[Instruction] = (),
           attrs: dict[str, Any] | None = None, shape: Shape | None = None,
           called: Sequence[Computation] = (), metadata: dict[str, Any] | None = None,
           name: str | None = None) -> Instruction:
        """Add any instruction; `shape` is required only where inference cannot tell."""
        for o in operands:
            if o.parent is not self.computation:
                raise ValueError(f"operand {o!r} belongs to another computation")
        attrs = dict(attrs or {})
        inferred = infer_shape(opcode, [o.shape for o in operands], attrs, called, shape)
        if shape is not None and shape.layout is not None and not shape.is_tuple:
            inferred = inferred.with_layout(shape.layout)
        md = dict(self.metadata)
        md.update(metadata or {})
        inst = Instruction(opcode, inferred, operands, attrs, called, md, name)
        return self.computation.add_instruction(inst)

    def set_metadata(self, **metadata: Any) -> None:
        """Metadata (op_name, source_file, source_line) for the instructions added next."""
        self.metadata = dict(metadata)

    def build_computation(self, root: Instruction) -> Computation:
        if root.parent is not self.computation:
            raise ValueError("root must belong to this builder's computation")
        self.computation.root = root
        return self.computation

    def build(self, root: Instruction, name: str | None = None) -> Module:
        return Module(name or self.name, self.build_computation(root))

    # -- leaves ---------------------------------------------------------------------------

    def parameter(self, shape: Shape, name: str | None = None,
                  number: int | None = None) -> Instruction:
        if number is None:
            number = len(self.computation.parameters)
        return self.op("parameter", (), {"parameter_number": number}, shape,
                       name=name or f"Arg_{number}")

    def constant(self, value: Any, dtype: Any = None) -> Instruction:
        arr = np.array(value, dtype=dtype)
        element_type_from_numpy(arr.dtype)  # reject unsupported dtypes early
        arr.setflags(write=False)
        return self.op("constant", (), {"value": arr})

    def scalar(self, value: Any, element_type: str) -> Instruction:
        return self.constant(np.array(value, dtype=numpy_dtype(element_type)))

    def iota(self, shape: Shape, iota_dimension: int) -> Instruction:
        return self.op("iota", (), {"iota_dimension": iota_dimension}, shape)

    # -- elementwise ----------------------------------------------------------------------

    def binary(self, opcode: str, x: Instruction, y: Instruction) -> Instruction:
        return self.op(opcode, (x, y))

    def unary(self, opcode: str, x: Instruction) -> Instruction:
        return self.op(opcode, (x,))

    def compare(self, x: Instruction, y: Instruction, direction: str) -> Instruction:
        return self.op("compare", (x, y), {"direction": direction})

    def select(self, pred: Instruction, on_true: Instruction,
               on_false: Instruction) -> Instruction:
        return self.op("select", (pred, on_true, on_false))

    def clamp(self, lo: Instruction, x: Instruction, hi: Instruction) -> Instruction:
        return self.op("clamp", (lo, x, hi))

    def convert(self, x: Instruction, element_type: str) -> Instruction:
        return self.op("convert", (x,), shape=Shape(element_type, x.shape.dimensions))

    def bitcast_convert(self, x: Instruction, element_type: str) -> Instruction:
        """Reinterpret bits; a narrower type adds a minor dim, a wider one removes it."""
        try:
            dims = bitcast_convert_dimensions(x.shape.dimensions, x.shape.element_type,
                                              element_type)
        except ValueError as e:
            raise ShapeError(f"bitcast-convert({x.shape}) to {element_type}: {e}") from None
        return self.op("bitcast-convert", (x,), shape=Shape(element_type, dims))

    def reduce_precision(self, x: Instruction, exponent_bits: int,
                         mantissa_bits: int) -> Instruction:
        return self.op("reduce-precision", (x,), {"exponent_bits": exponent_bits,
                                                  "mantissa_bits": mantissa_bits})

    def map(self, operands: Sequence[Instruction], to_apply: Computation) -> Instruction:
        dims = tuple(range(operands[0].shape.rank))
        return self.op("map", operands, {"dimensions": dims}, called=[to_apply])

    # -- shape manipulation -----------------------------------------------------------------

    def broadcast(self, x: Instruction, dimensions: Sequence[int],
                  broadcast_dimensions: Sequence[int] = ()) -> Instruction:
        """Broadcast `x` to result dims `dimensions`; operand dim i -> broadcast_dimensions[i]."""
        return self.op("broadcast", (x,), {"dimensions": tuple(broadcast_dimensions)},
                       Shape(x.shape.element_type, tuple(dimensions)))

    def reshape(self, x: Instruction, dimensions: Sequence[int]) -> Instruction:
        return self.op("reshape", (x,), shape=Shape(x.shape.element_type, tuple(dimensions)))

    def transpose(self, x: Instruction, permutation: Sequence[int]) -> Instruction:
        return self.op("transpose", (x,), {"dimensions": tuple(permutation)})

    def reverse(self, x: Instruction, dimensions: Sequence[int]) -> Instruction:
        return self.op("reverse", (x,), {"dimensions": tuple(dimensions)})

    def slice(self, x: Instruction, starts: Sequence[int], limits: Sequence[int],
              strides: Sequence[int] | None = None) -> Instruction:
        strides = strides or [1] * len(starts)
        spec = tuple((int(a), int(b), int(c)) for a, b, c in zip(starts, limits, strides))
        return self.op("slice", (x,), {"slice": spec})

    def dynamic_slice(self, x: Instruction, starts: Sequence[Instruction],
                      sizes: Sequence[int]) -> Instruction:
        return self.op("dynamic-slice", (x, *starts), {"dynamic_slice_sizes": tuple(sizes)})

    def dynamic_update_slice(self, x: Instruction, update: Instruction,
                             starts: Sequence[Instruction]) -> Instruction:
        return self.op("dynamic-update-slice", (x, update, *starts))

    def pad(self, x: Instruction, value: Instruction,
            config: Sequence[tuple[int, int, int]]) -> Instruction:
        return self.op("pad", (x, value), {"padding": tuple(tuple(c) for c in config)})

    def concatenate(self, xs: Sequence[Instruction], dimension: int) -> Instruction:
        return self.op("concatenate", xs, {"dimension": dimension})

    def gather(self, operand: Instruction, indices: Instruction, *, offset_dims: Sequence[int],
               collapsed_slice_dims: Sequence[int], start_index_map: Sequence[int],
               index_vector_dim: int, slice_sizes: Sequence[int],
               indices_are_sorted: bool = False) -> Instruction:
        attrs = {"offset_dims": tuple(offset_dims),
                 "collapsed_slice_dims": tuple(collapsed_slice_dims),
                 "start_index_map": tuple(start_index_map),
                 "index_vector_dim": index_vector_dim, "slice_sizes": tuple(slice_sizes),
                 "indices_are_sorted": indices_are_sorted}
        return self.op("gather", (operand, indices), attrs)

    def scatter(self, operand: Instruction, indices: Instruction, updates: Instruction,
                to_apply: Computation, *, update_window_dims: Sequence[int],
                inserted_window_dims: Sequence[int],
                scatter_dims_to_operand_dims: Sequence[int], index_vector_dim: int,
                indices_are_sorted: bool = False, unique_indices: bool = False) -> Instruction:
        attrs = {"update_window_dims": tuple(update_window_dims),
                 "inserted_window_dims": tuple(inserted_window_dims),
                 "scatter_dims_to_operand_dims": tuple(scatter_dims_to_operand_dims),
                 "index_vector_dim": index_vector_dim,
                 "indices_are_sorted": indices_are_sorted, "unique_indices": unique_indices}
        return self.op("scatter", (operand, indices, updates), attrs, called=[to_apply])

    # -- reductions, sort, dot -----------------------------------------------------------

    def reduce(self, operands: Sequence[Instruction] | Instruction,
               init_values: Sequence[Instruction] | Instruction, dimensions: Sequence[int],
               to_apply: Computation) -> Instruction:
        ops = [operands] if isinstance(operands, Instruction) else list(operands)
        inits = [init_values] if isinstance(init_values, Instruction) else list(init_values)
        return self.op("reduce", ops + inits, {"dimensions": tuple(dimensions)},
                       called=[to_apply])

    def sort(self, operands: Sequence[Instruction] | Instruction, dimension: int,
             comparator: Computation, is_stable: bool = False) -> Instruction:
        ops = [operands] if isinstance(operands, Instruction) else list(operands)
        return self.op("sort", ops, {"dimension": dimension, "is_stable": is_stable},
                       called=[comparator])

    def dot(self, lhs: Instruction, rhs: Instruction, lhs_contracting_dims: Sequence[int],
            rhs_contracting_dims: Sequence[int], lhs_batch_dims: Sequence[int] = (),
            rhs_batch_dims: Sequence[int] = (), element_type: str | None = None) -> Instruction:
        attrs = {"lhs_contracting_dims": tuple(lhs_contracting_dims),
                 "rhs_contracting_dims": tuple(rhs_contracting_dims),
                 "lhs_batch_dims": tuple(lhs_batch_dims),
                 "rhs_batch_dims": tuple(rhs_batch_dims)}
        hint = Shape(element_type, ()) if element_type else None
        return self.op("dot", (lhs, rhs), attrs, hint)

    # -- tuples and control flow -----------------------------------------------------------

    def tuple(self, xs: Sequence[Instruction]) -> Instruction:
        return self.op("tuple", xs)

    def get_tuple_element(self, x: Instruction, index: int) -> Instruction:
        return self.op("get-tuple-element", (x,), {"index": index})

    def while_loop(self, condition: Computation, body: Computation,
                   init: Instruction) -> Instruction:
        return self.op("while", (init,), called=[condition, body])

    def conditional(self, selector: Instruction, branches: Sequence[Computation],
                    operands: Sequence[Instruction]) -> Instruction:
        return self.op("conditional", (selector, *operands), called=list(branches))

    def call(self, to_apply: Computation, args: Sequence[Instruction]) -> Instruction:
        return self.op("call", args, called=[to_apply])

    def fusion(self, fused: Computation, args: Sequence[Instruction],
               kind: str = "kLoop") -> Instruction:
        fused.is_fusion_computation = True
        return self.op("fusion", args, {"kind": kind}, called=[fused])

    def copy(self, x: Instruction) -> Instruction:
        return self.op("copy", (x,))

    def custom_call(self, target: str, operands: Sequence[Instruction], shape: Shape,
                    backend_config: str | None = None) -> Instruction:
        attrs: dict[str, Any] = {"custom_call_target": target}
        if backend_config is not None:
            attrs["backend_config"] = backend_config
        return self.op("custom-call", operands, attrs, shape)

    # -- ready-made sub-computations --------------------------------------------------------

    @staticmethod
    def scalar_computation(opcode: str, element_type: str,
                           name: str | None = None) -> Computation:
        """`(x, y) -> opcode(x, y)` on scalars: the usual reduce/scatter to_apply."""
        sb = Builder(name or f"{opcode.replace('-', '_')}_{element_type}")
        s = Shape(element_type, ())
        x, y = sb.parameter(s, "x"), sb.parameter(s, "y")
        return sb.build_computation(sb.binary(opcode, x, y))

    @staticmethod
    def comparator(element_types: Sequence[str] | str, direction: str = "LT",
                   name: str | None = None) -> Computation:
        """A sort comparator on operand 0 (`lhs0 <direction> rhs0`), other operands ride."""
        types = [element_types] if isinstance(element_types, str) else list(element_types)
        sb = Builder(name or f"compare_{direction.lower()}")
        params = []
        for i, et in enumerate(types):
            params += [sb.parameter(Shape(et, ()), f"lhs{i}"),
                       sb.parameter(Shape(et, ()), f"rhs{i}")]
        return sb.build_computation(sb.compare(params[0], params[1], direction))


def _install_elementwise_methods() -> None:
    for opcode in _BINARY:
        def bfn(self: Builder, x: Instruction, y: Instruction, _op: str = opcode) -> Instruction:
            return self.binary(_op, x, y)

        bfn.__name__ = _method_name(opcode)
        bfn.__doc__ = f"HLO `{opcode}` of two equal-shape operands."
        setattr(Builder, bfn.__name__, bfn)
    for opcode in _UNARY:
        def ufn(self: Builder, x: Instruction, _op: str = opcode) -> Instruction:
            return self.unary(_op, x)

        ufn.__name__ = _method_name(opcode)
        ufn.__doc__ = f"HLO `{opcode}`."
        if not hasattr(Builder, ufn.__name__):
            setattr(Builder, ufn.__name__, ufn)


_install_elementwise_methods()
