"""ember/live_signatures.py: a process-wide LRU bound on the signatures jitted functions
keep (EMBER_JIT_CACHE_SIZE). Run in a child process: a small bound drops the signatures of
every jitted function in the process, those of other tests included."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PROGRAM = """
import gc, json
import numpy as np
import ember
from ember import live_signatures as ls

out = {}
f = ember.jit(lambda x: x + 1.0)
g = ember.jit(lambda x: x * 2.0)
a, b, c, d = (np.ones(n, np.float32) for n in (1, 2, 3, 4))
f(a); f(b); f(c)                     # three signatures: the bound
out["live3"] = ls.live()
f(a)                                 # a slow-path hit: `a` becomes the most recent
f(d)                                 # a fourth: the least recently used, `b`, goes
out["after_d"] = [f._cache_size(), ls.live(), ls.STATS["dropped"]]
traces = f.trace_count
f(a); f(c)                           # still cached: no trace
out["kept_traced"] = f.trace_count - traces
from ember.config import config
from ember.explain.cache_miss import explain_cache_miss
_, _, tree, _, avals, static = f.flatten_call((b,), {})
out["why"] = explain_cache_miss(f, (tree, avals, static, config.trace_context(), ()),
                                list(f._cache))
f(b)                                 # dropped: traced again, right answer
out["b_traced"] = f.trace_count - traces
out["b_value"] = float(f(b)[1])
# a hot fast path survives other functions' new signatures
h = ember.jit(lambda x: x - 1.0)
x = ember.numpy.ones(5, ember.numpy.float32)
h(x); h(x)                           # the second call installs the fast path
for n in (6, 7, 8):
    g(np.ones(n, np.float32))
out["hot_kept"] = h._cache_size() == 1 and h._fast is not None
traces = h.trace_count
for _ in range(3):
    h(x)
out["hot_traced"] = h.trace_count - traces
# a dead function's signatures stop counting; clear_cache removes them too
del f
gc.collect()
out["after_del"] = [ls.live(), g._cache_size() + h._cache_size(), len(ls._FNS)]
g.clear_cache()
out["after_clear"] = ls.live() == h._cache_size()
print(json.dumps(out))
"""


def test_the_least_recently_used_signature_is_dropped():
    env = dict(os.environ, EMBER_JIT_CACHE_SIZE="3", EMBER_CACHE_DIR="off",
               EMBER_ENABLE_CHECKS="0")
    run = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["live3"] == 3
    assert out["after_d"] == [3, 3, 1]
    assert out["kept_traced"] == 0 and out["b_traced"] == 1 and out["b_value"] == 2.0
    assert "compiled before, then dropped" in out["why"] and "EMBER_JIT_CACHE_SIZE (3)" in \
        out["why"], out["why"]
    assert out["hot_kept"] and out["hot_traced"] == 0
    live, cached, functions = out["after_del"]
    assert live == cached and functions == 2 and out["after_clear"]
