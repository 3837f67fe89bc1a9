"""A NumPy evaluator of the Mosaic kernels Ember generates (ember/backends/tpu/kernels.py),
so the tests check what the kernels compute, not only that they verify, without a chip.

Input: a kernel's text (the subset Ember writes: one kernel function, its window index
maps, and the arith/math/vector ops of mosaic_text.py) and the operands as their 2-D
windows' arrays. Output: the result's 2-D array. The grid runs step by step: each window's
block is cut out at its index map's block index (a partial last block is padded, and its
padding dropped on the store), the body runs on the blocks, the result block is stored.

Arithmetic: f32 ops in float32 (math functions evaluated in float64 and rounded: a
reference a few ulps from any real implementation), integers as int32 with two's-complement
wrap-around (the unsigned ops view them as uint32), i1 as bool. Anything outside the subset
raises, so a kernel the generator changes shape of fails here rather than passing unread.
"""

from __future__ import annotations

import math
import re
from typing import Any

import ml_dtypes
import numpy as np

_TYPES = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "i32": np.int32, "i1": np.bool_}
_VEC = re.compile(r"vector<([0-9x]+)x(f32|bf16|i32|i1)>")
_MEMREF = re.compile(r"(%ref\d+): memref<(\d+)x(\d+)x(\w+), #tpu.memory_space<(\w+)>>")


def _literal(text: str, t: str) -> Any:
    if t == "f32":
        return np.array(int(text, 16), np.uint32).view(np.float32) if text.startswith("0x") \
            else np.float32(float(text))
    if t == "i1":
        return text == "true"
    return np.array(int(text)).astype(np.int32)


def _f64(fn):
    def op(x):
        with np.errstate(all="ignore"):
            return np.asarray(fn(x.astype(np.float64))).astype(np.float32)
    return op


_erf = np.vectorize(math.erf, otypes=[np.float64])
_U = np.uint32

_UNARY = {
    "arith.negf": np.negative, "math.absf": np.abs, "math.exp": _f64(np.exp),
    "math.exp2": _f64(np.exp2), "math.log": _f64(np.log), "math.log1p": _f64(np.log1p),
    "math.sqrt": _f64(np.sqrt), "math.rsqrt": _f64(lambda x: 1 / np.sqrt(x)),
    "math.tanh": _f64(np.tanh), "math.sin": _f64(np.sin), "math.cos": _f64(np.cos),
    "math.tan": _f64(np.tan), "math.floor": np.floor, "math.ceil": np.ceil,
    "math.erf": _f64(_erf), "math.roundeven": np.rint,
    "math.round": lambda x: (np.sign(x) * np.floor(np.abs(x) + np.float32(0.5))).astype(
        np.float32),
    "math.absi": lambda x: np.abs(x).astype(np.int32),
    "math.ctlz": lambda x: np.array([32 - int(v).bit_length() for v in x.view(_U).ravel()],
                                    np.int32).reshape(x.shape),
    "math.ctpop": lambda x: np.array([bin(int(v)).count("1") for v in x.view(_U).ravel()],
                                     np.int32).reshape(x.shape),
}


def _shift(fn):
    def op(a, b):  # (counts past the width are discarded by the kernel's select)
        return fn(a, (b.view(_U) & _U(31)).astype(np.int32))
    return op


_BINARY = {
    "arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply,
    "arith.divf": np.divide, "arith.maximumf": np.maximum, "arith.minimumf": np.minimum,
    "arith.remf": np.fmod,
    "arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply,
    "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor,
    "arith.maxsi": np.maximum, "arith.minsi": np.minimum,
    "arith.maxui": lambda a, b: np.maximum(a.view(_U), b.view(_U)).view(np.int32),
    "arith.minui": lambda a, b: np.minimum(a.view(_U), b.view(_U)).view(np.int32),
    "arith.shli": _shift(np.left_shift),
    "arith.shrsi": _shift(np.right_shift),
    "arith.shrui": _shift(lambda a, s: np.right_shift(a.view(_U), s.astype(_U)).view(
        np.int32)),
}
_CMP = {"oeq": np.equal, "une": np.not_equal, "olt": np.less, "ole": np.less_equal,
        "ogt": np.greater, "oge": np.greater_equal, "eq": np.equal, "ne": np.not_equal,
        "slt": np.less, "sle": np.less_equal, "sgt": np.greater, "sge": np.greater_equal}
_UCMP = {"ult": np.less, "ule": np.less_equal, "ugt": np.greater, "uge": np.greater_equal}
_REDUCE = {"add": np.sum, "mul": np.prod, "maximumf": np.max, "minimumf": np.min,
           "maxsi": np.max, "minsi": np.min, "and": np.all, "or": np.any}


