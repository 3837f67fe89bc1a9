"""Fusions replaced by Ember's Mosaic kernels: `tpu_custom_call` instructions in the module
handed to the TPU compiler.

Input: an optimized module of the TPU pipeline (fused; a clone the caller owns) and the
kernel choice (`ember_tpu_kernels`: auto | ember | xla). Output: the module, rewritten in
place, and the `Kernel`s now in it (in the order of the module's instructions); fusions
without a kernel stay (legalize.py turns them into calls, and XLA fuses them again).

The rewrite of one fusion (shape D, 2-D view R x C):
  %y = D fusion(%a, %s), calls=%f
  =>
  %a2 = [R,C] reshape(%a)   %s2 = [1,1] reshape(%s)     (operands seen as their windows)
  %k  = [R,C] custom-call(%a2, %s2), custom_call_target="tpu_custom_call",
          backend_config={"custom_call_config": {"body": <base64 of the kernel text>,
                                                 "cost_estimate": {...},
                                                 "needs_layout_passes": true}}
  %y  = D reshape(%k)
(reshapes that change nothing are left out.) In the text XLA is given (`pin_layouts`) the
call's operands and result are pinned to row-major layouts (`operand_layout_constraints`,
`{1,0}` on the result), as the kernel indexes its blocks row-major: XLA would otherwise be
free to choose a layout for them. The TPU compiler runs Mosaic on the body
(`needs_layout_passes`: Mosaic infers the vector layouts itself) and schedules the call
with the rest of the module.

`auto` uses Ember's kernel where issue 20's measurements on the v5e found it faster than
XLA's fusions: row kernels that reduce a row more than once or broadcast a row value back
over the row (softmax, layernorm, logsumexp, variance: a row softmax took 0.43 ms against
XLA's 0.79 ms, which reads the input about three times). A single reduction with nothing
after it and elementwise kernels only match XLA's time (measured for `a*sin(x)+b`), so
`auto` leaves them to XLA; `ember` takes every kernel Ember can generate, `xla` none.
"""

from __future__ import annotations

import base64
import json
import re

from ember.backends.tpu.kernels import Kernel, NoKernel, generate, kind_of
from ember.hlo.builder import Builder
from ember.hlo.ir import Instruction, Module
from ember.hlo.shape import Shape

TARGET = "tpu_custom_call"
CHOICES = ("auto", "ember", "xla")
AUTO_KINDS = frozenset({"row"})


def backend_config(kernel_text: str, cost: dict[str, float] | None = None) -> str:
    """The custom call's backend_config: the kernel's text in base64, layout passes on,
    and the fusion's cost (XLA's cost model schedules the call by it, as it would the
    fusion: flops, transcendentals, bytes accessed)."""
    body = base64.b64encode(kernel_text.encode()).decode("ascii")
    config: dict[str, object] = {"body": body}
    if cost is not None:
        config["cost_estimate"] = {
            "flops": int(cost.get("flops", 0)),
            "transcendentals": int(cost.get("transcendentals", 0)),
            "bytes_accessed": int(cost.get("bytes accessed", 0)),
            "remote_bytes_transferred": 0}
    config["needs_layout_passes"] = True
    return json.dumps({"custom_call_config": config})


def kernel_text(config: str) -> str:
    """The Mosaic text inside a `backend_config` (the inverse of `backend_config`)."""
    return base64.b64decode(json.loads(config)["custom_call_config"]["body"]).decode()


def wanted(kind: str, choice: str) -> bool:
    """Whether `choice` (ember_tpu_kernels) may put fusions of `kind` on Ember's kernels
    (`auto` then asks `worth_it` of the kernel)."""
    if choice not in CHOICES:
        raise ValueError(f"ember_tpu_kernels must be one of {', '.join(CHOICES)}, "
                         f"got {choice!r}")
    return choice == "ember" or (choice == "auto" and kind in AUTO_KINDS)


def worth_it(kernel: Kernel) -> bool:
    """`auto`'s test of a row kernel: it saves XLA's extra passes over the rows (two
    reductions or more, or a row value broadcast back into a full-shape result)."""
    return kernel.reductions >= 2 or kernel.result.level == "full"


def replace_fusions(module: Module, choice: str = "auto") -> list[Kernel]:
    """Replace (in place) each fusion that `choice` puts on Ember's kernels and that has
    one; the kernels, in order. `module.tpu_refusals` lists (fusion, reason) of the others."""
    kernels: list[Kernel] = []
    refusals: list[tuple[str, str]] = []
    names: set[str] = set()
    for comp in list(module.computations):
        if comp.is_fusion_computation:
            continue
        for inst in list(comp.post_order()):
            if inst.opcode != "fusion" or not wanted(kind_of(inst), choice):
                continue
            name = _unique(inst.name or "fusion", names)
            try:
                kernel = generate(inst, name)
            except NoKernel as e:
                refusals.append((inst.name or "fusion", str(e)))
                continue
            if choice == "auto" and not worth_it(kernel):
                refusals.append((inst.name or "fusion", "auto: one reduction, XLA's is as "
                                 "fast"))
                continue
            _replace(comp, inst, kernel)
            kernels.append(kernel)
    if kernels:
        module.remove_dead_computations()
    module.tpu_refusals = refusals  # type: ignore[attr-defined]
    return kernels


def _unique(name: str, names: set[str]) -> str:
    base, k = name.replace(".", "_").replace("-", "_"), 0
    out = base
    while out in names:
        k += 1
        out = f"{base}_{k}"
    names.add(out)
    return out


def _replace(comp, fusion: Instruction, kernel: Kernel) -> None:
    from ember.hlo.cost_analysis import instruction_cost

    cost = instruction_cost(fusion)
    b = Builder(comp.name)
    b.computation = comp  # (add to `comp` itself)
    b.set_metadata(**fusion.metadata)
    operands = []
    for win in kernel.windows[:-1]:
        x = fusion.operands[win.operand]
        operands.append(x if x.shape.dimensions == win.dims else b.reshape(x, win.dims))
    out = kernel.result
    call = b.custom_call(TARGET, operands, Shape(fusion.shape.element_type, out.dims),
                         backend_config(kernel.text, cost))
    new = call if out.dims == fusion.shape.dimensions else b.reshape(
        call, fusion.shape.dimensions)
    comp.replace_instruction(fusion, new)


_CALL = re.compile(r'= (\w+)\[(\d+),(\d+)\] custom-call\((.*?)custom_call_target="' + TARGET
                   + r'", backend_config="((?:[^"\\]|\\.)*)"')


def pin_layouts(text: str, kernels: list[Kernel]) -> str:
    """HLO text with each kernel call's operands and result pinned row-major."""
    by_text = {k.text: k for k in kernels}

    def pin(m: re.Match[str]) -> str:
        config = json.loads('"' + m.group(5) + '"')
        kernel = by_text[kernel_text(config)]
        operands = ", ".join(f"{w.element_type}[{w.dims[0]},{w.dims[1]}]{{1,0}}"
                             for w in kernel.windows[:-1])
        return (f"= {m.group(1)}[{m.group(2)},{m.group(3)}]{{1,0}} custom-call("
                f'{m.group(4)}custom_call_target="{TARGET}", '
                f"operand_layout_constraints={{{operands}}}, "
                f'backend_config="{m.group(5)}"')

    return _CALL.sub(pin, text)
