"""The device fixture of the multi-device tests: N CPU devices in this process.

`config.jax_num_cpu_devices` may only change before the device list is built, so the
fixture forgets the list (`device_state.reset()`), sets the count, and after the tests
restores the count and forgets the list again: tests run before or after in the same
worker see the devices they would have seen alone.
"""

from __future__ import annotations

import pytest

from ember import device_state
from ember.config import config


def _with_devices(n: int):
    prev = config.jax_num_cpu_devices
    device_state.reset()
    config.update("jax_num_cpu_devices", n)
    try:
        yield device_state.global_devices()
    finally:
        device_state.reset()
        config.update("jax_num_cpu_devices", prev)
        device_state.reset()


@pytest.fixture(scope="module")
def devices8():
    """Eight CPU devices for the tests of one module."""
    yield from _with_devices(8)


@pytest.fixture(scope="module")
def devices4():
    """Four CPU devices for the tests of one module."""
    yield from _with_devices(4)
