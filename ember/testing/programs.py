"""Random user-level programs: one description, two Python sources.

Input: a NumPy `Generator` and whether x64 is on. Output: a `Program` whose `source` is an
Ember function `f(a0, ..., k)` written with `jnp.*`, `lax.*`, `x.at[...]` calls (what a
failure report prints) and whose `twin` is the same program in NumPy (`np.*` and the
helpers of `twin.py` as `_h.*`), which computes the reference in JAX's dtypes.
Invariants: every line is rendered from one template for both sources (`M.` becomes
`jnp.`/`np.`, `L.` becomes `lax.`/`_h.`), so the two cannot drift; the generator tracks each
value's shape and dtype and only writes calls that are valid for them; it avoids what JAX
defines differently from NumPy rather than guessing (integer division and remainder get a
divisor in 1..8, shift counts are masked to 0..15, float-to-int conversions clip first,
dynamic indices are reduced into range, max/min never reduce an empty axis); operands of a
binary operation are brought to one dtype first, so NumPy's promotion and JAX's agree.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

MAX_SIZE = 600  # elements per value: keeps programs cheap to compile and run
FLOATS = ("float16", "float32", "float64")
INTS = ("int32", "uint32", "int64")

UNARY = {
    # sin/cos take |x| <= 20: at larger x a one-ulp difference in x (a transcendental or a
    # float sum before it) moves the result by more than any tolerance could allow
    "f": ["M.sin(M.clip({x}, -20.0, 20.0))", "M.cos(M.clip({x}, -20.0, 20.0))",
          "M.tanh({x})", "M.exp({x})", "M.log1p(M.abs({x}))",
          "M.sqrt(M.abs({x}))", "M.abs({x})", "-{x}", "M.floor({x})", "M.square({x})",
          "M.sign({x})", "M.expm1({x})", "({x} * 0.5 + 1.25)", "M.reciprocal({x})",
          "M.round({x})", "M.clip({x}, -2.0, 3.5)"],
    "i": ["-{x}", "M.abs({x})", "~{x}", "({x} * 3)", "({x} + 7)", "M.square({x})",
          "({x} >> 3)", "({x} << 2)", "M.clip({x}, 2, 40)"],
    "b": ["~{x}", "M.logical_not({x})"],
}
BINARY = {
    "f": ["({x} + {y})", "({x} - {y})", "({x} * {y})", "({x} / {y})", "M.maximum({x}, {y})",
          "M.minimum({x}, {y})", "M.where({x} > {y}, {x}, {y})"],
    "i": ["({x} + {y})", "({x} - {y})", "({x} * {y})", "M.maximum({x}, {y})",
          "M.minimum({x}, {y})", "({x} & {y})", "({x} | {y})", "({x} ^ {y})",
          "({x} // (({y} & 7) + 1))", "({x} % (({y} & 7) + 1))", "({x} >> ({y} & 15))"],
    "b": ["({x} & {y})", "({x} | {y})", "({x} ^ {y})", "M.logical_and({x}, {y})"],
}
COMPARE = ["<", "<=", "==", "!=", ">"]
# jnp functions whose NumPy namesake differs from JAX (twin.py has JAX's version)
TWIN_ONLY = ("sign",)


def kind(dtype: str) -> str:
    """'f', 'i' (signed or unsigned) or 'b'."""
    return "b" if dtype == "bool" else ("f" if dtype in FLOATS else "i")


@dataclasses.dataclass
class Val:
    """A value of the program: its variable name, shape and dtype."""

    name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def size(self) -> int:
        """Its number of elements."""
        return int(np.prod(self.shape, dtype=np.int64))


@dataclasses.dataclass
class Program:
    """A generated program: both sources, its inputs' shapes and dtypes, the seed of their
    values, whether x64 is on, and whether eager/jit/interpreter must agree bit for bit."""

    source: str
    twin: str
    inputs: list[tuple[tuple[int, ...], str]]
    seed: int
    x64: bool
    exact: bool

    def to_json(self) -> dict:
        """A JSON-serializable dict (for the child process)."""
        return dataclasses.asdict(self)


def render(template: str, flavor: str) -> str:
    """The template as Ember ('e') or NumPy-twin ('n') source."""
    if flavor == "e":
        return template.replace("M.", "jnp.").replace("L.", "lax.")
    for name in TWIN_ONLY:
        template = template.replace(f"M.{name}(", f"_h.{name}(")
    return template.replace("M.", "np.").replace("L.", "_h.")


def lit(dtype: str, rng: np.random.Generator, update: bool = False) -> str:
    """A Python literal that fits `dtype` (weakly typed in both JAX and NumPy 2); one that
    does not fit int32 only for uint32 `.at[]` values (`update`), where JAX takes it."""
    k = kind(dtype)
    if k == "f":
        return repr(float(rng.choice([0.5, -1.5, 2.0, 0.001, 3.0, -0.25])))
    if k == "b":
        return str(bool(rng.integers(2)))
    if dtype == "uint32":
        return str(int(rng.choice([0, 1, 5, 2**31 - 1] + ([2**32 - 1] if update else []))))
    return str(int(rng.choice([0, 1, -3, 11, 2**31 - 1, -(2**31)])))


def index_text(idx: list[str]) -> str:
    """`[a, b]` for a list of index strings (a trailing `...` kept)."""
    return "[" + ", ".join(idx) + "]" if idx else "[...]"


class Gen:
    """Builds one program; `lines` holds (ember, twin) source pairs."""

    def __init__(self, rng: np.random.Generator, x64: bool):
        self.rng, self.x64 = rng, x64
        self.lines: list[tuple[str, str]] = []
        self.vals: list[Val] = []
        self.count = 0
        self.exact = True
        self.dint = "int64" if x64 else "int32"

    # -- bookkeeping -------------------------------------------------------------------
    def emit(self, e: str, n: str | None = None, indent: int = 1) -> None:
        """A line for both sources (`n` when the twin spells it differently)."""
        pad = "    " * indent
        self.lines.append((pad + render(e, "e"), pad + render(n if n is not None else e, "n")))

    def new(self, expr: str, shape: tuple[int, ...], dtype: str, twin: str | None = None) -> Val:
        """Assign `expr` to a fresh variable of the given shape and dtype."""
        v = Val(f"v{self.count}", tuple(int(d) for d in shape), dtype)
        self.count += 1
        self.emit(f"{v.name} = {expr}", None if twin is None else f"{v.name} = {twin}")
        self.vals.append(v)
        return v

    def pick(self, pred=lambda v: True) -> Val | None:
        """A random value (recent ones more often) satisfying `pred`, or None."""
        cands = [v for v in self.vals if pred(v)]
        if not cands:
            return None
        w = np.arange(1, len(cands) + 1, dtype=np.float64)
        return cands[int(self.rng.choice(len(cands), p=w / w.sum()))]

    def ri(self, lo: int, hi: int) -> int:
        """A random int in [lo, hi)."""
        return int(self.rng.integers(lo, hi))

    def choice(self, seq: list) -> Any:
        """A random element."""
        return seq[int(self.rng.integers(len(seq)))]

    def acc_dtype(self, dtype: str) -> str:
        """The dtype of a sum, product or cumulative sum of `dtype`: bool and integers
        narrower than the default int become the default (unsigned) int, as in JAX."""
        if dtype == "bool" or (kind(dtype) == "i" and not dtype.startswith("u")):
            return self.dint
        if dtype.startswith("u"):
            return "uint64" if self.x64 else "uint32"
        return dtype

    # -- expressions ----------------------------------------------------------------------
    def cast(self, x: str, src: str, dst: str) -> str:
        """`x` (of dtype `src`) converted to `dst` without NumPy/JAX differences."""
        if src == dst:
            return x
        if dst == "bool":
            return f"({x} != 0)"
        if kind(src) == "f" and kind(dst) == "i":
            lo = 0 if dst.startswith("u") else -100
            return f"M.where(M.isnan({x}), 0, M.clip({x}, {lo}, 100)).astype(M.{dst})"
        return f"{x}.astype(M.{dst})"

    def unary(self, x: str, dtype: str, depth: int = 1) -> str:
        """An expression of `x` of the same shape and dtype (`depth` nested operations)."""
        for _ in range(depth):
            x = self.choice(UNARY[kind(dtype)]).format(x=x)
        return x

    # -- operations ------------------------------------------------------------------------
    def op_unary(self) -> None:
        x = self.pick()
        self.new(self.unary(x.name, x.dtype, self.ri(1, 3)), x.shape, x.dtype)

    def op_binary(self) -> None:
        x = self.pick()
        y = self.pick(lambda v: _bcast(v.shape, x.shape) is not None)
        if y is None or self.rng.random() < 0.15:
            other, shape = lit(x.dtype, self.rng), x.shape
        else:
            other, shape = self.cast(y.name, y.dtype, x.dtype), _bcast(y.shape, x.shape)
        if int(np.prod(shape)) > MAX_SIZE:
            return
        if self.rng.random() < 0.2 and x.dtype != "bool":
            self.new(f"({x.name} {self.choice(COMPARE)} {other})", shape, "bool")
        else:
            self.new(self.choice(BINARY[kind(x.dtype)]).format(x=x.name, y=other), shape,
                     x.dtype)

    def op_cast(self) -> None:
        x = self.pick()
        dts = ["bool", "int32", "uint32", "float32", "float16"] + (
            ["float64", "int64"] if self.x64 else [])
        dst = self.choice(dts)
        self.new(self.cast(x.name, x.dtype, dst), x.shape, dst)

    def op_where(self) -> None:
        x = self.pick()
        c = self.pick(lambda v: v.dtype == "bool" and _bcast(v.shape, x.shape) is not None)
        y = self.pick(lambda v: v.dtype == x.dtype and _bcast(v.shape, x.shape) is not None)
        cond = c.name if c is not None else f"({x.name} > {lit(x.dtype, self.rng)})"
        if x.dtype == "bool" and c is None:
            cond = x.name
        other = y.name if y is not None else lit(x.dtype, self.rng)
        shape = x.shape
        for v in (c, y):
            if v is not None and shape is not None:
                shape = _bcast(shape, v.shape)
        if shape is not None and int(np.prod(shape)) <= MAX_SIZE:
            self.new(f"M.where({cond}, {x.name}, {other})", shape, x.dtype)

    def op_reduce(self) -> None:
        x = self.pick()
        k = kind(x.dtype)
        hows = {"f": ["sum", "prod", "max", "min", "mean"], "i": ["sum", "prod", "max", "min"],
                "b": ["sum", "any", "all", "max"]}[k]
        how = self.choice(hows)
        nd = len(x.shape)
        r = self.rng.random()
        if nd == 0 or r < 0.2:
            axes: tuple[int, ...] | None = None
        elif r < 0.7 or nd == 1:
            axes = (self.ri(-nd, nd),)
        else:
            axes = tuple(sorted(set(int(a) for a in self.rng.choice(nd, 2, replace=False))))
        red = range(nd) if axes is None else [a % nd for a in axes]
        if how in ("max", "min") and any(x.shape[a] == 0 for a in red):
            how = "sum"
        keep = bool(self.rng.integers(2))
        shape = tuple(1 if i in red else d for i, d in enumerate(x.shape)) if keep else \
            tuple(d for i, d in enumerate(x.shape) if i not in red)
        if how in ("any", "all"):
            dt = "bool"
        elif how in ("max", "min"):
            dt = x.dtype
        else:
            dt = self.acc_dtype(x.dtype)
        if k == "f" and how in ("sum", "prod", "mean"):
            self.exact = False
        ax = "None" if axes is None else (str(axes[0]) if len(axes) == 1 else str(axes))
        self.new(f"M.{how}({x.name}, axis={ax}, keepdims={keep})", shape, dt,
                 twin=f"_h.reduce('{how}', {x.name}, {ax}, {keep}, '{dt}')")

    def op_reshape(self) -> None:
        x = self.pick()
        dims = [d for d in x.shape if d != 1]
        r = self.rng.random()
        if r < 0.3:
            shape: tuple[int, ...] = (x.size,)
        elif r < 0.6 and len(dims) >= 2:
            i = self.ri(0, len(dims) - 1)
            shape = tuple(dims[:i]) + (dims[i] * dims[i + 1],) + tuple(dims[i + 2:])
        else:
            dims = list(self.rng.permutation(dims)) if dims else []
            if len(dims) < 4:
                dims.insert(self.ri(0, len(dims) + 1), 1)
            shape = tuple(int(d) for d in dims)
        text = str(shape) if len(shape) != 1 else f"({shape[0]},)"
        if x.size > 0 and self.rng.random() < 0.3 and shape:
            i = self.ri(0, len(shape))
            text = "(" + ", ".join("-1" if j == i else str(d)
                                   for j, d in enumerate(shape)) + ("," if len(shape) == 1
                                                                    else "") + ")"
        self.new(f"{x.name}.reshape({text})", shape, x.dtype)

    def op_transpose(self) -> None:
        x = self.pick(lambda v: len(v.shape) >= 2)
        if x is None:
            return
        perm = tuple(int(p) for p in self.rng.permutation(len(x.shape)))
        if len(perm) == 2 and self.rng.random() < 0.5:
            self.new(f"{x.name}.T", x.shape[::-1], x.dtype)
        else:
            self.new(f"M.transpose({x.name}, {perm})", tuple(x.shape[p] for p in perm),
                     x.dtype)

    def _slice(self, n: int) -> tuple[str, int]:
        """A random static slice of an axis of length n, and its length."""
        step = self.choice([1, 1, 2, -1, 3, -2])
        a, b = self.ri(-n - 1, n + 2), self.ri(-n - 1, n + 2)
        text = f"{a}:{b}" + (f":{step}" if step != 1 else "")
        return text, len(range(n)[slice(a, b, step)])

    def op_slice(self) -> None:
        x = self.pick(lambda v: len(v.shape) >= 1)
        if x is None:
            return
        idx, shape = [], []
        for d in x.shape[: self.ri(1, len(x.shape) + 1)]:
            r = self.rng.random()
            if r < 0.2 and d > 0:
                i = self.ri(-d, d)
                idx.append(str(i))
            elif r < 0.3:
                idx.append(":")
                shape.append(d)
            else:
                t, m = self._slice(d)
                idx.append(t)
                shape.append(m)
        if self.rng.random() < 0.2:
            idx.insert(self.ri(0, len(idx) + 1), "None")
        shape = list(eval(f"_d{index_text(idx)}", {"_d": np.empty(x.shape, bool)}).shape)
        self.new(f"{x.name}{index_text(idx)}", tuple(shape), x.dtype)

    def op_dyn_index(self) -> None:
        x = self.pick(lambda v: len(v.shape) >= 1 and v.shape[0] > 0)
        if x is None:
            return
        n = x.shape[0]
        r = self.rng.random()
        if r < 0.4:
            self.new(f"{x.name}[k % {n}]", x.shape[1:], x.dtype)
        elif r < 0.6:
            self.new(f"{x.name}[k % {n} - {n}]", x.shape[1:], x.dtype)
        elif r < 0.8 and len(x.shape) >= 2 and x.shape[1] > 0:
            m = x.shape[1]
            self.new(f"{x.name}[:, k % {m}]", x.shape[:1] + x.shape[2:], x.dtype)
        else:
            s = self.ri(0, n + 1)
            ax = 0
            self.new(f"L.dynamic_slice_in_dim({x.name}, k % {n - s + 1}, {s}, {ax})",
                     (s,) + x.shape[1:], x.dtype)

    def op_at(self) -> None:
        x = self.pick(lambda v: len(v.shape) >= 1 and v.shape[0] > 0)
        if x is None:
            return
        n = x.shape[0]
        r = self.rng.random()
        if r < 0.35:
            idx, sub = f"k % {n}", x.shape[1:]
        elif r < 0.55 and len(x.shape) >= 2 and x.shape[1] > 0:
            idx, sub = f":, k % {x.shape[1]}", x.shape[:1] + x.shape[2:]
        elif r < 0.75:
            t, m = self._slice(n)
            idx, sub = t, (m,) + x.shape[1:]
        elif len(x.shape) >= 2:
            t, m = self._slice(x.shape[1])
            idx, sub = f"k % {n}, {t}", (m,) + x.shape[2:]
        else:
            idx, sub = f"k % {n} - {n}", ()
        ops = ["set"] if x.dtype == "bool" else ["set", "add", "multiply", "min", "max"]
        op = self.choice(ops)
        if self.rng.random() < 0.4:
            v = lit(x.dtype, self.rng, update=True)
        else:
            v = self.unary(f"{x.name}[{idx}]", x.dtype)
        del sub
        self.new(f"{x.name}.at[{idx}].{op}({v})", x.shape, x.dtype,
                 twin=f"_h.at({x.name}, np.s_[{idx}], '{op}', {render(v, 'n')})")

    def op_gather(self) -> None:
        """`x[iv % n]` with an integer array of indices (a gather), or `.at[iv % n].add`
        (a scatter whose duplicate indices accumulate)."""
        x = self.pick(lambda v: len(v.shape) >= 1 and v.shape[0] > 0)
        iv = self.pick(lambda v: kind(v.dtype) == "i" and 0 < len(v.shape) <= 2)
        if x is None or iv is None:
            return
        n, idx = x.shape[0], f"{iv.name} % {x.shape[0]}"
        shape = iv.shape + x.shape[1:]
        if int(np.prod(shape)) > MAX_SIZE:
            return
        if self.rng.random() < 0.5 or x.dtype == "bool":
            self.new(f"{x.name}[{idx}]", shape, x.dtype)
            return
        if kind(x.dtype) == "f":
            self.exact = False
        v = lit(x.dtype, self.rng)
        del n
        self.new(f"{x.name}.at[{idx}].add({v})", x.shape, x.dtype,
                 twin=f"_h.scatter_add({x.name}, {idx}, {v})")

    def op_dyn_update(self) -> None:
        x = self.pick(lambda v: len(v.shape) >= 1)
        if x is None:
            return
        ax = self.ri(0, len(x.shape))
        n = x.shape[ax]
        s = self.ri(0, n + 1)
        upd = self.unary(f"L.dynamic_slice_in_dim({x.name}, 0, {s}, {ax})", x.dtype)
        self.new(f"L.dynamic_update_slice_in_dim({x.name}, {upd}, k % {n - s + 1}, {ax})",
                 x.shape, x.dtype)

    def op_concat(self) -> None:
        x = self.pick(lambda v: len(v.shape) >= 1 and v.size * 2 <= MAX_SIZE)
        if x is None:
            return
        ax = self.ri(0, len(x.shape))
        t, m = self._slice(x.shape[ax])
        part = f"M.flip({x.name}, {ax})[{', '.join([':'] * ax + [t])}]"
        if self.rng.random() < 0.5:
            part = self.unary(part, x.dtype)
        shape = list(x.shape)
        shape[ax] += m
        if self.rng.random() < 0.3 and x.shape[ax] == m:
            shape = list(x.shape)
            shape.insert(ax, 2)
            self.new(f"M.stack([{x.name}, {part}], axis={ax})", tuple(shape), x.dtype)
        else:
            self.new(f"M.concatenate([{x.name}, {part}], axis={ax})", tuple(shape), x.dtype)

    def op_pad(self) -> None:
        x = self.pick(lambda v: len(v.shape) >= 1 and v.size * 3 <= MAX_SIZE)
        if x is None:
            return
        widths = [(self.ri(0, 3), self.ri(0, 3)) for _ in x.shape]
        shape = tuple(d + a + b for d, (a, b) in zip(x.shape, widths))
        w = "(" + ", ".join(f"({a}, {b})" for a, b in widths) + ("," if len(widths) == 1
                                                                   else "") + ")"
        extra = f", constant_values={lit(x.dtype, self.rng)}" if self.rng.random() < 0.5 else ""
        self.new(f"M.pad({x.name}, {w}{extra})", shape, x.dtype)

    def op_dot(self) -> None:
        x = self.pick(lambda v: len(v.shape) in (1, 2) and v.dtype != "bool")
        if x is None:
            return
        if len(x.shape) == 1:
            y, shape = self.unary(x.name, x.dtype), ()
        else:
            m, n = x.shape
            y = self.pick(lambda v: len(v.shape) == 2 and v.shape[0] == n
                          and v.dtype == x.dtype)
            if y is not None and m * y.shape[1] <= MAX_SIZE:
                y, shape = y.name, (m, y.shape[1])
            elif m * m <= MAX_SIZE:
                y, shape = f"{self.unary(x.name, x.dtype)}.T", (m, m)
            else:
                return
        if kind(x.dtype) == "f":
            self.exact = False
        e = f"M.dot({x.name}, {y})" if self.rng.random() < 0.5 else f"({x.name} @ {y})"
        self.new(e, shape, x.dtype, twin=f"_h.dot({x.name}, {render(y, 'n')}, '{x.dtype}')")

    def op_cumsum(self) -> None:
        x = self.pick(lambda v: len(v.shape) >= 1)
        if x is None:
            return
        ax = self.ri(-len(x.shape), len(x.shape))
        dt = self.acc_dtype(x.dtype)
        if kind(x.dtype) == "f":
            self.exact = False
        self.new(f"M.cumsum({x.name}, axis={ax})", x.shape, dt,
                 twin=f"_h.cumsum({x.name}, {ax}, '{dt}')")

    def op_sort(self) -> None:
        x = self.pick(lambda v: len(v.shape) >= 1)
        if x is None:
            return
        ax = self.ri(-len(x.shape), len(x.shape))
        self.new(f"M.sort({x.name}, axis={ax})", x.shape, x.dtype)

    def _step(self, c: str, dtype: str, i: str | None) -> str:
        """A loop body's new carry from carry `c` (and the int32 index `i`)."""
        e = self.unary(c, dtype, self.ri(1, 3))
        if i is None:
            return e
        if dtype == "bool":
            return f"({e} ^ ({i} % 2 == 0))"
        return f"({e} + ({i} % 3).astype(M.{dtype}))"

    def op_control(self) -> None:
        x = self.pick()
        which = self.choice(["cond", "switch", "fori", "while", "scan"])
        nm, dt = x.name, x.dtype
        if which == "cond":
            pred = f"M.any({nm})" if dt == "bool" else f"M.any({nm} > {lit(dt, self.rng)})"
            if self.rng.random() < 0.4:
                pred = "(k % 3 == 1)"
            self.new(f"L.cond({pred}, lambda c: {self._step('c', dt, None)}, "
                     f"lambda c: {self._step('c', dt, None)}, {nm})", x.shape, dt)
        elif which == "switch":
            branches = ", ".join(f"lambda c: {self._step('c', dt, None)}" for _ in range(3))
            self.new(f"L.switch(k % 4, [{branches}], {nm})", x.shape, dt)
        elif which == "fori":
            t = self.ri(0, 5)
            self.new(f"L.fori_loop(0, {t}, lambda i, c: {self._step('c', dt, 'i')}, {nm})",
                     x.shape, dt)
        elif which == "while":
            t = self.ri(0, 5)
            self.new(f"L.while_loop(lambda s: s[0] < {t}, lambda s: (s[0] + 1, "
                     f"{self._step('s[1]', dt, None)}), (0, {nm}))[1]", x.shape, dt)
        else:
            if not x.shape:
                return
            c_shape = x.shape[1:]
            init = f"{nm}[0]" if x.shape[0] > 0 else f"M.zeros({c_shape}, M.{dt})"
            comb = "^" if dt == "bool" else self.choice(["+", "-", "*"]) if kind(dt) != "b" \
                else "^"
            body = f"lambda c, r: (({self._step('c', dt, None)}) {comb} r, c)"
            v = Val(f"v{self.count}", c_shape, dt)
            w = Val(f"v{self.count + 1}", x.shape, dt)
            self.count += 2
            self.emit(f"{v.name}, {w.name} = L.scan({body}, {init}, {nm})")
            self.vals += [v, w]


