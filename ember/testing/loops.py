"""Random loop programs: nested `fori_loop`/`while_loop`/`scan` updating their carries.

Input: a NumPy `Generator`. Output: a `programs.Program` (both sources, as programs.py).
Each program has two or three carries of one 2-D shape and dtype (float32 or int32), and
one to three nested loops; every loop body updates carries with `.at[]` on a row, a
column, a single element, a static slice of rows or a slice of one row, at positions
computed from the loop index, with values read from the carries as the previous
iteration left them (`p0`, `p1`, ...) or as this iteration has updated them (`x0`, ...).
Invariants: every dynamic position is reduced into range with `%`, so JAX's clamping and
NumPy's indexing agree; float values stay bounded (tanh, halving), int ones wrap as both do.
"""

from __future__ import annotations

import numpy as np

from .programs import Program, render


class LoopGen:
    """Builds one loop program; `lines` holds (ember, twin) source pairs."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.lines: list[tuple[str, str]] = []
        self.n, self.m = (int(rng.choice([1, 2, 3, 5])) for _ in range(2))
        self.dtype = str(rng.choice(["float32", "int32"]))
        self.ncarry = int(rng.integers(2, 4))
        self.depth_left = int(rng.integers(1, 4))
        self.count = 0
        self.row: str | None = None  # a scan's current row of a0, while its body is written

    def ri(self, lo: int, hi: int) -> int:
        """A random int in [lo, hi)."""
        return int(self.rng.integers(lo, hi))

    def emit(self, e: str, n: str | None, indent: int) -> None:
        """A line for both sources."""
        pad = "    " * indent
        self.lines.append((pad + render(e, "e"), pad + render(e if n is None else n, "n")))

    def where(self, i: str) -> tuple[str, str]:
        """A random in-range index kind at loop index `i`: (index text, kind)."""
        n, m = self.n, self.m
        o, p = self.ri(0, 4), self.ri(1, 3)
        r = self.rng.random()
        if r < 0.3:
            return f"({i} + {o}) % {n}", "row"
        if r < 0.55:
            return f":, ({i} + {o}) % {m}", "col"
        if r < 0.75:
            return f"({i} + {o}) % {n}, ({i} * {p}) % {m}", "elem"
        a = self.ri(0, n)
        b = self.ri(a, n + 1)
        if r < 0.87:
            return f"{a}:{b}", f"rows{b - a}"
        a = self.ri(0, m)
        b = self.ri(a, m + 1)
        return f"({i} + {o}) % {n}, {a}:{b}", f"rowpart{b - a}"

    def same_kind(self, i: str, kind: str) -> str:
        """Another index of the same kind (so the value read has the updated part's shape)."""
        while True:
            idx, k = self.where(i)
            if k == kind:
                return idx

    def value(self, i: str, kind: str) -> str:
        """A value of the updated part's shape read from a carry, transformed."""
        src = f"{self.rng.choice(['p', 'x'])}{self.ri(0, self.ncarry)}"
        read = f"{src}[{self.same_kind(i, kind)}]"
        if self.row is not None and kind == "row" and self.rng.random() < 0.6:
            read = f"({read} + {self.row})"
        if self.dtype == "float32":
            return str(self.rng.choice([f"M.tanh({read})", f"({read} * 0.5 + 1.0)",
                                        f"-{read}", f"({read} - 0.25)"]))
        return str(self.rng.choice([f"({read} * 3 + 1)", f"({read} ^ 5)", f"-{read}",
                                    f"({read} + {i})"]))

    def body(self, name: str, i: str, indent: int, row: str | None = None) -> None:
        """`def name(i, carry)` (or `(i, carry, row)`) returning the updated carries."""
        names = [f"x{j}" for j in range(self.ncarry)]
        prev = [f"p{j}" for j in range(self.ncarry)]
        self.emit(f"def {name}({i}, carry{', ' + row if row else ''}):", None, indent)
        self.emit(f"{', '.join(prev)}, = carry", None, indent + 1)
        self.emit(f"{', '.join(names)}, = carry", None, indent + 1)
        if self.depth_left > 0 and self.rng.random() < 0.7:
            inner = self.loop(f"({', '.join(names)},)", indent + 1, outer=i)
            self.emit(f"{', '.join(names)}, = {inner}", None, indent + 1)
        for _ in range(self.ri(1, 4)):
            t = self.ri(0, self.ncarry)
            idx, kind = self.where(i)
            op = str(self.rng.choice(["set", "add", "set", "max"]))
            v = self.value(i, kind)
            self.emit(f"x{t} = x{t}.at[{idx}].{op}({v})",
                      f"x{t} = _h.at(x{t}, np.s_[{idx}], '{op}', {render(v, 'n')})",
                      indent + 1)
        self.emit(f"return ({', '.join(names)},)", None, indent + 1)

    def loop(self, init: str, indent: int, outer: str | None = None) -> str:
        """Define a loop's body at `indent`; the expression running it on `init` (a while
        loop inside another loop runs a number of times that depends on `outer`'s index)."""
        self.depth_left -= 1
        self.count += 1
        k = self.count
        kind = str(self.rng.choice(["fori", "while", "scan"]))
        i = f"i{k}"
        over_rows = kind == "scan" and self.rng.random() < 0.5
        saved, self.row = self.row, (f"r{k}" if over_rows else self.row)
        self.body(f"body{k}", i, indent, f"r{k}" if over_rows else None)
        self.row = saved
        t = self.ri(0 if kind != "scan" else 1, 5)
        if kind == "fori":
            # at the top, sometimes a trip count known only at run time (k is traced)
            trips = "k % 4" if outer is None and self.rng.random() < 0.3 else t
            return f"L.fori_loop(0, {trips}, body{k}, {init})"
        if kind == "while":
            self.emit(f"def step{k}(s):", None, indent)
            self.emit(f"return (s[0] + 1,) + tuple(body{k}(s[0], s[1:]))", None, indent + 1)
            bound = f"{outer} % 3 + {t}" if outer is not None and self.rng.random() < 0.5 else t
            return f"L.while_loop(lambda s: s[0] < {bound}, step{k}, (0,) + {init})[1:]"
        if over_rows:  # xs: (index, row of a0) pairs; the body reads the row
            self.emit(f"def step{k}(c, xs):", None, indent)
            self.emit(f"c = body{k}(xs[0], c, xs[1])", None, indent + 1)
            self.emit("return c, c[0][0]", None, indent + 1)
            return (f"L.scan(step{k}, {init}, (M.arange({self.n}, dtype=M.int32), a0))[0]")
        self.emit(f"def step{k}(c, j):", None, indent)
        self.emit(f"c = body{k}(j, c)", None, indent + 1)
        self.emit("return c, c[0][0]", None, indent + 1)
        return f"L.scan(step{k}, {init}, M.arange({t}, dtype=M.int32))[0]"


def generate_loop(rng: np.random.Generator, seed: int = 0) -> Program:
    """One random loop program (see the module docstring)."""
    g = LoopGen(rng)
    args = [f"a{j}" for j in range(g.ncarry)]
    out = g.loop(f"({', '.join(args)},)", 1)
    g.emit(f"return tuple({out})", None, 1)
    params = ", ".join(args + ["k"])
    src = "\n".join([f"def f({params}):"] + [e for e, _ in g.lines])
    twin = "\n".join([f"def f({params}):"] + [n for _, n in g.lines])
    inputs = [([g.n, g.m], g.dtype)] * g.ncarry
    return Program(src, twin, inputs, seed, False, True)
