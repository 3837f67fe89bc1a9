"""The XLA route: Ember's optimized HLO handed to an XLA compiler through jaxlib's PJRT client.

Not a backend itself (it is not in `backends.NAMES`): the shared half of the backends that
end in an XLA compiler, `xla_cpu/` and `tpu/`, which differ in the PJRT platform they name
(and the TPU backend's own kernels, custom calls in the module it hands over).

Input: an optimized HLO Module (the backend's pipeline already ran) and a platform name
("cpu", "tpu"). Output: an `XlaExecutable`, callable on NumPy arrays (or device arrays from
`to_device`), giving NumPy arrays: one per output, a tuple for a tuple root.

The route, with jaxlib 0.10.2's entry points (all of them in `_Jaxlib`, the only place
that names jaxlib, so a newer jaxlib that moves one needs a change there alone):
  legalize.legalize   Ember-only opcodes rewritten into XLA's (a clone; Unsupported for
                      what has no rewrite)
  legalize.xla_text   Ember's printer, XLA's spelling of `clz`
  hlo_module_from_text    XLA's HLO text parser -> an HloModule
  mlir.hlo_to_stablehlo   its serialized proto -> a StableHLO module (MLIR bytecode)
  Client.compile_and_load the platform's PJRT client (`jax.extend.backend.get_backend`)
                      compiles it for one device
  batched_device_put, LoadedExecutable.execute_sharded   arguments in, results out
  Client.serialize_executable / deserialize_executable   the disk cache (disk_cache.py)

Invariants: jaxlib is imported on the first compile or transfer, never when this package
is imported (`import ember` and the CPU path never load it: tests/unit/test_layering.py
holds every jax/jaxlib import to `ember/backends/xla*`); without jaxlib, that first use
raises `MissingJaxlib`, naming the extra to install. Arguments keep their dtypes (64-bit
types are put with x64 on whatever JAX's own flag says); outputs are fresh NumPy arrays.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ember.backends import Unsupported
from ember.hlo.ir import Module

# The JAX release the TPU machine has; jaxlib's internal entry points are pinned with it.
JAX_VERSION = "0.10.2"


class MissingJaxlib(ImportError):
    """An XLA backend was asked for, and jaxlib (the XLA runtime) is not installed."""


class _Jaxlib:
    """jaxlib's entry points, imported once on first use."""

    def __init__(self, backend: str) -> None:
        try:
            import jax.extend.backend as jax_backend
            from jax._src import core as jax_core
            from jax._src.lib import _jax, xla_client
            from jax._src.lib import hlo as jax_hlo
            from jax.sharding import SingleDeviceSharding
        except ImportError as e:
            raise MissingJaxlib(
                f"the {backend} backend needs jaxlib (jax=={JAX_VERSION}): "
                f"pip install 'ember[xla]' (import failed: {e})") from e
        self.get_backend = jax_backend.get_backend
        self.ShapedArray = jax_core.ShapedArray
        self.jax = _jax
        self.hlo = jax_hlo
        self.CompileOptions = xla_client.CompileOptions
        self.SingleDeviceSharding = SingleDeviceSharding
        self.array_result_handler = xla_client.array_result_handler
        import jaxlib

        self.version = str(getattr(jaxlib, "__version__", JAX_VERSION))


@functools.cache
def jaxlib(backend: str = "xla-cpu") -> _Jaxlib:
    """jaxlib's entry points (MissingJaxlib, naming `backend`, when it is not installed)."""
    return _Jaxlib(backend)


