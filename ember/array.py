"""ember.Array: the immutable array a user gets back from Ember.

Input: NumPy results of primitive rules or executables. Output: `ArrayImpl`, a read-only
NumPy buffer plus its abstract value (dtype, shape, weak type). `Array` is the public type
name: `isinstance(x, ember.Array)` holds for concrete arrays and for tracers, as in JAX.
Invariants: the buffer is never written after the Array is built (it is marked read-only
and never aliases memory the user can write); a donated or deleted Array raises
"Array has been deleted" on any use. Being immutable, an Array remembers its C-contiguous
value once known (`_cval`: set at birth for compiled outputs, computed on first need
otherwise), so `ember.jit`'s cached-call path checks no flags and copies nothing.
Operators and NumPy methods are installed by ember.numpy (see numpy/_array_methods.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.core import dtypes
from ember.core.aval import ShapedArray
from ember.device_state import CpuDevice, default_device

# A copy of at least this many bytes starts on a cache line (ALIGN): compiled kernels read
# it with full-width vector loads, and a 64-byte load that straddles two lines costs about
# twice one that does not. NumPy's allocator aligns to 16 bytes only: a 1e6-element f32
# input at such an address made erf(x) * a + b 20-30% slower (measured in
# benchmarks/special_functions.py --affine). Smaller copies keep NumPy's plain copy.
ALIGN = 64
ALIGN_MIN_BYTES = 4096


def _aligned_copy(src: np.ndarray, dt: np.dtype) -> np.ndarray:
    """A C-ordered copy of `src` as dtype `dt` (NumPy's unsafe cast, as np.array(src, dt)),
    starting on an ALIGN-byte boundary when it is at least ALIGN_MIN_BYTES."""
    nbytes = src.size * dt.itemsize
    if nbytes < ALIGN_MIN_BYTES:
        return np.array(src, dtype=dt, copy=True, order="C")
    raw = np.empty(nbytes + ALIGN, np.uint8)
    start = -raw.ctypes.data % ALIGN
    out = raw[start:start + nbytes].view(dt).reshape(src.shape)
    np.copyto(out, src, casting="unsafe")
    return out


class _ArrayMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        if cls is Array:
            from ember.core.trace import Tracer
            return isinstance(obj, (ArrayImpl, Tracer))
        return super().__instancecheck__(obj)


class Array(metaclass=_ArrayMeta):
    """The public array type (an annotation and isinstance target); see ArrayImpl."""

    __slots__ = ()


class ArrayImpl(Array):
    __slots__ = ("_value", "_aval", "_deleted", "_cval", "__weakref__")
    __array_priority__ = 100

    def __init__(self, value: np.ndarray, aval: ShapedArray, cval: np.ndarray | None = None):
        # ember/fastpath.py sets these same slots directly (no __init__ frame) for compiled
        # outputs: a new slot goes there too (a test compares the two slot by slot)
        self._value = value
        self._aval = aval
        self._deleted = False
        self._cval = cval  # `value` itself when the caller knows it is C-contiguous

    # -- construction -----------------------------------------------------------------------
    @classmethod
    def _from_rule(cls, out: Any, aval: ShapedArray) -> ArrayImpl:
        """Wrap a freshly computed NumPy result (owned by Ember) with its abstract value."""
        arr = np.asarray(out)
        if arr.dtype != aval.dtype:
            with np.errstate(all="ignore"):
                arr = arr.astype(aval.dtype)
        if arr.shape != aval.shape:
            arr = np.broadcast_to(arr, aval.shape)
        if arr.flags.writeable:
            arr.setflags(write=False)
        return cls(arr, aval)

    @classmethod
    def _from_user(cls, x: Any, dtype: Any = None, weak_type: bool = False) -> ArrayImpl:
        """Copy a user's value (NumPy array, scalar, nested list) into a new Array."""
        src = np.asarray(x) if dtype is None else np.asarray(x, dtype=dtype)
        dt = dtypes.canonicalize(src.dtype)
        with np.errstate(all="ignore"):
            arr = _aligned_copy(src, dt)
        arr.setflags(write=False)
        return cls(arr, ShapedArray(arr.shape, dt, weak_type))

    # -- what the tracing core reads --------------------------------------------------------
    @property
    def _ember_aval(self) -> ShapedArray:
        if self._deleted:
            raise RuntimeError("Array has been deleted.")
        return self._aval

    def _ember_value(self) -> np.ndarray:
        if self._deleted:
            raise RuntimeError("Array has been deleted.")
        return self._value

    def _c_value(self) -> np.ndarray | None:
        """The value as a C-contiguous array (a copy, made once, if it is a strided view);
        None once deleted. What compiled code reads."""
        cval = self._cval
        if cval is None:
            value = self._value
            if value is None:
                return None
            cval = value if value.flags.c_contiguous else np.ascontiguousarray(value)
            if cval.flags.writeable:
                cval.setflags(write=False)
            self._cval = cval
            if self._deleted:  # deleted meanwhile by another thread: `delete` may have
                self._cval = None  # cleared `_cval` before the line above set it
                return None
        return cval

    # -- attributes ------------------------------------------------------------------------
    @property
    def aval(self) -> ShapedArray:
        return self._ember_aval

    @property
    def shape(self) -> tuple[int, ...]:
        return self._aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self._aval.dtype

    @property
    def ndim(self) -> int:
        return len(self._aval.shape)

    @property
    def size(self) -> int:
        return self._aval.size

    @property
    def weak_type(self) -> bool:
        return self._aval.weak_type

    @property
    def nbytes(self) -> int:
        return self._aval.size * self._aval.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self._aval.dtype.itemsize

    @property
    def device(self) -> CpuDevice:
        return default_device()

    def devices(self) -> set[CpuDevice]:
        return {default_device()}

    @property
    def sharding(self) -> Any:
        """Where the value lives: one device (`SingleDeviceSharding`)."""
        from ember.sharding._shardings import SingleDeviceSharding
        return SingleDeviceSharding(default_device())

    @property
    def addressable_shards(self) -> list:
        """The shards this process holds: the whole value, on its device."""
        from ember.sharding._array import Shard
        idx = tuple(slice(None) for _ in self.shape)
        return [Shard(default_device(), idx, self)]

    def addressable_data(self, index: int) -> ArrayImpl:
        """The data of the `index`-th addressable shard: the array itself."""
        return self.addressable_shards[index].data

    @property
    def global_shards(self) -> list:
        return self.addressable_shards

    @property
    def is_fully_addressable(self) -> bool:
        return True

    @property
    def is_fully_replicated(self) -> bool:
        return True

    def block_until_ready(self) -> ArrayImpl:
        # dispatch is synchronous: the value is ready; only a deleted Array is an error
        if self._deleted:
            raise RuntimeError("Array has been deleted.")
        return self

    def is_deleted(self) -> bool:
        return self._deleted

    def delete(self) -> None:
        self._deleted = True
        self._value = None  # type: ignore[assignment]
        self._cval = None

    # -- conversions -----------------------------------------------------------------------
    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        value = self._ember_value()
        if dtype is not None and np.dtype(dtype) != value.dtype:
            if copy is False:
                raise ValueError("converting the dtype of an ember.Array needs a copy")
            return value.astype(dtype)
        if copy:
            return value.copy()
        return value

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self._ember_value().__dlpack__(*args, **kwargs)

    def item(self, *args: Any) -> Any:
        return self._ember_value().item(*args)

    def tolist(self) -> Any:
        return self._ember_value().tolist()

    def __bool__(self) -> bool:
        return bool(self._ember_value())

    def __int__(self) -> int:
        return int(self._ember_value())

    def __float__(self) -> float:
        return float(self._ember_value())

    def __complex__(self) -> complex:
        return complex(self._ember_value())

    def __index__(self) -> int:
        value = self._ember_value()
        if dtypes.kind(value.dtype) not in "iub" or value.ndim:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(value)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        if self._deleted:
            return "Array(<deleted>)"
        body = np.array2string(self._value, separator=", ", prefix="Array(")
        # As JAX: a zero-size array shows its shape (`Array([], shape=(0, 3), dtype=int8)`).
        shape = f", shape={self.shape}" if self.size == 0 else ""
        extra = ", weak_type=True" if self.weak_type else ""
        return f"Array({body}{shape}, dtype={self.dtype.name}{extra})"

    def __str__(self) -> str:
        return str(self._ember_value())

    def __format__(self, spec: str) -> str:
        value = self._ember_value()
        return format(value.item() if value.ndim == 0 else value, spec)

    def __reduce__(self):
        return (_rebuild, (self._ember_value(), self.weak_type))

    def __copy__(self) -> ArrayImpl:
        return self

    def __deepcopy__(self, memo: dict) -> ArrayImpl:
        return self


def _rebuild(value: np.ndarray, weak_type: bool) -> ArrayImpl:
    return ArrayImpl._from_user(value, weak_type=weak_type)


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: Any = False,
               may_alias: Any = None) -> Any:
    """Transfer values to devices as Arrays (as jax.device_put).

    Args:
        x: an array, scalar, or pytree of them.
        device: None or the default device keeps one buffer (Arrays pass through); a
            device, a ``Sharding``, or a ``PartitionSpec`` under ``with mesh:`` lays each leaf
            out over its devices (``ember.sharding``); or a pytree prefix of ``x`` of those.
        src, donate, may_alias: accepted for JAX's signature.

    Returns:
        ``x`` with every leaf an ``ember.Array`` placed as ``device`` says.
    """
    from ember.tree_util import tree_map
    if device is None:
        return tree_map(lambda v: v if isinstance(v, ArrayImpl) else
                        ArrayImpl._from_user(v), x)
    from ember.device_array import AcceleratorDevice
    if isinstance(device, AcceleratorDevice):  # (a TPU: the value goes to the chip)
        from ember.device_array import put as put_on_accelerator
        return tree_map(lambda v: put_on_accelerator(v, device), x)
    from ember.sharding._array import device_put_sharded_leaf
    from ember.sharding._shardings import as_sharding

    def put(s: Any, sub: Any) -> Any:
        if s is None:
            return device_put(sub)
        sharding = as_sharding(s, "device_put")
        return tree_map(lambda v: device_put_sharded_leaf(v, sharding), sub)

    from ember.sharding._mesh import PartitionSpec
    from ember.sharding._shardings import Sharding
    if isinstance(device, CpuDevice) and device == default_device():
        return tree_map(_to_host, x)  # (an accelerator's value comes back to the host)
    if isinstance(device, (Sharding, CpuDevice, PartitionSpec)):
        return put(device, x)
    # a pytree of placements, a prefix of x's
    return tree_map(put, device, x, is_leaf=lambda v: v is None or isinstance(
        v, (Sharding, CpuDevice, PartitionSpec)))


