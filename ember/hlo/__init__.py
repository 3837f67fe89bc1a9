"""Ember's HLO: shapes, the opcode table, the mutable graph IR, builder, printer, parser,
verifier. This package never imports the frontend (core, prims, lax, numpy, api).
"""

from ember.hlo.builder import Builder
from ember.hlo.cost_analysis import cost_analysis, cost_breakdown
from ember.hlo.ir import Computation, Instruction, Module
from ember.hlo.opcodes import OPCODES, OpInfo
from ember.hlo.parser import HloParseError, parse_module, parse_shape
from ember.hlo.printer import canonical_text, print_module
from ember.hlo.shape import Shape, element_type_from_numpy, numpy_dtype
from ember.hlo.shape_inference import ShapeError, infer_shape
from ember.hlo.verifier import VerificationError, verify

__all__ = [
    "OPCODES", "Builder", "Computation", "HloParseError", "Instruction", "Module", "OpInfo",
    "Shape", "ShapeError", "VerificationError", "canonical_text", "cost_analysis", "cost_breakdown",
    "element_type_from_numpy",
    "infer_shape", "numpy_dtype", "parse_module", "parse_shape", "print_module", "verify",
]