class Platform:
    """One PJRT client and the device this route compiles for and runs on."""

    def __init__(self, platform: str, backend: str) -> None:
        self.lib = jaxlib(backend)
        self.client = self.lib.get_backend(platform)
        self.device = self.client.local_devices()[0]
        self.sharding = self.lib.SingleDeviceSharding(self.device)

    def put(self, array: Any, device: Any = None) -> Any:
        """`array` as a buffer on the device (`device`: another of the client's; device
        arrays pass through)."""
        if isinstance(array, self.lib.jax.ArrayImpl):
            return array
        a = np.asarray(array)
        aval = self.lib.ShapedArray(a.shape, a.dtype)
        dev, sharding = self.device, self.sharding
        if device is not None and device != self.device:
            dev, sharding = device, self.lib.SingleDeviceSharding(device)
        # (enable_x64: Ember's own x64 flag already chose the dtypes; JAX's would turn an
        # f64 argument into f32 here)
        return self.lib.jax.batched_device_put(aval, sharding, [a], [dev],
                                               True, False, enable_x64=True)

    def compile(self, text: str, use_cache: bool = True) -> Any:
        """HLO text -> XLA's HloModule -> StableHLO -> a loaded executable; from the disk
        cache (disk_cache.py) when an earlier process compiled the same text here."""
        from ember.backends.xla import disk_cache

        k = None
        if use_cache and disk_cache.folder() is not None:
            k = disk_cache.key(text, self.client, self.device, self.lib.version)
            body = disk_cache.load(k)
            if body is not None:
                try:
                    return self.client.deserialize_executable(body, [self.device],
                                                              self.lib.CompileOptions())
                except Exception:  # (a runtime that cannot read it back: compile again)
                    disk_cache.STATS["rejected"] += 1
        loaded = self._compile(text)
        if k is not None:
            try:
                disk_cache.store(k, self.client.serialize_executable(loaded))
            except Exception:  # (a runtime that cannot serialize: no entry)
                pass
        return loaded

    def _compile(self, text: str) -> Any:
        lib = self.lib
        try:
            hlo_module = lib.hlo.hlo_module_from_text(text)
            stablehlo = lib.jax.mlir.hlo_to_stablehlo(hlo_module.as_serialized_hlo_module_proto())
        except Exception as e:  # (XLA's status errors: its parser or importer said no)
            raise Unsupported(f"XLA does not read this module: {e}") from e
        try:
            return self.client.compile_and_load(stablehlo, [self.device], lib.CompileOptions())
        except Exception as e:  # (an op or type its compiler lacks: run it elsewhere)
            raise Unsupported(f"XLA's {self.client.platform} compiler rejects this module: "
                              f"{e}") from e


@functools.cache
def platform(name: str, backend: str) -> Platform:
    """The route to PJRT platform `name` ("cpu", "tpu"), made once per process."""
    return Platform(name, backend)


class XlaExecutable:
    """A module compiled by XLA: `exe(*arrays)` runs it on the platform's device.

    `run_buffers(*args)` is the device path (ember/dispatch.py takes it where
    `device_resident` is true: the tpu backend): it enqueues the run and returns the flat
    outputs as device buffers without waiting for them."""

    takes_donations = False  # (inputs are copied to device buffers: nothing is written over)
    device_resident = False  # results stay on the device (DeviceArray): set by the tpu backend

    def __init__(self, module: Module, text: str, plat: Platform, loaded: Any,
                 structure: Structure, out_types: list[tuple[tuple[int, ...], Any]]
                 ) -> None:
        self.module = module  # the optimized Ember module (what as_text shows)
        self.text = text      # what XLA was given (legalized, XLA's spellings)
        self._platform = plat
        self._loaded = loaded
        self._structure = structure
        # (jaxlib's C++ result handlers wrap the outputs: half the cost of disassembling)
        lib = plat.lib
        self._handlers = [lib.array_result_handler(lib.ShapedArray(shape, dtype),
                                                   plat.sharding, committed=True,
                                                   _skip_checks=True)
                          for shape, dtype in out_types]

    @property
    def platform(self) -> Platform:
        return self._platform

    def __call__(self, *args: Any, owned: Any = ()) -> Any:
        """Run on `args` (NumPy or device arrays); NumPy results (`owned` is ignored)."""
        outs = [np.asarray(r) for r in self.run_buffers(*args)]
        return _rebuild(self._structure, outs)

    def run_buffers(self, *args: Any) -> list[Any]:
        """Enqueue a run on `args` (NumPy or device arrays) and return its flat outputs as
        device arrays without waiting (each has `block_until_ready()`)."""
        put = self._platform.put
        results = self._loaded.execute_sharded([put(a) for a in args])
        return results.consume_with_handlers(self._handlers)

    def rebuild(self, flat: list[Any]) -> Any:
        """The flat outputs of `run_buffers` nested as the module's root (a tuple root: a
        tuple)."""
        return _rebuild(self._structure, flat)

    def kernels(self, module: Module | None = None) -> list[Any]:
        """None of Ember's: XLA generates the code (`runtime_hlo()` shows its fusions)."""
        return []

    def memory_analysis(self) -> Any:
        """The XLA compiler's own sizes of the program on its device (arguments, outputs,
        temporaries, generated code), as Ember's `CompiledMemoryStats`."""
        from ember.memory_stats import CompiledMemoryStats

        stats = self._loaded.get_compiled_memory_stats()
        names = [f for f in CompiledMemoryStats.__dataclass_fields__
                 if f != "buffer_assignment"]
        return CompiledMemoryStats(**{n: int(getattr(stats, n, 0)) for n in names})

    def runtime_hlo(self) -> str:
        """XLA's optimized HLO of the module: what its compiler made of Ember's."""
        return "\n".join(m.to_string() for m in self._loaded.hlo_modules())

    def as_text(self) -> str:
        from ember.hlo.printer import print_module

        return print_module(self.module, mode="display")


