"""`Compiled.memory_analysis()`: how many bytes a compiled program holds, in XLA's terms.

Input: a backend executable's sizes. Output: `CompiledMemoryStats`, named and printed as
jaxlib's: arguments (every entry parameter, hidden constants included), outputs,
temporaries (the scratch block buffer assignment packed), aliases (output bytes written
into donated parameters instead of fresh memory) and generated code. Host-side fields
exist for JAX compatibility and are 0 (everything here is host memory, reported in the
plain fields, as XLA's CPU backend does). `peak_memory_in_bytes` is arguments + outputs +
temporaries - aliases: everything live at once during a call.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class CompiledMemoryStats:
    generated_code_size_in_bytes: int = 0
    argument_size_in_bytes: int = 0
    output_size_in_bytes: int = 0
    alias_size_in_bytes: int = 0
    temp_size_in_bytes: int = 0
    host_generated_code_size_in_bytes: int = 0
    host_argument_size_in_bytes: int = 0
    host_output_size_in_bytes: int = 0
    host_alias_size_in_bytes: int = 0
    host_temp_size_in_bytes: int = 0
    buffer_assignment: str = ""  # the printed assignment (Ember's; not in XLA's repr)

    @property
    def peak_memory_in_bytes(self) -> int:
        return (self.argument_size_in_bytes + self.output_size_in_bytes
                + self.temp_size_in_bytes - self.alias_size_in_bytes)

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self)
                          if f.name != "buffer_assignment")
        return f"CompiledMemoryStats({shown})"

    __str__ = __repr__


__all__ = ["CompiledMemoryStats"]
