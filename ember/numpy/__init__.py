"""ember.numpy: the `jax.numpy` surface, written on ember.lax.

NumPy's names and broadcasting, JAX's type promotion (weak types included) and JAX's
semantics where they differ from NumPy's. Also a namespace of the Python Array API standard
(`x.__array_namespace__()` returns this module).
"""

import numpy as _np

from ember.array import Array as ndarray
from ember.numpy._creation import *  # noqa: F403
from ember.numpy._dtypes import *  # noqa: F403
from ember.numpy._dtypes import bool, bool_, dtype  # noqa: A004, F401
from ember.numpy._manipulation import *  # noqa: F403
from ember.numpy._reductions import *  # noqa: F403
from ember.numpy._reductions import all, any, max, min, sum  # noqa: A004, F401
from ember.numpy._ufuncs import *  # noqa: F403
from ember.numpy._ufuncs import abs, divmod, pow  # noqa: A004, F401

pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
euler_gamma = _np.euler_gamma
newaxis = None

__array_api_version__ = "2024.12"

from ember.numpy import _array_methods  # noqa: E402, F401  (installs Array/Tracer methods)
