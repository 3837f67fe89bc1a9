"""The disk cache: a warm cache makes a fresh process run no LLVM optimization or code
generation; corrupt or foreign files are ignored, never loaded; keys separate constants."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

from ember.backends import cpu
from ember.backends.cpu.jit import disk_cache
from ember.hlo import Builder, Shape

PROGRAM = """
import json, numpy as np
from ember.backends import cpu
from ember.hlo import Builder, Shape
b = Builder("f")
x = b.parameter(Shape("f32", (1000,)))
m = b.build(b.add(b.sine(x), b.broadcast(b.scalar(0.5, "f32"), (1000,), ())))
exe = cpu.compile(m)
v = np.linspace(-3, 3, 1000).astype(np.float32)
s = cpu.cache_stats()
print(json.dumps({"sum": float(exe(v).astype(np.float64).sum()), "from_disk": exe.from_disk,
                  "optimize_runs": s["optimize_runs"], "codegen_runs": s["codegen_runs"],
                  "rejected": s["disk_rejected"], "kernels": exe.kernel_names}))
"""


def _run(cache: str) -> dict:
    # checks off: the differential check would evaluate sin with the interpreter, whose
    # eager math kernel (cpu/runtime/eager_math.py) is LLVM work and a cache entry of its own
    env = dict(os.environ, EMBER_CACHE_DIR=cache, EMBER_ENABLE_CHECKS="0")
    out = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _executables(folder, monkeypatch) -> list:
    """The cache files of executables in `folder`: not those of libraries (the thread
    pool, the GEMM library: meta "what"), which a fresh process also stores there."""
    monkeypatch.setenv("EMBER_CACHE_DIR", str(folder))
    out = []
    for f in sorted(folder.glob("*.o")):
        entry = disk_cache.load_lazy(f.stem)
        if entry is None or "what" not in entry.meta:
            out.append(f)
    return out


def test_warm_cache_skips_llvm_in_a_fresh_process(tmp_path, monkeypatch):
    cold = _run(str(tmp_path))
    assert not cold["from_disk"] and cold["codegen_runs"] == 1
    files = _executables(tmp_path, monkeypatch)
    assert len(files) == 1 and not list(tmp_path.glob("*.tmp"))
    warm = _run(str(tmp_path))
    assert warm["from_disk"]
    assert warm["optimize_runs"] == 0 and warm["codegen_runs"] == 0
    assert warm["sum"] == cold["sum"] and warm["kernels"] == cold["kernels"]


def test_corrupt_and_foreign_files_are_ignored(tmp_path, monkeypatch):
    cold = _run(str(tmp_path))
    (entry,) = _executables(tmp_path, monkeypatch)
    data = bytearray(entry.read_bytes())
    data[-10] ^= 0xFF  # inside the compressed body: the checksum no longer matches
    entry.write_bytes(bytes(data))
    again = _run(str(tmp_path))
    assert not again["from_disk"] and again["rejected"] == 1 and again["sum"] == cold["sum"]
    entry.write_bytes(b"\x7fELF not ours at all")  # a foreign file under the right name
    again = _run(str(tmp_path))
    assert not again["from_disk"] and again["rejected"] == 1 and again["sum"] == cold["sum"]


POOL_PROGRAM = """
import json, numpy as np, ember
from ember.backends import cpu
from ember.backends.cpu.runtime import pool
from ember.backends.cpu.jit import disk_cache
from ember.backends.cpu.jit import llvm_target
llvm_target.target()
library = dict(disk_cache.STATS)
cpu.set_num_threads(2)
x = np.arange(1 << 20, dtype=np.float32)
y = np.asarray(ember.jit(lambda v: v * 2 + 1)(x))
print(json.dumps({"installed": pool.installed(), "hits": library["disk_hits"],
                  "writes": library["disk_writes"], "regions": pool.stats()["regions"],
                  "right": bool(np.array_equal(y, x * 2 + 1))}))
