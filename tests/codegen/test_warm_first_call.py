"""The warm disk-cache hit path of `ember.jit` stays lean and behaves as a compile does.

A fresh process whose disk cache holds the program: its first call runs no LLVM
optimization or code generation, gives the bits a compiling process gives, imports none
of the code generator, the passes or the compile log, and still shows the LLVM IR and the
compile log on demand. Also the pieces the lean path is made of: the disk cache's lazily
decoded text section, the lazy `ember.passes` package, `lowering.module_name` without a
regex, RuntimeSpec as a plain class, and objects loaded without MCJIT's finalize_object.
(No timing here: benchmarks/run.py --first-call-only measures the milliseconds.)
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

from ember.backends.cpu.jit import disk_cache, llvm_target
from ember.backends.cpu.plan.runtime_spec import RuntimeSpec
from ember.lowering import module_name

# What the timed call of benchmarks/run.py --first-call-only does, plus what it imported.
PROGRAM = """
import json, sys, numpy as np, ember, ember.numpy as jnp
from ember.backends import cpu
from ember.backends.cpu.jit import llvm_target; llvm_target.target()
before = set(sys.modules)
s0 = dict(cpu.cache_stats())
x = np.linspace(-3, 3, {n}).astype(np.{dtype})
f = ember.jit(lambda x, a, b: a * jnp.sin(x) + b)
y = f(x, x * 0.5, x + 1)
new = sorted(set(sys.modules) - before)
s = cpu.cache_stats()
exe = f.lower(x, x, x).compile()
print(json.dumps({{
    "y": np.asarray(y).tobytes().hex(),
    "runs": sum(s[k] - s0[k] for k in ("optimize_runs", "codegen_runs")),
    "disk_hits": s["disk_hits"] - s0["disk_hits"], "new_modules": new,
    "ir_has_kernel": "define" in exe.llvm_ir(),
    "again": np.asarray(f(x, x * 0.5, x + 1)).tobytes().hex()}}))
