"""The kernels of a CPU executable, one record each: HLO, source lines, cost, LLVM IR, asm.

Input: an `Executable` of this backend (its optimized module, kernel names, LLVM IR) and,
optionally, the optimized module whose names and source lines to report.
Output: `kernels(exe, module)` -> [KernelInfo] in the order the entry point runs them (what
`Executable.kernels()` returns, and through it `ember.api.Compiled.kernels()`, the
EMBER_DEBUG log and ember.explain's reports); `split_llvm_functions(ir)` and
`split_asm_functions(asm)` cut whole-module text into functions by symbol name.
Invariants: kernel `k` of HLO instruction `%name` is the LLVM function `@ember_<name>`
(characters other than `[A-Za-z0-9_.]` replaced by `_`), plus `@ember_<name>.chunk`, what
the thread pool calls, when the kernel is split across threads (see emitter.py), and
`@ember_<name>.precise`, the out-of-line precise copy a kernel with fast sin/cos reruns
when an argument was out of the fast range (kernels.py, `with_precise_rerun`); a kernel's
source lines are the distinct (file, line) of its operations' HLO metadata, in order of
first appearance in the fused computation. The backend reports here what it built; how it
is shown is ember.explain's business (ember/explain/kernels.py re-exports these names).
"""

from __future__ import annotations

import linecache
import re
from dataclasses import dataclass, field
from typing import Any

from ember.hlo.ir import Computation, Instruction

KERNEL_PREFIX = "ember_"  # ModuleEmitter's prefix in compiler.py
_DEFINE = re.compile(r'^define\b[^@]*@"?([^"(\s]+)"?\(')
_SIZE = re.compile(r'^\s*\.size\s+"?([^",\s]+)"?\s*,')


# A kernel's LLVM functions: itself, the thread pool's entry, its precise copy (see above).
KERNEL_FUNCTION_SUFFIXES = ("", ".chunk", ".precise")


def kernel_functions(sym: str) -> tuple[str, ...]:
    """The names of every LLVM function of the kernel whose function is `sym`."""
    return tuple(sym + suffix for suffix in KERNEL_FUNCTION_SUFFIXES)


def kernel_symbol(name: str) -> str:
    """The LLVM function name of the kernel computing HLO instruction `name`."""
    return KERNEL_PREFIX + re.sub(r"[^A-Za-z0-9_.]", "_", name)


def split_llvm_functions(text: str) -> dict[str, str]:
    """LLVM IR text -> {function name: its `define ... { ... }` text}."""
    out: dict[str, str] = {}
    current: str | None = None
    buf: list[str] = []
    for line in text.splitlines():
        if current is None:
            m = _DEFINE.match(line)
            if m:
                current, buf = m.group(1), [line]
            continue
        buf.append(line)
        if line == "}":
            out[current] = "\n".join(buf)
            current = None
    return out


def split_asm_functions(text: str) -> dict[str, str]:
    """Assembly text -> {symbol: its text}: each function's chunk runs from the end of the
    previous function (so it includes its constant pools) to its `.size` directive."""
    out: dict[str, str] = {}
    buf: list[str] = []
    for line in text.splitlines():
        buf.append(line)
        m = _SIZE.match(line)
        if m:
            out[m.group(1)] = "\n".join(buf)
            buf = []
    return out


@dataclass(frozen=True)
class SourceLine:
    file: str
    line: int
    ops: tuple[str, ...]  # the primitives at that line (`sin`, `mul`)

    @property
    def text(self) -> str:
        """The line of the user's file, stripped ('' when the file cannot be read)."""
        return linecache.getline(self.file, self.line).strip()

    def __str__(self) -> str:
        src = self.text
        return f"{self.file}:{self.line} ({', '.join(self.ops)})" + (f": {src}" if src else "")


def source_lines(instructions: list[Instruction]) -> list[SourceLine]:
    """Distinct (file, line) of the instructions' metadata, in first-appearance order."""
    ops: dict[tuple[str, int], list[str]] = {}
    for inst in instructions:
        md = inst.metadata
        f, n = md.get("source_file"), md.get("source_line")
        if not f or n is None:
            continue
        prim = str(md.get("op_name", inst.opcode)).rsplit("/", 1)[-1]
        names = ops.setdefault((str(f), int(n)), [])
        if prim not in names:
            names.append(prim)
    return [SourceLine(f, n, tuple(p)) for (f, n), p in ops.items()]


def kernel_instructions(inst: Instruction) -> list[Instruction]:
    """The operations a kernel computes (a fusion's fused instructions, else itself)."""
    if inst.opcode == "fusion":
        comp: Computation = inst.fused_computation
        return [i for i in comp.post_order() if i.opcode != "parameter"]
    return [inst]


