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
from ember import device_state as _device_state
from ember import eager_native as _eager_native
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
from ember.prims import _eager_native as _eager_hook
from ember.vmap_api import vmap

# Eager math, constant folding and the interpreter run the transcendental opcodes on the CPU
# backend's vector kernels (compiled on first use), so they give jit's bits.
_hlo_elementwise.use_math_kernels(_cpu_math)
# Eager float products, sums, scans, convolutions and triangular solves run the CPU
# backend's compiled equation (one compile per shape), jit's bits (ember/eager_native.py).
_eager_hook.HOOK[0] = _eager_native.run
_explain_observers.install()  # (each subscriber imports its module when a flag asks)
host_malloc.tune()  # eager results of MBs reuse heap memory instead of faulting it in

__version__ = "0.1.0"

# Issue 22's small APIs (jax.tree, jax.ops, device_get, the tracing context managers) and
# issue 27's devices, meshes, arrays split over them and shard_map.
from ember import ops, sharding, tree  # noqa: E402
from ember._missing import module_getattr as _module_getattr  # noqa: E402
from ember.array import device_get  # noqa: E402
from ember.scoped import default_matmul_precision, ensure_compile_time_eval  # noqa: E402
from ember.sharding import make_mesh, set_mesh  # noqa: E402
from ember.sharding._array import (  # noqa: E402
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
)
from ember.spmd import shard_map  # noqa: E402

# A JAX name Ember lacks: AttributeError saying Ember does not implement it yet.
__getattr__ = _module_getattr(__name__)

tree_map = tree_util.tree_map
tree_leaves = tree_util.tree_leaves
tree_structure = tree_util.tree_structure
tree_flatten = tree_util.tree_flatten
tree_unflatten = tree_util.tree_unflatten


def local_devices(process_index: int | None = None, backend: str | None = None,
                  host_id: int | None = None) -> list:
    """Return the devices of one process (as jax.local_devices): this one's by default."""
    from ember.array import _accelerator, _check_backend
    from ember.device_state import global_devices
    if _accelerator(backend):
        from ember.device_array import accelerator_devices
        return list(accelerator_devices("tpu"))
    _check_backend(backend)
    p = process_index if process_index is not None else host_id
    p = _device_state.process_index() if p is None else p
    return [d for d in global_devices() if d.process_index == p]


def device_count(backend: str | None = None) -> int:
    """Return the number of devices of every process (as jax.device_count)."""
    return len(devices(backend))


def local_device_count(backend: str | None = None) -> int:
    """Return the number of this process's devices (as jax.local_device_count)."""
    return len(local_devices(backend=backend))


def process_index(backend: str | None = None) -> int:
    """Return this process's index among the joined processes (as jax.process_index)."""
    return _device_state.process_index()


def process_count(backend: str | None = None) -> int:
    """Return the number of joined processes (as jax.process_count)."""
    return _device_state.process_count()


def default_backend() -> str:
    """Return the platform jit compiles for (as jax.default_backend): `"cpu"`, or `"tpu"`
    where `jax_platforms` (EMBER_PLATFORM) names it first."""
    from ember.compiler import platform_name
    return platform_name()


__all__ = ["vmap", "jit", "make_jaxpr", "eval_shape", "ShapeDtypeStruct", "Array", "device_put",
           "devices", "block_until_ready", "config", "numpy", "lax", "random", "tree_util",
           "errors",
           "ConcretizationTypeError", "disable_jit", "stop_gradient", "tree_map",
           "pure_callback", "debug", "jvp", "linearize", "vjp", "grad", "value_and_grad",
           "float0", "jacfwd", "jacrev", "jacobian", "hessian", "linear_transpose", "custom_jvp",
           "custom_vjp", "custom_gradient", "checkpoint", "remat", "checkpoint_policies",
           "ops", "tree", "device_get", "local_devices", "device_count", "local_device_count",
           "process_index", "process_count", "sharding", "make_mesh", "set_mesh", "shard_map",
           "make_array_from_callback", "make_array_from_process_local_data",
           "make_array_from_single_device_arrays", "default_matmul_precision",
           "ensure_compile_time_eval"]

from ember.core import traceback_util as _traceback_util  # noqa: E402

_traceback_util.wrap_public(globals())  # eager errors show the user's frames only
