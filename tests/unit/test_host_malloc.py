"""`import ember` sets glibc's malloc thresholds so freed MB-sized blocks are reused.

Counted in page faults (getrusage), not time: a fresh process frees one mmapped 4 MB block
(glibc then adapts its thresholds to 4 MB mmap / 8 MB trim) and allocates and frees four
4 MB arrays per round. With glibc's adaptive defaults the heap's top (16 MB free) is given
back to the kernel after every round, so each round faults half the pages in again; with
Ember's settings none.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
    reason="glibc's mallopt only")

PROGRAM = r"""
import resource
import numpy as np
import ember
from ember import host_malloc

z = np.ones(1 << 20, np.float32)
del z  # a freed mmapped block: glibc's adaptive thresholds rise to 4 MB / 8 MB

def round_():
    arrays = [np.ones(1 << 20, np.float32) for _ in range(4)]
    return sum(float(a[0]) for a in arrays)

round_()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    round_()
faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10
print(faults, sorted(host_malloc.TUNED.items()))
"""


def _run(tuning: str) -> tuple[float, str]:
    env = dict(os.environ, EMBER_MALLOC_TUNING=tuning)
    out = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout.split(maxsplit=1)
    return float(out[0]), out[1].strip()


def test_freed_blocks_are_reused_not_faulted_in_again():
    default_faults, untouched = _run("0")
    assert untouched == "[]"
    if default_faults < 500:
        pytest.skip(f"this C library kept the heap ({default_faults} faults per round "
                    "with its defaults): nothing to compare")
    faults, tuned = _run("1")
    assert tuned == "[('mmap_threshold', 33554432), ('trim_threshold', 134217728)]"
    # 4 arrays x 1024 pages each round; a few faults may come from Python's own memory
    assert faults < 50, (faults, default_faults)


def test_tune_is_idempotent():
    from ember import host_malloc

    first = dict(host_malloc.tune())
    assert host_malloc.tune() == first