"""


def test_thread_pool_code_is_generated_once_per_cache(tmp_path):
    """The pool's object code (~9 ms of code generation) is stored by the first process
    and loaded by the next, which runs parallel kernels with it all the same."""
    env = dict(os.environ, EMBER_CACHE_DIR=str(tmp_path), EMBER_ENABLE_CHECKS="0")

    def run() -> dict:
        out = subprocess.run([sys.executable, "-c", POOL_PROGRAM], env=env,
                             capture_output=True, text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    cold, warm = run(), run()
    assert cold["installed"] and cold["writes"] == 1 and cold["hits"] == 0
    assert warm["installed"] and warm["writes"] == 0 and warm["hits"] == 1
    assert cold["right"] and warm["right"] and warm["regions"] >= 1


def _module(c: float):
    b = Builder("g")
    x = b.parameter(Shape("f32", (300,)))
    k = b.constant(np.full(300, c, np.float32))
    return b.build(b.multiply(x, k))


def test_in_process_reload_and_constant_keys(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    cpu.clear_cache()
    a = cpu.compile(_module(2.0))
    b = cpu.compile(_module(3.0))  # differs only in a large constant's bytes
    # two program entries (a process's first compile may also store a library: the
    # thread pool's object, whose meta says "what")
    programs = [f for f in tmp_path.glob("*.o") if "what" not in disk_cache.load_lazy(f.stem).meta]
    assert len(programs) == 2
    cpu.clear_cache()
    before = cpu.cache_stats()
    a2 = cpu.compile(_module(2.0))
    assert a2.from_disk and a2 is not a
    assert cpu.cache_stats()["codegen_runs"] == before["codegen_runs"]
    x = np.arange(300, dtype=np.float32)
    np.testing.assert_array_equal(a2(x), x * 2)
    np.testing.assert_array_equal(b(x), x * 3)
    assert "fusion" in a2.as_text() or "multiply" in a2.as_text()  # module recomputed lazily


def test_cache_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", "off")
    assert disk_cache.cache_dir() is None
    monkeypatch.delenv("EMBER_CACHE_DIR")
    assert str(disk_cache.cache_dir()).endswith("ember")


# -- the source hash: stat-keyed memo --------------------------------------------------------


def _fake_sources(root):
    """A tree shaped like the ember package's compiler folders."""
    for rel, text in (("backends/cpu/emit.py", "A = 1\n"), ("backends/cpu/math/sin.py", "B\n"),
                      ("passes/fuse.py", "C = 3\n"), ("hlo/ir.py", "D = 4\n"),
                      ("codegen/elemental.py", "F = 5\n"),
                      ("backends/cpu/__pycache__/emit.cpython-311.pyc", "junk"),
                      ("lax/not_compiler.py", "E\n")):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def _bump(path, text):
    """Rewrite `path` and move its mtime on, as an editor's save does."""
    st = path.stat()
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))


def test_source_hash_memo_is_used_and_any_edit_changes_the_key(tmp_path, monkeypatch):
    root, memo = tmp_path / "ember", tmp_path / "cache"
    _fake_sources(root)
    first = disk_cache.sources_digest(root, memo)
    assert (memo / disk_cache.MEMO_NAME).read_text().split()[1] == first
    assert first == disk_cache.sources_digest(root, None)  # the memo changes no digest
    # a matching memo is trusted: the contents are not read again
    real_open = open

    def no_source_reads(path, *a, **k):
        assert not str(path).endswith(".py"), f"read {path}"
        return real_open(path, *a, **k)

    monkeypatch.setattr("builtins.open", no_source_reads)
    assert disk_cache.sources_digest(root, memo) == first
    monkeypatch.undo()
    # a same-size edit (the stat list differs by mtime only) changes the digest
    _bump(root / "passes/fuse.py", "C = 4\n")
    edited = disk_cache.sources_digest(root, memo)
    assert edited != first and edited == disk_cache.sources_digest(root, None)
    # so does a new file, in a nested folder; files outside the compiler folders do not
    (root / "hlo/extra").mkdir()
    (root / "hlo/extra/new.py").write_text("F\n")
    added = disk_cache.sources_digest(root, memo)
    assert added not in (first, edited)
    _bump(root / "lax/not_compiler.py", "G\n")
    assert disk_cache.sources_digest(root, memo) == added


