"""ember.lax: the primitives as functions, as `jax.lax`.

No dtype promotion here (ember.numpy does that); weakly typed operands (Python scalars)
take the dtype of the others.
"""

from ember.lax._base import convert_element_type
from ember.lax._ops import *  # noqa: F403
from ember.lax._ops import __all__ as _ops_all
from ember.prims.elementwise import RoundingMethod

__all__ = ["convert_element_type", "RoundingMethod", *_ops_all]
