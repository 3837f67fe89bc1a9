"""Testing tools that ship with Ember: the differential fuzzer over whole user programs.

`programs.py` generates random programs written with `ember.numpy`/`ember.lax` calls, each
as two Python sources from one description (the Ember program and its NumPy twin, which
computes the reference with JAX's dtype rules); `loops.py` generates the loop family
(nested `fori_loop`/`while_loop`/`scan` with `.at[]` updates); `runner.py` runs batches of
them in child processes (eager, `jit`, `jit(backend="interpreter")`, NumPy) and compares;
`fuzz.py` is the command line (`python -m ember.testing.fuzz --minutes N --seed S`).
`mlp.py` is the small MLP and its loss that the gradient tests, the autodiff and vmap
benchmarks and examples/mlp_training.py share (built for any NumPy-like module).
Nothing in the package imports this folder.
"""