def test_a_garbled_or_foreign_memo_is_recomputed(tmp_path):
    root, memo = tmp_path / "ember", tmp_path / "cache"
    _fake_sources(root)
    want = disk_cache.sources_digest(root, memo)
    stat_key = (memo / disk_cache.MEMO_NAME).read_text().split()[0]
    for text in ("", "garbage", f"{stat_key} {'0' * 63}", f"{stat_key} {'z' * 64}",
                 f"{'0' * 64} {'1' * 64}", f"{stat_key} {'1' * 64} extra"):
        (memo / disk_cache.MEMO_NAME).write_text(text)
        assert disk_cache.sources_digest(root, memo) == want
    # a stale memo (another checkout's stat list) is replaced by this tree's
    assert (memo / disk_cache.MEMO_NAME).read_text().split() == [stat_key, want]


def test_keys_with_the_cache_off_need_no_source_hash(monkeypatch):
    def boom() -> str:
        raise AssertionError("source hash computed with the disk cache off")

    monkeypatch.setattr(disk_cache, "source_hash", boom)
    monkeypatch.setenv("EMBER_CACHE_DIR", "off")
    a = disk_cache.make_key("HloModule m", "opts", "target")
    assert a != disk_cache.make_key("HloModule n", "opts", "target")
    assert a != disk_cache.make_key("HloModule m", "opts2", "target")


def test_a_warm_process_finds_its_entry_through_the_memo(tmp_path):
    cold = _run(str(tmp_path))
    warm = _run(str(tmp_path))
    assert not cold["from_disk"] and warm["from_disk"]
    stat_key, digest = (tmp_path / disk_cache.MEMO_NAME).read_text().split()
    assert len(stat_key) == 64 and len(digest) == 64


def test_an_edit_of_a_real_compiler_source_changes_the_digest(tmp_path):
    """On a copy of the package's compiler folders (the real ones are not touched: other
    tests run from them): the same bytes saved again keep the digest, an edit changes it."""
    import shutil
    from pathlib import Path

    pkg, src = Path(disk_cache.__file__).resolve().parents[3], tmp_path / "tree"
    for sub in disk_cache.SOURCE_DIRS:
        shutil.copytree(pkg / sub, src / sub, ignore=shutil.ignore_patterns("__pycache__"))
    kernels = src / "backends/cpu/emit/kernels.py"
    base = disk_cache.sources_digest(src, tmp_path / "m")
    _bump(kernels, kernels.read_text())
    assert disk_cache.sources_digest(src, tmp_path / "m") == base  # same bytes: same hash
    _bump(kernels, kernels.read_text() + "\n# edited\n")
    assert disk_cache.sources_digest(src, tmp_path / "m") != base


