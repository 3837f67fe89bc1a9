"""Whose source lines does an optimized module carry? (compile-cache hits across functions)

Input: an optimized module (possibly an executable's from the CPU compile cache) and the
lowered module of the function being compiled now. Output: `carries_metadata_of(optimized,
lowered)`: True when every source location in `optimized` comes from `lowered`.
Why: the CPU backend's compile caches key on the canonical HLO, which leaves names and
metadata out, so identical programs share one executable (as they should: same code). But
the executable's optimized module is the first program's: two functions with the same body
at different lines (or in different files) would show the first one's `op_name` and
`source_file:line` in `Compiled.as_text(debug_info=True)`, the EMBER_DEBUG log and dumps,
and the kernel reports. ember/compiler.py reruns the (deterministic) passes on this
function's own lowered module whenever this test fails, so the metadata users see always
belongs to the function they compiled, while the code is still shared.
How: passes only ever copy metadata from the instructions they replace (fusion, algebraic
simplification, constant folding, loop rewrites: each `dict(inst.metadata)`), so every
location of an optimized module is one of its lowered module's; a location that is not
proves the module was optimized from another program. Only the location keys are
compared (`op_name`, `source_file`, `source_line`); tags that tools add (`ember_origin`)
are not part of it.
Invariants: linear in the two modules' sizes; never mutates either. Here, beside the IR,
because the compile path decides with it (ember.explain re-exports it for its reports).
"""

from __future__ import annotations

from ember.hlo.ir import Module

LOCATION_KEYS = ("op_name", "source_file", "source_line")

Location = tuple  # (op_name, source_file, source_line), None where absent


def locations(module: Module) -> set[Location]:
    """The distinct source locations of every instruction of `module` (fused and called
    computations included); instructions without metadata are left out."""
    out: set[Location] = set()
    for comp in module.computations:
        for inst in comp.instructions:
            md = inst.metadata
            loc = tuple(md.get(k) for k in LOCATION_KEYS)
            if any(v is not None for v in loc):
                out.add(loc)
    return out


def carries_metadata_of(optimized: Module, lowered: Module) -> bool:
    """True when `optimized` could have been optimized from `lowered` as far as metadata
    can tell: same module name and no source location `lowered` does not have."""
    if optimized.name != lowered.name:
        return False
    return locations(optimized) <= locations(lowered)