"""

# Modules a warm hit must not import: the code generator, the passes (and their
# infrastructure), the compile log, and the fast-call trampoline (a first call never
# builds one). Checked on the modules the first call itself imported.
NOT_ON_A_HIT = ("ember.backends.cpu.emit.emitter", "ember.backends.cpu.plan.schedule",
                "ember.backends.cpu.emit.kernels", "ember.passes.base", "ember.passes.fusion",
                "ember.passes.dump", "ember.passes.observe", "ember.explain",
                "ember.explain.compile_log", "ember.backends.cpu.runtime.fastcall", "hashlib")


def _run(cache: str, n: int = 1000, dtype: str = "float32", **env: str) -> dict:
    # checks off: the differential check would evaluate sin with the interpreter, whose
    # eager math kernel is LLVM work and a cache entry of its own
    full = dict(os.environ, EMBER_CACHE_DIR=cache, EMBER_ENABLE_CHECKS="0", **env)
    for var in ("EMBER_DEBUG", "EMBER_DUMP_TO", "EMBER_DISABLE_PASSES", "JAX_ENABLE_X64"):
        if var not in env:
            full.pop(var, None)
    out = subprocess.run([sys.executable, "-c", PROGRAM.format(n=n, dtype=dtype)], env=full,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1]) | {"stderr": out.stderr}


@pytest.mark.parametrize("n,dtype", [(1000, "float32"), (33, "float64"), (1, "float32")])
def test_warm_hit_runs_no_llvm_imports_no_compiler_and_gives_the_same_bits(tmp_path, n,
                                                                          dtype):
    x64 = {"JAX_ENABLE_X64": "1"} if dtype == "float64" else {}
    cold = _run(str(tmp_path), n, dtype, **x64)
    assert cold["runs"] >= 2 and cold["disk_hits"] == 0
    warm = _run(str(tmp_path), n, dtype, **x64)
    assert warm["runs"] == 0 and warm["disk_hits"] == 1
    assert warm["y"] == cold["y"] == warm["again"]
    assert warm["ir_has_kernel"]  # the IR text section decodes on demand
    imported = set(warm["new_modules"])
    assert not imported & set(NOT_ON_A_HIT), sorted(imported & set(NOT_ON_A_HIT))
    # and against NumPy (sin within a few ulps of float64 NumPy)
    x = np.linspace(-3, 3, n).astype(dtype)
    y = np.frombuffer(bytes.fromhex(warm["y"]), dtype)
    np.testing.assert_allclose(y, (x * 0.5) * np.sin(x) + (x + 1), rtol=1e-6 if
                               dtype == "float32" else 1e-14, atol=1e-6)


def test_warm_hit_is_still_logged_and_dumps_bypass_the_cache(tmp_path):
    _run(str(tmp_path))
    logged = _run(str(tmp_path), EMBER_DEBUG="1")
    assert logged["runs"] == 0
    assert "cache: disk hit (no LLVM work)" in logged["stderr"], logged["stderr"]
    assert re.search(r"compiled jit\(<lambda>\).* trace [\d.]+ ms", logged["stderr"])
    dump = tmp_path / "dump"
    dumped = _run(str(tmp_path), EMBER_DUMP_TO=str(dump))
    assert dumped["runs"] >= 1  # while dumping, every pass and LLVM runs again
    assert any(p.name.endswith("after_optimizations.hlo.txt") for p in dump.iterdir())


def test_disabled_passes_still_key_the_cache(tmp_path):
    _run(str(tmp_path))
    other = _run(str(tmp_path), EMBER_DISABLE_PASSES="cse")
    assert other["runs"] >= 1 and other["disk_hits"] == 0  # a different key: compiled
    assert _run(str(tmp_path), EMBER_DISABLE_PASSES="cse")["runs"] == 0


# -- the disk cache's text section -------------------------------------------------------


def test_texts_are_stored_apart_and_decoded_on_first_use(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    key = "a" * 64
    texts = {"llvm_ir": "define void @f() {\n  ret void\n}\n" * 50, "unoptimized_ir": "é"}
    disk_cache.store(key, {"entry": "f", "n": [1, 2]}, b"\x01\x02", b"OBJ", texts=texts)
    entry = disk_cache.load_lazy(key)
    assert entry is not None
    assert entry.meta["entry"] == "f" and entry.meta["n"] == [1, 2]
    assert entry.consts == b"\x01\x02" and entry.obj == b"OBJ"
    assert "llvm_ir" not in entry.meta  # not decoded with the rest
    assert entry.texts() == texts and entry.texts() is entry.texts()
    meta, consts, obj = disk_cache.load(key)  # the eager form merges them
    assert meta["llvm_ir"] == texts["llvm_ir"] and (consts, obj) == (b"\x01\x02", b"OBJ")
    disk_cache.store("b" * 64, {"entry": "g"}, b"", b"OBJ")  # no texts at all
    assert disk_cache.load_lazy("b" * 64).texts() == {}


def test_a_corrupt_or_old_format_entry_is_rejected(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    key = "c" * 64
    disk_cache.store(key, {"entry": "f"}, b"", b"OBJ", texts={"llvm_ir": "x" * 1000})
    path = tmp_path / f"{key}.o"
    good = path.read_bytes()
    rejected = disk_cache.STATS["disk_rejected"]
    bad = bytearray(good)
    bad[-3] ^= 0xFF  # inside the text section: the checksum covers it too
    path.write_bytes(bytes(bad))
    assert disk_cache.load_lazy(key) is None
    # the previous format (one zlib body, IR inside the meta JSON) under its own magic
    m = json.dumps({"entry": "f", "const_bytes": 0}).encode()
    body = zlib.compress(struct.pack("<Q", len(m)) + m + b"OBJ", 1)
    old = (b"EMBER-CPU-OBJ-1\n" + key.encode()
           + disk_cache.sha256(body).hexdigest().encode() + body)
    path.write_bytes(old)
    assert disk_cache.load_lazy(key) is None
    # a body whose first section claims more bytes than there are
    body = struct.pack("<Q", 1 << 40) + b"junk"
    path.write_bytes(disk_cache.MAGIC + key.encode()
                     + disk_cache.sha256(body).hexdigest().encode() + body)
    assert disk_cache.load_lazy(key) is None
    assert disk_cache.STATS["disk_rejected"] == rejected + 3
    path.write_bytes(good)
    assert disk_cache.load_lazy(key) is not None


# -- the pieces --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["f", "<lambda>", "my.func", "a b-c", "héllo", "ǅx", "",
                                  "x1_Y2", "日本", "a\u00a0b", "tab\there", "😀"])
def test_module_name_replaces_what_the_old_regex_replaced(name):
    assert module_name(name) == "jit_" + re.sub(r"[^A-Za-z0-9_]", "_", name)


def test_the_passes_package_is_lazy_but_complete():
    code = ("import sys, os\n"
            "os.environ['EMBER_DISABLE_PASSES'] = ' cse, ,dce '\n"
            "import ember.passes as p\n"
            "assert 'ember.passes.base' not in sys.modules\n"
            "assert p.disabled_passes() == {'cse', 'dce'}\n"
            "from ember.passes import PassPipeline, Fix, HloPass, DeadCodeElimination\n"
            "from ember.passes.base import disabled_passes\n"
            "assert disabled_passes is p.disabled_passes\n"
            "assert issubclass(PassPipeline, HloPass) and issubclass(Fix, HloPass)\n"
            "assert p.hardware_independent_pipeline().passes\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "ok"


def test_runtime_spec_round_trips_and_keeps_its_defaults_apart():
    c = np.arange(12, dtype=np.float64).reshape(3, 4)
    spec = RuntimeSpec([("f32", (7,))], [("f32", (7,)), ("s32", ())], [c], 256,
                       [(1, "param", 0, ("f32", (7,)))], [None, None], "plan", 99, [(0, 0)])
    meta, data = spec.to_bytes()
    back = RuntimeSpec.from_bytes(json.loads(json.dumps(meta)), data)
    for field in ("params", "outputs", "scratch_bytes", "copy_outs", "root",
                  "buffer_assignment", "code_bytes", "aliases"):
        assert getattr(back, field) == getattr(spec, field), field
    np.testing.assert_array_equal(back.constants[0], c)
    assert back.slot_count == 1 + 2 + 1 + 1
    a = RuntimeSpec([], [], [], 0, [], None)
    b = RuntimeSpec([], [], [], 0, [], None)
    a.aliases.append((0, 0))
    assert b.aliases == [] and "RuntimeSpec(" in repr(a)
    with pytest.raises(ValueError):
        RuntimeSpec.from_bytes(meta, data + b"\0")


def test_loaded_objects_link_external_symbols_without_finalize(tmp_path):
    """load_object skips finalize_object; the entry lookup still resolves relocations,
    including a C library function the object calls (here `sin`)."""
    ir = """
declare double @sin(double)
define void @entry(ptr %t) {
  %p = load ptr, ptr %t
  %x = load double, ptr %p
  %y = call double @sin(double %x)
  store double %y, ptr %p
  ret void
}
"""
    llmod = llvm_target.parse_and_verify(ir)
    obj = llvm_target.emit_object(llmod)
    import ctypes

    for _ in range(2):  # twice: each engine links its own copy
        engine, addr = llvm_target.load_object(obj, "entry")
        v = np.array([0.5])
        table = (ctypes.c_void_p * 1)(v.ctypes.data)
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(addr)(table)
        assert v[0] == np.sin(0.5)
        del engine
