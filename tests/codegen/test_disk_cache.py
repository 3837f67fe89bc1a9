"""The disk cache: a warm cache makes a fresh process run no LLVM optimization or code
generation; corrupt or foreign files are ignored, never loaded; keys separate constants."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

from ember.backends import cpu
from ember.backends.cpu import disk_cache
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
    # eager math kernel (cpu/eager_math.py) is LLVM work and a cache entry of its own
    env = dict(os.environ, EMBER_CACHE_DIR=cache, EMBER_ENABLE_CHECKS="0")
    out = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_warm_cache_skips_llvm_in_a_fresh_process(tmp_path):
    cold = _run(str(tmp_path))
    assert not cold["from_disk"] and cold["codegen_runs"] == 1
    files = list(tmp_path.glob("*.o"))
    assert len(files) == 1 and not list(tmp_path.glob("*.tmp"))
    warm = _run(str(tmp_path))
    assert warm["from_disk"]
    assert warm["optimize_runs"] == 0 and warm["codegen_runs"] == 0
    assert warm["sum"] == cold["sum"] and warm["kernels"] == cold["kernels"]


def test_corrupt_and_foreign_files_are_ignored(tmp_path):
    cold = _run(str(tmp_path))
    (entry,) = tmp_path.glob("*.o")
    data = bytearray(entry.read_bytes())
    data[-10] ^= 0xFF  # inside the compressed body: the checksum no longer matches
    entry.write_bytes(bytes(data))
    again = _run(str(tmp_path))
    assert not again["from_disk"] and again["rejected"] == 1 and again["sum"] == cold["sum"]
    entry.write_bytes(b"\x7fELF not ours at all")  # a foreign file under the right name
    again = _run(str(tmp_path))
    assert not again["from_disk"] and again["rejected"] == 1 and again["sum"] == cold["sum"]


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
    assert len(list(tmp_path.glob("*.o"))) == 2
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
