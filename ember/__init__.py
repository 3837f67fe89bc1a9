"""Ember: a JAX-style tracing JIT compiler for NumPy programs, built on LLVM.

`import ember as jax` gives `jit`, `make_jaxpr`, `eval_shape`, `Array`, `numpy`, `lax`,
`random`, `tree_util`, `config`, `device_put`, `devices`, `block_until_ready`, `ShapeDtypeStruct`,
`pure_callback`, `debug` (debug.print, debug.callback) and autodiff (`jvp`, `linearize`, `vjp`,
`grad`, `value_and_grad`, `jacfwd`, `jacrev`, `jacobian`, `hessian`, `linear_transpose`,
`float0`, `custom_jvp`, `custom_vjp`, `custom_gradient`, `checkpoint`/`remat` with
`checkpoint_policies`), `tree` and `ops` (as jax.tree and jax.ops), `device_get`,
`ensure_compile_time_eval` and `default_matmul_precision`.
Importing ember is cheap: it loads neither llvmlite nor scipy.
This package top, above both the compile pipeline and ember.explain, subscribes explain's
reports (compile log, dumps, cache-miss explanations) to the pipeline's events
(ember/compile_events.py): the pipeline itself never imports ember.explain.
"""

# Importing ember.numpy installs the operators and methods of Array and of tracers.
from ember import (
    checkpoint_policies,
    debug,
    errors,
    host_malloc,
    lax,
    numpy,
    random,
    tree_util,
)
from ember.ad_api import (
    float0,
    grad,
    jvp,
    linear_transpose,
    linearize,
    value_and_grad,
    vjp,
)
from ember.api import ShapeDtypeStruct, disable_jit, eval_shape, jit, make_jaxpr
from ember.array import Array, block_until_ready, device_put, devices
from ember.backends.cpu.runtime import eager_math as _cpu_math
from ember.callbacks import pure_callback
from ember.checkpoint_api import checkpoint, remat
from ember.config import config
from ember.custom_derivatives import custom_gradient, custom_jvp, custom_vjp
from ember.errors import ConcretizationTypeError
from ember.explain import observers as _explain_observers
from ember.hlo.evaluator import elementwise as _hlo_elementwise
from ember.jac_api import hessian, jacfwd, jacobian, jacrev
from ember.lax import stop_gradient
from ember.vmap_api import vmap

# Eager math, constant folding and the interpreter run the transcendental opcodes on the CPU
# backend's vector kernels (compiled on first use), so they give jit's bits.
_hlo_elementwise.use_math_kernels(_cpu_math)
_explain_observers.install()  # (each subscriber imports its module when a flag asks)
host_malloc.tune()  # eager results of MBs reuse heap memory instead of faulting it in

__version__ = "0.1.0"

# Issue 22's small APIs (jax.tree, jax.ops, device_get, the tracing context managers).
from ember import ops, tree  # noqa: E402
from ember._missing import module_getattr as _module_getattr  # noqa: E402
from ember.array import device_get  # noqa: E402
from ember.scoped import default_matmul_precision, ensure_compile_time_eval  # noqa: E402

# A JAX name Ember lacks: AttributeError saying Ember does not implement it yet.
__getattr__ = _module_getattr(__name__)

tree_map = tree_util.tree_map
tree_leaves = tree_util.tree_leaves
tree_structure = tree_util.tree_structure
tree_flatten = tree_util.tree_flatten
tree_unflatten = tree_util.tree_unflatten


def local_devices() -> list:
    """Return the devices of this process (as jax.local_devices): this machine's CPU."""
    return devices()


def device_count() -> int:
    """Return the number of devices (as jax.device_count): 1, the CPU."""
    return 1


def default_backend() -> str:
    """Return the platform jit compiles for (as jax.default_backend): `"cpu"`."""
    return "cpu"


__all__ = ["vmap", "jit", "make_jaxpr", "eval_shape", "ShapeDtypeStruct", "Array", "device_put",
           "devices", "block_until_ready", "config", "numpy", "lax", "random", "tree_util",
           "errors",
           "ConcretizationTypeError", "disable_jit", "stop_gradient", "tree_map",
           "pure_callback", "debug", "jvp", "linearize", "vjp", "grad", "value_and_grad",
           "float0", "jacfwd", "jacrev", "jacobian", "hessian", "linear_transpose", "custom_jvp",
           "custom_vjp", "custom_gradient", "checkpoint", "remat", "checkpoint_policies",
           "ops", "tree", "device_get", "default_matmul_precision", "ensure_compile_time_eval"]

from ember.core import traceback_util as _traceback_util  # noqa: E402

_traceback_util.wrap_public(globals())  # eager errors show the user's frames only