def test_cached_entry_builds_links_stores_then_loads(tmp_path, monkeypatch):
    """llvm_target.cached_entry (the eager math kernels' and the trampoline's loader): a
    miss builds and stores, a hit links the stored object, and a stored object that does
    not link is counted as rejected and rebuilt."""
    import ctypes

    from ember.backends.cpu.jit import llvm_target

    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    text = "define i64 @ember_test_seven() {\n  ret i64 7\n}\n"
    builds = []

    def build() -> bytes:
        builds.append(1)
        return llvm_target.emit_object(llvm_target.parse_and_verify(text))

    key = disk_cache.make_key(text, "cached-entry-test", llvm_target.target().key)

    def call(addr: int) -> int:
        return ctypes.CFUNCTYPE(ctypes.c_int64)(addr)()

    engine, addr, from_disk = llvm_target.cached_entry(key, "ember_test_seven", {}, build)
    assert (from_disk, len(builds), call(addr)) == (False, 1, 7)
    engine2, addr2, from_disk = llvm_target.cached_entry(key, "ember_test_seven", {}, build)
    assert (from_disk, len(builds), call(addr2)) == (True, 1, 7)
    # an entry (valid checksum) whose object code is not an object: rejected, rebuilt
    disk_cache.store(key, {}, b"", b"not an object file")
    rejected = disk_cache.STATS["disk_rejected"]
    engine3, addr3, from_disk = llvm_target.cached_entry(key, "ember_test_seven", {}, build)
    assert (from_disk, len(builds), call(addr3)) == (False, 2, 7)
    assert disk_cache.STATS["disk_rejected"] == rejected + 1
    assert llvm_target.cached_entry(key, "ember_test_seven", {}, build)[2] is True
    # a truncated object (LLVM cannot parse it: a null reference llvmlite would pass on
    # to the engine, a segfault before load_object checked it): rejected, rebuilt
    good = build()
    disk_cache.store(key, {}, b"", good[: len(good) // 2])
    assert llvm_target.cached_entry(key, "ember_test_seven", {}, build)[2] is False
    assert disk_cache.STATS["disk_rejected"] == rejected + 2


# -- bad caches in one child process: each entry variant is never executed, never crashes --

BAD_CACHE = """
import json, os, sys
import numpy as np
from ember.backends import cpu
from ember.backends.cpu.jit import disk_cache, llvm_target
from ember.backends.cpu.jit.object_format import foreign_reason
from ember.hlo import Builder, Shape

b = Builder("f")
x = b.parameter(Shape("f32", (64,)))
module = b.build(b.add(b.multiply(x, x), b.broadcast(b.scalar(0.5, "f32"), (64,), ())))
v = np.linspace(-2, 2, 64).astype(np.float32)
want = v * v + np.float32(0.5)
folder = os.environ["EMBER_CACHE_DIR"]

def compile_fresh():
    cpu.clear_cache()
    s0 = dict(disk_cache.STATS)
    exe = cpu.compile(module)
    right = bool(np.array_equal(exe(v), want))
    s1 = disk_cache.STATS
    return {"from_disk": exe.from_disk, "right": right,
            "rejected": s1["disk_rejected"] - s0["disk_rejected"],
            "writes": s1["disk_writes"] - s0["disk_writes"]}

out = {"cold": compile_fresh(), "warm": compile_fresh()}
programs = [f for f in os.listdir(folder) if f.endswith(".o")
            and "what" not in disk_cache.load_lazy(f[:-2]).meta]
(name,) = programs
path = os.path.join(folder, name)
good = open(path, "rb").read()
key = name[:-2]
entry = disk_cache.load_lazy(key)

def entry_bytes(obj):
    # a well-formed entry (right magic, key, checksum) holding `obj` as its object code
    disk_cache.store(key, dict(entry.meta), entry.consts, obj)
    data = open(path, "rb").read()
    return data

variants = {
    "empty": b"",
    "magic only": good[:len(disk_cache.MAGIC)],
    "header only": good[:len(disk_cache.MAGIC) + 128],
    "half": good[:len(good) // 2],
    "last byte cut": good[:-1],
    "flipped byte": good[:-10] + bytes([good[-10] ^ 0xFF]) + good[-9:],
    "other program's entry": None,       # a valid entry of another key, renamed
    "truncated object, valid checksum": entry_bytes(entry.obj[:len(entry.obj) // 2]),
    "aarch64 object, valid checksum": None,
}
b2 = Builder("g")
y = b2.parameter(Shape("f32", (3,)))
other = cpu.compile(b2.build(b2.negate(y)))
others = [f for f in os.listdir(folder) if f.endswith(".o") and f != name
          and "what" not in disk_cache.load_lazy(f[:-2]).meta]
variants["other program's entry"] = open(os.path.join(folder, others[0]), "rb").read()
llvm = llvm_target.target().llvm
llvm.initialize_all_targets()
llvm.initialize_all_asmprinters()
m = llvm.parse_assembly("define i64 @ember_entry() {\\n  ret i64 7\\n}\\n")
m.triple = "aarch64-unknown-linux-gnu"
arm = bytes(llvm.Target.from_triple(m.triple).create_target_machine().emit_object(m))
out["arm_reason"] = foreign_reason(arm)
variants["aarch64 object, valid checksum"] = entry_bytes(arm)
for label, data in variants.items():
    with open(path, "wb") as f:
        f.write(data)
    out[label] = compile_fresh()
    with open(path, "wb") as f:   # the entry itself is rewritten by the recompile
        f.write(good)
print(json.dumps(out))
"""


def test_bad_entries_are_rejected_and_recompiled(tmp_path):
    """Truncated (empty, magic only, header only, half, one byte short), corrupt (a byte
    flipped), another program's entry under this key's name, and well-formed entries (right
    magic, key, checksum) whose object code is cut in half or built for aarch64: each is
    rejected, counted, and the program compiled afresh gives the right answer; none is
    executed, and the process does not crash (it is a child: a crash fails the test)."""
    env = dict(os.environ, EMBER_CACHE_DIR=str(tmp_path), EMBER_ENABLE_CHECKS="0")
    run = subprocess.run([sys.executable, "-c", BAD_CACHE], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    cold = out["cold"]  # (a first compile may also store a library: the thread pool's)
    assert not cold["from_disk"] and cold["right"] and cold["rejected"] == 0 \
        and cold["writes"] >= 1
    assert out["warm"] == {"from_disk": True, "right": True, "rejected": 0, "writes": 0}
    assert out.pop("arm_reason").startswith("an ELF object for machine 183")
    for label, got in out.items():
        if label in ("cold", "warm"):
            continue
        assert got["right"] and not got["from_disk"], (label, got)
        # the empty file is a miss only when open() finds nothing; a file of 0 bytes is
        # read and fails the magic: rejected like the rest
        assert got["rejected"] == 1 and got["writes"] == 1, (label, got)


OTHER_BUILDS = """
import json, os
import numpy as np
from ember.backends import cpu
from ember.backends.cpu.jit import disk_cache, llvm_target
from ember.hlo import Builder, Shape

b = Builder("f")
x = b.parameter(Shape("f32", (64,)))
module = b.build(b.subtract(b.multiply(x, x), x))
v = np.linspace(-2, 2, 64).astype(np.float32)
folder = os.environ["EMBER_CACHE_DIR"]
Target = type(llvm_target.target())
real_key, real_hash = Target.key, disk_cache.source_hash()

def compile_fresh():
    cpu.clear_cache()
    s0 = dict(disk_cache.STATS)
    exe = cpu.compile(module)
    return {"from_disk": exe.from_disk, "right": bool(np.array_equal(exe(v), v * v - v)),
            "rejected": disk_cache.STATS["disk_rejected"] - s0["disk_rejected"],
            "files": len([f for f in os.listdir(folder) if f.endswith(".o")])}

out = {}
# another Ember version: its compiler sources hash differently
disk_cache._SOURCE_HASH = "0" * 64
out["other version stores"] = compile_fresh()
disk_cache._SOURCE_HASH = real_hash
# another machine: another CPU name and features (here an AVX-512 host's)
Target.key = property(lambda self: real_key.fget(self).replace(self.cpu_name, "other-cpu")
                      + "+avx512f")
out["other machine stores"] = compile_fresh()
Target.key = real_key
out["this build"] = compile_fresh()
out["this build again"] = compile_fresh()
print(json.dumps(out))
"""


def test_other_versions_and_machines_entries_are_never_looked_up(tmp_path):
    """Entries another Ember version (another source hash) or another machine (another
    CPU or features) stored in the same folder are not this build's: it misses, compiles,
    stores its own, and finds that one next time."""
    env = dict(os.environ, EMBER_CACHE_DIR=str(tmp_path), EMBER_ENABLE_CHECKS="0")
    run = subprocess.run([sys.executable, "-c", OTHER_BUILDS], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    version, machine = out["other version stores"], out["other machine stores"]
    mine, again = out["this build"], out["this build again"]
    assert not version["from_disk"] and not machine["from_disk"] and not mine["from_disk"]
    assert machine["files"] == version["files"] + 1 and mine["files"] == machine["files"] + 1
    assert again["from_disk"] and again["files"] == mine["files"]
    assert all(r["right"] and r["rejected"] == 0 for r in out.values()), out


READ_ONLY = """
import json, os, stat
import numpy as np
from ember.backends import cpu
from ember.backends.cpu.jit import disk_cache
from ember.hlo import Builder, Shape

def module(c):
    b = Builder("f")
    x = b.parameter(Shape("f32", (32,)))
    return b.build(b.multiply(x, b.broadcast(b.scalar(c, "f32"), (32,), ())))

v = np.arange(32, dtype=np.float32)

def compile_fresh(c):
    cpu.clear_cache()
    s0 = dict(disk_cache.STATS)
    exe = cpu.compile(module(c))
    return {"from_disk": exe.from_disk, "right": bool(np.array_equal(exe(v), v * c)),
            "writes": disk_cache.STATS["disk_writes"] - s0["disk_writes"],
            "rejected": disk_cache.STATS["disk_rejected"] - s0["disk_rejected"]}

out = {"fill": compile_fresh(2.0)}
folder = os.environ["EMBER_CACHE_DIR"]
os.chmod(folder, stat.S_IRUSR | stat.S_IXUSR)      # read-only, entries in it
try:
    out["read-only hit"] = compile_fresh(2.0)
    out["read-only miss"] = compile_fresh(3.0)
finally:
    os.chmod(folder, stat.S_IRWXU)
# a cache folder that cannot exist (a path through a regular file): even root cannot
# write it
blocker = os.path.join(folder, "a-file")
open(blocker, "w").close()
os.environ["EMBER_CACHE_DIR"] = os.path.join(blocker, "cache")
out["unwritable miss"] = compile_fresh(4.0)
out["root"] = os.geteuid() == 0
print(json.dumps(out))
"""


def test_a_read_only_or_unwritable_cache_is_used_without_writes(tmp_path):
    """A read-only cache folder still serves its entries; a miss compiles and simply
    stores nothing (for root, whom permissions do not stop, the folder is written all the
    same); a cache path that cannot be created (below a regular file) stores nothing and
    raises nothing."""
    cache = tmp_path / "cache"
    env = dict(os.environ, EMBER_CACHE_DIR=str(cache), EMBER_ENABLE_CHECKS="0")
    run = subprocess.run([sys.executable, "-c", READ_ONLY], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["fill"]["writes"] >= 1 and not out["fill"]["from_disk"]
    assert out["read-only hit"]["from_disk"] and out["read-only hit"]["writes"] == 0
    miss = out["read-only miss"]
    assert not miss["from_disk"] and (out["root"] or miss["writes"] == 0)
    unwritable = out["unwritable miss"]
    assert not unwritable["from_disk"] and unwritable["writes"] == 0
    for k in ("fill", "read-only hit", "read-only miss", "unwritable miss"):
        assert out[k]["right"] and out[k]["rejected"] == 0, (k, out[k])


def test_object_headers_name_their_machine():
    """object_format.foreign_reason: this host's object code passes; another
    architecture's, another container format or a stub is named; an architecture the
    table does not know is not checked."""
    import struct

    from ember.backends.cpu.jit import llvm_target
    from ember.backends.cpu.jit.object_format import foreign_reason

    host = llvm_target.emit_object(llvm_target.parse_and_verify(
        "define i64 @f() {\n  ret i64 1\n}\n"))
    assert foreign_reason(host) is None
    elf = bytearray(host[:64]) if host[:4] == b"\x7fELF" else bytearray(
        b"\x7fELF\x02\x01\x01" + bytes(57))
    elf[18:20] = struct.pack("<H", 183)
    assert "machine 183" in foreign_reason(bytes(elf), machine="x86_64", system="linux")
    assert foreign_reason(bytes(elf), machine="aarch64", system="linux") is None
    elf[4] = 1
    assert "32-bit" in foreign_reason(bytes(elf), machine="aarch64", system="linux")
    assert "not an ELF" in foreign_reason(b"OBJ", machine="x86_64", system="linux")
    macho = b"\xcf\xfa\xed\xfe" + struct.pack("<i", 0x0100000C) + bytes(24)
    assert foreign_reason(macho, machine="arm64", system="darwin") is None
    assert "Mach-O" in foreign_reason(macho, machine="x86_64", system="darwin")
    coff = struct.pack("<H", 0x8664) + bytes(20)
    assert foreign_reason(coff, machine="AMD64", system="win32") is None
    assert "COFF" in foreign_reason(coff, machine="ARM64", system="win32")
    assert foreign_reason(b"anything", machine="mips", system="linux") is None
