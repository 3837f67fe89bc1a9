"""LLVM as a JIT for this host: target, optimization, object code, loading, disk cache.

Input: LLVM IR text. Output: object code (what the disk cache stores) and, loaded, an MCJIT
engine with the entry's address. llvm_target.py holds the host target (CPU name and
features), parse/verify/optimize/emit/load with LLVM errors turned into `CpuCompileError`;
compile_effort.py chooses how hard LLVM works per module; disk_cache.py keys object code by
the HLO text, options, Ember's compiler sources, LLVM version and host, written atomically
and checksummed. LLVM initializes lazily, on the first compile.
"""