# The result's tuple nesting: a leaf's position among the flat outputs, or a tuple of them.
Structure = int | tuple[Any, ...]


def flatten_root(module: Module) -> Structure:
    """Make the entry's root a flat tuple of its leaves when it nests tuples (PJRT untuples
    one level: an inner tuple would come back as a tuple buffer); its nesting, to rebuild
    the results with. An array root: -1 (one output, not a tuple)."""
    from ember.hlo.builder import Builder

    entry = module.entry
    root = entry.root
    if not root.shape.is_tuple:
        return -1
    if not any(s.is_tuple for s in root.shape.tuple_shapes):
        return tuple(range(len(root.shape.tuple_shapes)))
    b = Builder(entry.name)
    b.computation = entry  # (add to the entry itself)
    leaves: list[Any] = []

    def walk(value: Any) -> Structure:
        if not value.shape.is_tuple:
            leaves.append(value)
            return len(leaves) - 1
        return tuple(walk(b.get_tuple_element(value, i))
                     for i in range(len(value.shape.tuple_shapes)))

    structure = walk(root)
    entry.root = b.tuple(leaves)
    return structure


def out_types(module: Module) -> list[tuple[tuple[int, ...], np.dtype]]:
    """(shape, NumPy dtype) of each flat output of `module` (its root flattened)."""
    root = module.entry.root.shape
    leaves = root.tuple_shapes if root.is_tuple else [root]
    return [(tuple(s.dimensions), s.dtype) for s in leaves]


def with_donations(text: str, module: Module, donated: tuple[int, ...]) -> str:
    """`text` (the HLO XLA is given) with an `input_output_alias` header: each donated
    parameter lends its buffer to the first output of its shape and type not yet taken
    (as JAX's donate_argnums does), so the device writes that output in place and the
    runtime consumes the argument's buffer. Donated parameters no output matches lend
    nothing."""
    if not donated:
        return text
    params = {int(p.attrs["parameter_number"]): p.shape for p in module.entry.parameters}
    root = module.entry.root.shape
    outs = list(root.tuple_shapes) if root.is_tuple else [root]
    taken: set[int] = set()
    pairs = []
    for p in sorted(donated):
        shape = params.get(p)
        for k, out in enumerate(outs):
            if (k not in taken and shape is not None and out.element_type == shape.element_type
                    and out.dimensions == shape.dimensions):
                taken.add(k)
                pairs.append(f"{{{k}}}: ({p}, {{}}, may-alias)" if root.is_tuple
                             else f"{{}}: ({p}, {{}}, may-alias)")
                break
    if not pairs:
        return text
    head, rest = text.split("\n", 1)
    return f"{head}, input_output_alias={{ {', '.join(pairs)} }}\n{rest}"


def _rebuild(structure: Structure, outs: list[Any]) -> Any:
    if structure == -1:
        return outs[0]
    if isinstance(structure, int):
        return outs[structure]
    return tuple(_rebuild(s, outs) for s in structure)


def compile_module(module: Module, platform_name: str, backend: str,
                   use_cache: bool = True) -> XlaExecutable:
    """`module` (optimized, not modified) compiled by XLA for `platform_name` (or read from
    the disk cache, unless `use_cache` is False)."""
    from ember.backends.xla.legalize import legalize, xla_text

    if any(p.shape.is_tuple for p in module.entry.parameters):
        raise Unsupported("a tuple parameter")
    legal = module.clone()
    legalize(legal)
    structure = flatten_root(legal)
    text = xla_text(legal)
    plat = platform(platform_name, backend)
    return XlaExecutable(module, text, plat, plat.compile(text, use_cache), structure,
                         out_types(legal))