def kernel_kind(inst: Instruction) -> str:
    """The fusion kind (`kLoop`, `kInput`: a reduction, `kOutput`: a dot and its epilogue),
    `row` (softmax-style row fusion), or the opcode of a lone op."""
    if inst.opcode != "fusion":
        return inst.opcode
    from ember.backends.cpu.emit.rows import is_row_fusion

    if is_row_fusion(inst.fused_computation):
        return "row"
    return str(inst.attrs.get("kind", "kLoop"))


@dataclass
class KernelInfo:
    """One kernel of a compiled executable."""

    name: str                    # the HLO instruction it computes (`fusion.3`)
    kind: str                    # kLoop | kInput | kOutput | row | the opcode of a lone op
    instruction: Instruction     # in the executable's optimized module
    cost: dict[str, float]       # XLA cost keys: flops, transcendentals, bytes accessed
    parallel: bool               # split across threads (large enough to win)
    llvm_ir: str                 # the kernel's optimized LLVM functions
    source_lines: list[SourceLine] = field(default_factory=list)
    _asm: Any = None             # the executable's assembly, shared (_AsmOnce)
    _symbol: str = ""            # the kernel's LLVM function in the executable

    @property
    def hlo(self) -> str:
        """The fused computation (or the lone instruction) as HLO text."""
        return kernel_hlo(self.instruction)

    @property
    def ops(self) -> list[str]:
        return [i.opcode for i in kernel_instructions(self.instruction)]

    @property
    def asm(self) -> str:
        """The kernel's assembly (generated on first access: it costs a code generation,
        shared by the kernels of one `kernels()` call)."""
        funcs = self._asm.functions()
        sym = self._symbol or kernel_symbol(self.name)
        return "\n".join(t for s, t in funcs.items() if s in kernel_functions(sym))


def kernel_hlo(inst: Instruction) -> str:
    """HLO text of what a kernel computes: its fused computation, or the lone instruction."""
    from ember.hlo.printer import format_computation, format_instruction

    if inst.opcode == "fusion":
        comp = inst.fused_computation
        cnames = {c: c.name for c in _with_callees(comp)}
        return format_computation(comp, cnames, entry=False, mode="display")
    names = {i: i.name or "" for i in [inst, *inst.operands]}
    cnames = {c: c.name for c in inst.called_computations}
    return format_instruction(inst, names, cnames, mode="display")


def _with_callees(comp: Computation) -> list[Computation]:
    out = [comp]
    for inst in comp.instructions:
        for c in inst.called_computations:
            out += [x for x in _with_callees(c) if x not in out]
    return out


class _AsmOnce:
    """The executable's assembly, generated once and split into functions."""

    def __init__(self, exe: Any) -> None:
        self.exe = exe
        self._funcs: dict[str, str] | None = None

    def functions(self) -> dict[str, str]:
        if self._funcs is None:
            self._funcs = split_asm_functions(self.exe.assembly())
        return self._funcs


def kernels(exe: Any, module: Any = None) -> list[KernelInfo]:
    """The kernels of a CPU executable, in the order its entry point runs them.

    `module`: the optimized module whose metadata (source lines) to report; default the
    executable's own. Pass it whenever the executable may come from the compile cache:
    the cache is keyed by the canonical HLO, which leaves metadata out, so a cached
    executable's module carries the source lines of whichever program compiled it first.
    """
    from ember.hlo.cost_analysis import instruction_cost

    insts = _kernel_instructions(exe, module)
    funcs = split_llvm_functions(exe.llvm_ir)
    asm = _AsmOnce(exe)
    out = []
    for name, inst in zip(exe.kernel_names, insts):
        sym = kernel_symbol(exe.shared_kernels.get(name, name))  # (a shared body's function)
        ir_text = "\n\n".join(t for s, t in funcs.items() if s in kernel_functions(sym))
        out.append(KernelInfo(inst.name or name, kernel_kind(inst), inst,
                              instruction_cost(inst), name in exe.parallel_kernels, ir_text,
                              source_lines(kernel_instructions(inst)), asm, sym))
    return out


def _kernel_instructions(exe: Any, module: Any) -> list[Instruction]:
    """The instruction of each of `exe`'s kernels, taken from `module`. A cached executable
    may have been compiled from a program whose instructions were named differently (the
    cache key leaves names out), so another module's kernels are matched by position in
    the schedule, which the identical canonical text makes identical."""
    if module is None or module is exe.module:
        by_name = {i.name: i for c in exe.module.computations  # loop bodies too
                   if not c.is_fusion_computation for i in c.instructions}
        return [by_name[n] for n in exe.kernel_names]
    from ember.backends.cpu.plan.schedule import build_schedule

    scheduled = build_schedule(module).kernels
    if len(scheduled) != len(exe.kernel_names):  # not the same program after all
        return _kernel_instructions(exe, None)
    return scheduled