def _bcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """NumPy's broadcast of two shapes, or None."""
    try:
        return tuple(int(d) for d in np.broadcast_shapes(a, b))
    except ValueError:
        return None


OPS = (["op_unary"] * 4 + ["op_binary"] * 5
       + ["op_cast", "op_where", "op_reduce", "op_reduce", "op_reshape", "op_transpose",
          "op_slice", "op_dyn_index", "op_at", "op_at", "op_gather", "op_dyn_update",
          "op_concat", "op_pad", "op_dot", "op_cumsum", "op_sort", "op_control",
          "op_control"])


def random_inputs(rng: np.random.Generator, x64: bool) -> list[tuple[tuple[int, ...], str]]:
    """One to three input shapes (sharing dimensions, so they broadcast) and dtypes."""
    rank = int(rng.integers(0, 4))
    base = [int(rng.choice([0, 1, 2, 3, 5, 7], p=[.05, .15, .2, .25, .2, .15]))
            for _ in range(rank)]
    dts = ["bool", "int32", "uint32", "float32", "float32", "float16"] + (
        ["float64", "float64", "int64"] if x64 else [])
    out = []
    for _ in range(int(rng.integers(1, 4))):
        shape = [d if rng.random() < 0.8 else 1 for d in base]
        shape = shape[int(rng.integers(0, len(shape) + 1)) if rng.random() < 0.3 else 0:]
        out.append((tuple(shape), str(rng.choice(dts))))
    return out


def generate(rng: np.random.Generator, x64: bool = False, seed: int = 0) -> Program:
    """One random program (see the module docstring)."""
    inputs = random_inputs(rng, x64)
    g = Gen(rng, x64)
    g.vals = [Val(f"a{i}", s, d) for i, (s, d) in enumerate(inputs)]
    for _ in range(int(rng.integers(3, 11))):
        getattr(g, g.choice(OPS))()
    outs = [v.name for v in g.vals[-3:]]
    if len(g.vals) > 3 and rng.random() < 0.5:
        outs.insert(0, g.vals[int(rng.integers(len(g.vals) - 3))].name)
    return _assemble(g, inputs, outs, seed)


def _assemble(g: Gen, inputs: list, outs: list[str], seed: int) -> Program:
    """Both sources of a finished generator."""
    params = ", ".join([f"a{i}" for i in range(len(inputs))] + ["k"])
    ret = "    return (" + ", ".join(outs) + ",)"
    src = "\n".join([f"def f({params}):"] + [e for e, _ in g.lines] + [ret])
    twin = "\n".join([f"def f({params}):"] + [n for _, n in g.lines] + [ret])
    return Program(src, twin, [(list(s), d) for s, d in inputs], seed, g.x64, g.exact)
