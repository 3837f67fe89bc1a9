"""lax's special functions on their own primitives: `lgamma`, `digamma` (as jax.lax).

Input: a float array (integers are refused with JAX's dtype error). Output: an array of
its shape and dtype. The primitives (prims/special_gamma.py) lower to inlined elementwise
code, so they fuse and compile natively; their derivatives are digamma and trigamma.
"""

from __future__ import annotations

from typing import Any

from ember.prims.special_gamma import digamma_p, lgamma_p

__all__ = ["lgamma", "digamma"]


def lgamma(x: Any) -> Any:
    """Elementwise log|Gamma(x)| (as jax.lax.lgamma)."""
    return lgamma_p.bind(x)


def digamma(x: Any) -> Any:
    """Elementwise digamma psi(x) = d/dx log Gamma(x) (as jax.lax.digamma)."""
    return digamma_p.bind(x)
