"""Arrays that live on an accelerator: `AcceleratorDevice` and `DeviceArray`.

Input: a device buffer made by a device backend (ember/backends/tpu/: a PJRT array of
jaxlib) and its abstract value. Output: `DeviceArray`, an `ember.Array` whose value stays
on the chip until the host needs it: `np.asarray(x)`, printing, or a call compiled for
another backend copy it back once (then it is kept, as the Array is
immutable); `ember.jit` calls compiled for the device's backend take the buffer as it is
(ember/dispatch.py), so a chain of jitted calls never leaves the chip; an eager operation
with an operand on the chip runs there too (`eager_on_device`: the primitive alone, jitted
for the device's backend once per operand types), so its result stays there.

Invariants: the buffer is never written after the Array is built. Dispatch is
asynchronous: a DeviceArray may be returned before its value is computed;
`block_until_ready()` waits for it, and reading its value waits too. A deleted (or
donated) DeviceArray frees its buffer and raises "Array has been deleted" on any use, as
an `ArrayImpl` does. `AcceleratorDevice` compares by (platform, id) and prints as the
runtime's device does (`TpuDevice(id=0, ...)`, JAX's text).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.array import ArrayImpl
from ember.core.aval import ShapedArray
from ember.device_state import DeviceBase


class AcceleratorDevice(DeviceBase):
    """One accelerator device (a TPU chip's core): JAX's attributes, and the runtime's
    device it stands for (`runtime_device`, what the backend puts buffers on)."""

    __slots__ = ("id", "process_index", "platform", "device_kind", "backend",
                 "runtime_device")

    def __init__(self, runtime_device: Any, platform: str, backend: str) -> None:
        self.runtime_device = runtime_device
        self.id = int(runtime_device.id)
        self.process_index = int(getattr(runtime_device, "process_index", 0))
        self.platform = platform
        self.device_kind = str(getattr(runtime_device, "device_kind", platform))
        self.backend = backend  # the Ember backend that compiles for it ("tpu")

    def __repr__(self) -> str:
        return repr(self.runtime_device)

    def __str__(self) -> str:
        return str(self.runtime_device)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, AcceleratorDevice) and other.platform == self.platform
                and other.id == self.id)

    def __hash__(self) -> int:
        return hash((self.platform, self.id))


class DeviceArray(ArrayImpl):
    """An Array held as a buffer on an accelerator (see the module docstring)."""

    __slots__ = ("_buffer", "_dev")

    def __init__(self, buffer: Any, aval: ShapedArray, device: AcceleratorDevice) -> None:
        super().__init__(None, aval)  # type: ignore[arg-type]  (fetched on first need)
        self._buffer = buffer
        self._dev = device

    def buffer_on(self, device: Any) -> Any:
        """The device buffer when this Array lives on `device` (else None)."""
        if self._deleted:
            raise RuntimeError("Array has been deleted.")
        return self._buffer if device == self._dev else None

    def _fetch(self) -> None:
        """Copy the value to the host once (waits for the computation)."""
        if self._value is None and not self._deleted:
            value = np.asarray(self._buffer)
            if value.dtype != self._aval.dtype:
                value = value.astype(self._aval.dtype)
            if value.flags.writeable:
                value.setflags(write=False)
            self._value = value

    def _ember_value(self) -> np.ndarray:
        self._fetch()
        return super()._ember_value()

    def _c_value(self) -> np.ndarray | None:
        self._fetch()
        return super()._c_value()

    @property
    def device(self) -> AcceleratorDevice:
        return self._dev

    def devices(self) -> set[AcceleratorDevice]:
        return {self._dev}

    @property
    def sharding(self) -> Any:
        from ember.sharding._shardings import SingleDeviceSharding

        return SingleDeviceSharding(self._dev)

    @property
    def addressable_shards(self) -> list:
        from ember.sharding._array import Shard

        return [Shard(self._dev, tuple(slice(None) for _ in self.shape), self)]

    def block_until_ready(self) -> DeviceArray:
        if self._deleted:
            raise RuntimeError("Array has been deleted.")
        self._buffer.block_until_ready()
        return self

    def is_ready(self) -> bool:
        """Whether the value has been computed (never waits)."""
        if self._deleted:
            raise RuntimeError("Array has been deleted.")
        return bool(self._buffer.is_ready())

    def copy_to_host_async(self) -> None:
        """Start copying the value to the host (a later read waits less)."""
        if self._deleted:
            raise RuntimeError("Array has been deleted.")
        self._buffer.copy_to_host_async()

    def delete(self) -> None:
        buffer, self._buffer = self._buffer, None
        super().delete()
        if buffer is not None and not buffer.is_deleted():
            buffer.delete()

    def __repr__(self) -> str:
        self._fetch()
        return super().__repr__()


def wrap_outputs(buffers: Any, avals: Any, device: AcceleratorDevice) -> list[DeviceArray]:
    """The outputs of a device executable as DeviceArrays (nothing copied)."""
    return [DeviceArray(b, a, device) for b, a in zip(buffers, avals)]


_DEVICES: dict[str, list[AcceleratorDevice]] = {}


# (primitive, operand avals, params) -> its jitted function on a device's backend
_EAGER_FNS: dict[tuple, Any] = {}
_EAGER_FNS_MAX = 4096


def eager_on_device(prim: Any, args: list, params: dict) -> Any:
    """An eager primitive with an operand on an accelerator, run there as a jitted
    function of that one primitive (compiled once per primitive, operand types and plain
    params), so its result stays on the device, as JAX's eager ops do; None where no
    operand is a DeviceArray (the NumPy rule runs)."""
    for x in args:
        if type(x) is DeviceArray and not x._deleted:
            device = x._dev
            break
    else:
        return None
    from ember.api import jit
    from ember.core.trace import _plain_key, get_aval

    avals = tuple(get_aval(x) for x in args)
    parts = [(name, _plain_key(v)) for name, v in params.items()]
    key = None if any(k is None for _, k in parts) else (prim, avals, tuple(parts),
                                                         device.backend)
    fn = _EAGER_FNS.get(key) if key is not None else None
    if fn is None:
        def one_op(*xs: Any) -> Any:
            return prim.bind(*xs, **params)

        fn = jit(one_op, backend=device.backend)
        if key is not None:
            if len(_EAGER_FNS) >= _EAGER_FNS_MAX:
                _EAGER_FNS.clear()
            _EAGER_FNS[key] = fn
    out = fn(*args)
    return list(out) if prim.multiple_results else out


def accelerator_devices(platform: str) -> list[AcceleratorDevice]:
    """The devices of accelerator `platform` ("tpu"), asked of its backend once per process;
    JAX's RuntimeError, with what the runtime said, where there are none."""
    devs = _DEVICES.get(platform)
    if devs is None:
        from ember import backends

        be = backends.get(platform)
        try:
            found = be.local_devices()
        except Exception as e:  # (no jaxlib, no libtpu, no chip, chip busy)
            raise RuntimeError(
                f"Unknown backend: '{platform}' requested, but no platforms that are "
                f"instances of {platform} are present. Platforms present are: cpu "
                f"({type(e).__name__}: {e})") from e
        devs = _DEVICES[platform] = [AcceleratorDevice(d, platform, be.NAME) for d in found]
        from ember.core import trace

        trace.DEVICE_EAGER[0] = eager_on_device  # (arrays can be on a device from now on)
    return devs


def put(value: Any, device: AcceleratorDevice) -> DeviceArray:
    """`value` (an ember.Array, NumPy array or scalar) copied to `device` (a DeviceArray
    already there passes through)."""
    from ember import backends

    if isinstance(value, DeviceArray) and value.device == device:
        return value
    if not isinstance(value, ArrayImpl):
        value = ArrayImpl._from_user(value)
    host = value._c_value()
    if host is None:
        raise RuntimeError("Array has been deleted.")
    buffer = backends.get(device.backend).to_device(host, device.runtime_device)
    return DeviceArray(buffer, value.aval, device)