def _to_host(v: Any) -> ArrayImpl:
    """`v` as an Array in host memory (a DeviceArray's value copied back)."""
    if type(v) is ArrayImpl:
        return v
    if isinstance(v, ArrayImpl) and hasattr(v, "buffer_on"):
        return ArrayImpl(v._ember_value(), v.aval)
    return v if isinstance(v, ArrayImpl) else ArrayImpl._from_user(v)


def device_get(x: Any) -> Any:
    """Copy a pytree of Arrays to the host as NumPy arrays (as jax.device_get).

    Args:
      x: a pytree; leaves with ``__array__`` (ember.Arrays, NumPy arrays and scalars) become
        ``numpy.ndarray`` objects, other leaves (Python numbers, strings) and tracers are returned
        as they are.

    Returns:
      The pytree with the converted leaves. An Array's NumPy value is read-only, as in
      JAX; ``numpy.array(...)`` of it gives a writable copy.
    """
    from ember.core.trace import Tracer
    from ember.tree_util import tree_map

    def get(leaf: Any) -> Any:
        if isinstance(leaf, Tracer) or not hasattr(leaf, "__array__"):
            return leaf
        return leaf.__array__()

    return tree_map(get, x)


def devices(backend: str | None = None) -> list[Any]:
    """Return every device of every process (as jax.devices): this process's CPU devices
    (`config.jax_num_cpu_devices`, one by default) and, once `ember.distributed` joined
    processes, theirs, ordered by id; `backend="tpu"` (or no backend with `jax_platforms`
    naming "tpu") the TPU's devices, JAX's RuntimeError where there is none."""
    if _accelerator(backend):
        from ember.device_array import accelerator_devices
        return list(accelerator_devices("tpu"))
    _check_backend(backend)
    from ember.device_state import global_devices
    return list(global_devices())


def _accelerator(backend: Any) -> bool:
    """Whether `backend` (None: the default platform) means the TPU."""
    if backend is None:
        from ember.compiler import platform_name
        return platform_name() == "tpu"
    return backend == "tpu"


def _check_backend(backend: Any) -> None:
    if backend is None or backend == "cpu":
        return
    if backend == "tpu":
        from ember.device_array import accelerator_devices
        accelerator_devices("tpu")  # (raises JAX's error, with the runtime's reason)
        return
    if backend in ("gpu", "cuda", "rocm"):
        raise RuntimeError(f"Unknown backend: '{backend}' requested, but no platforms that "
                           f"are instances of {backend} are present. Platforms present "
                           "are: cpu")
    raise RuntimeError(f"Unknown backend {backend}. Platforms present are: cpu")


def block_until_ready(x: Any) -> Any:
    """Wait until every Array in the pytree `x` is computed, then return `x` (as
    jax.block_until_ready).

    Ember runs each call synchronously, so the values are ready when a call returns; this
    only raises for an Array that was deleted (donated, for example). Timing code written
    for JAX, `f(x).block_until_ready()`, measures the same thing on Ember.
    """
    from ember.tree_util import tree_leaves
    for leaf in tree_leaves(x):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return x
