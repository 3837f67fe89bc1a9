"""Whether object code was built for this host's architecture, read from its header.

Input: object code bytes (what `llvm_target.emit_object` returns). Output:
`foreign_reason(obj)` -> None when the container format (ELF, Mach-O or COFF, as this
operating system uses) and the machine field match this host's architecture, else a
sentence saying what the object is.

Why: LLVM's JIT links an object of any architecture it knows without complaint (an
aarch64, riscv64, i686 or Windows object loads on an x86-64 Linux host, and calling it runs
another machine's instructions). The disk cache's key already holds the target triple, CPU
and features, so another machine's entry is never looked up; this check guards the rest:
an entry whose header, key and checksum are right but whose code is not this host's (a
writer's bug, a cache folder copied by hand) is rejected, never executed.
Invariants: no LLVM needed (plain header bytes, ~1 us); an architecture this table does
not know is not checked (None), so a new host is never locked out of its cache. Objects of
the same architecture for another CPU (AVX-512 code on an AVX2 host) cannot be told apart
here: the cache key's CPU name and features keep them apart.
"""

from __future__ import annotations

import os
import struct
import sys

# host architecture (platform.machine(), lower case) -> (ELF e_machine, Mach-O cputype,
# COFF Machine)
_MACHINES = {
    "x86_64": (62, 0x01000007, 0x8664), "amd64": (62, 0x01000007, 0x8664),
    "aarch64": (183, 0x0100000C, 0xAA64), "arm64": (183, 0x0100000C, 0xAA64),
    "riscv64": (243, None, None), "ppc64le": (21, None, None), "s390x": (22, None, None),
}
_ELF_MAGIC = b"\x7fELF"
_MACHO_MAGIC_64 = b"\xcf\xfa\xed\xfe"  # MH_MAGIC_64, little-endian


def foreign_reason(obj: bytes, machine: str | None = None,
                   system: str | None = None) -> str | None:
    """None if `obj` may be this host's object code; else why it is not. `machine` and
    `system` default to this host's (its machine name, sys.platform)."""
    arch = (machine or _host_machine()).lower()
    expected = _MACHINES.get(arch)
    if expected is None:
        return None

    system = system or sys.platform
    elf, macho, coff = expected
    if system.startswith("linux") or "bsd" in system:
        if obj[:4] != _ELF_MAGIC or len(obj) < 20:
            return f"not an ELF object (starts {obj[:4]!r})"
        if obj[4] != 2:
            return "a 32-bit ELF object on a 64-bit host"
        endian = "<" if obj[5] == 1 else ">"
        (got,) = struct.unpack(endian + "H", obj[18:20])
        return None if got == elf else f"an ELF object for machine {got}, not {elf} ({arch})"
    if system == "darwin" and macho is not None:
        if obj[:4] != _MACHO_MAGIC_64 or len(obj) < 8:
            return f"not a 64-bit Mach-O object (starts {obj[:4]!r})"
        (got,) = struct.unpack("<i", obj[4:8])
        return None if got == macho else f"a Mach-O object for CPU {got:#x}, not {macho:#x}"
    if system == "win32" and coff is not None:
        if len(obj) < 2:
            return "too short for a COFF object"
        (got,) = struct.unpack("<H", obj[:2])
        return None if got == coff else f"a COFF object for machine {got:#x}, not {coff:#x}"
    return None


def _host_machine() -> str:
    """platform.machine() without importing platform (a warm first call avoids imports)."""
    if hasattr(os, "uname"):
        return os.uname().machine
    import platform

    return platform.machine()