def _binary(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        if op == "math.powf":  # (in float64, rounded: the reference)
            return np.power(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
        if op == "math.atan2":
            return np.arctan2(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
        out = _BINARY[op](a, b)
    return out.astype(a.dtype) if out.dtype != a.dtype and a.dtype != np.bool_ else out


def _vec_shape(type_text: str) -> tuple[tuple[int, ...], str]:
    m = _VEC.search(type_text)
    assert m, type_text
    return tuple(int(d) for d in m.group(1).split("x")), m.group(2)


def run(text: str, operands: list[np.ndarray], out_shape: tuple[int, int],
        out_type: Any) -> np.ndarray:
    """Evaluate kernel `text` on `operands` (their 2-D window arrays, in order)."""
    funcs = re.findall(r"func\.func @(\w+)\((.*?)\)( -> \(i32, i32\))? (?:attributes "
                       r"\{(.*?)\} )?\{\n(.*?)\n  \}", text, re.S)
    main = next(f for f in funcs if not f[2])
    maps = {name: re.search(r"return (\S+), (\S+) :", body).groups()
            for name, _, ret, _, body in funcs if ret}
    refs = _MEMREF.findall(main[1])
    attrs = main[3]
    bounds = [int(b) for b in re.search(r"iteration_bounds = array<i64: ([0-9, ]+)>",
                                        attrs).group(1).split(",")]
    windows = re.findall(r"transform_indices = @(\w+), window_bounds = array<i64: (\d+), "
                         r"(\d+)>", attrs)
    assert len(refs) == len(windows) == len(operands) + 1
    arrays = [np.asarray(a) for a in operands] + [np.zeros(out_shape, out_type)]
    body = main[4].splitlines()
    for step in np.ndindex(*bounds):
        grid = {"%i": step[0], "%j": step[1] if len(step) > 1 else 0, "%zero": 0}
        env: dict[str, Any] = {}
        cuts = []
        for (ref, br, bc, t, _), (fn, _, _), arr in zip(refs, windows, arrays,
                                                            strict=True):
            bi, bj = (grid[s] for s in maps[fn])
            r0, c0 = bi * int(br), bj * int(bc)
            block = np.zeros((int(br), int(bc)), _TYPES[t])
            part = arr[r0:r0 + int(br), c0:c0 + int(bc)]
            block[:part.shape[0], :part.shape[1]] = part
            env[ref] = block
            cuts.append((r0, c0, part.shape))
        _exec(body, env)
        r0, c0, shape = cuts[-1]
        arrays[-1][r0:r0 + shape[0], c0:c0 + shape[1]] = env[refs[-1][0]][:shape[0],
                                                                          :shape[1]]
    return arrays[-1]


def _exec(body: list[str], env: dict[str, Any]) -> None:
    for line in body:
        line = line.strip()
        if line == "return":
            return
        if line.startswith("vector.store"):
            m = re.match(r"vector.store (%\w+), (%\w+)\[", line)
            env[m.group(2)][...] = env[m.group(1)]
            continue
        name, rhs = line.split(" = ", 1)
        env[name] = _value(rhs, env)


def _value(rhs: str, env: dict[str, Any]) -> Any:
    op = rhs.split(" ", 1)[0]
    args = re.findall(r"%\w+", rhs.split(" : ")[0])
    vals = [env[a] for a in args if a in env]
    if op == "arith.constant":
        if rhs.endswith(": index") or rhs.endswith(": i32"):
            return 0
        lit = re.search(r"dense<([^>]+)>", rhs).group(1)
        shape, t = _vec_shape(rhs)
        return np.full(shape, _literal(lit, t), _TYPES[t])
    if op == "memref.load":
        return env[args[0]][0, 0]
    if op == "vector.load":
        return env[args[0]].copy()
    if op == "vector.broadcast":
        shape, t = _vec_shape(rhs.split(" to ")[1])
        return np.broadcast_to(vals[0], shape).astype(_TYPES[t])
    if op == "vector.shape_cast":
        shape, _ = _vec_shape(rhs.split(" to ")[1])
        return vals[0].reshape(shape)
    if op == "vector.multi_reduction":
        kind = re.search(r"<(\w+)>", rhs).group(1)
        data, acc = vals
        with np.errstate(all="ignore"):
            red = _REDUCE[kind](data, axis=1).astype(data.dtype)
            return _BINARY[{"add": "arith.addf" if data.dtype.kind == "f" else "arith.addi",
                            "mul": "arith.mulf", "maximumf": "arith.maximumf",
                            "minimumf": "arith.minimumf", "maxsi": "arith.maxsi",
                            "minsi": "arith.minsi"}[kind]](red, acc)
    if op in ("arith.cmpf", "arith.cmpi"):
        pred = rhs.split(" ")[1].rstrip(",")
        a, b = vals
        if pred in _UCMP:
            return _UCMP[pred](a.view(_U), b.view(_U))
        return _CMP[pred](a, b)
    if op == "arith.select":
        return np.where(*vals)
    if op in ("arith.extf", "arith.truncf", "arith.sitofp", "arith.uitofp", "arith.extui"):
        _, t = _vec_shape(rhs.split(" to ")[1])
        x = vals[0].view(_U) if op == "arith.uitofp" and vals[0].dtype == np.int32 else vals[0]
        return x.astype(_TYPES[t])
    if op in _UNARY and len(vals) == 1:
        with np.errstate(all="ignore"):
            return _UNARY[op](vals[0])
    if (op in _BINARY or op in ("math.powf", "math.atan2")) and len(vals) == 2:
        return _binary(op, *vals)
    raise NotImplementedError(f"mosaic_eval: {rhs}")
