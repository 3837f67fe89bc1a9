"""`ember.ad_checkpoint`, as `jax.ad_checkpoint`: the checkpoint policies and
`checkpoint_name` under the module name JAX programs import them from.

Input/output: re-exports only (checkpoint_api.py, checkpoint_policies.py); the
`checkpoint`/`remat` names JAX removed from this module in 0.10 are not here either.
"""

from __future__ import annotations

from ember import checkpoint_policies
from ember.checkpoint_api import checkpoint_name

__all__ = ["checkpoint_policies", "checkpoint_name"]
