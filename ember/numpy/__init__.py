"""ember.numpy: the `jax.numpy` surface, written on ember.lax.

NumPy's names and broadcasting, JAX's type promotion (weak types included) and JAX's
semantics where they differ from NumPy's. Also a namespace of the Python Array API standard
(`x.__array_namespace__()` returns this module). One module per family; each lists its
public names in `__all__`, and this file re-exports them.
"""

import numpy as _np

from ember.array import Array as ndarray  # noqa: F401
from ember.numpy import fft, linalg  # noqa: F401
from ember.numpy._array_api import *  # noqa: F403
from ember.numpy._convolve import *  # noqa: F403
from ember.numpy._creation import *  # noqa: F403
from ember.numpy._dtypes import *  # noqa: F403
from ember.numpy._index_update import *  # noqa: F403
from ember.numpy._indexing import *  # noqa: F403
from ember.numpy._linalg import *  # noqa: F403
from ember.numpy._manipulation import *  # noqa: F403
from ember.numpy._piecewise import *  # noqa: F403
from ember.numpy._reductions import *  # noqa: F403
from ember.numpy._sorting import *  # noqa: F403
from ember.numpy._take import *  # noqa: F403
from ember.numpy._ufuncs import *  # noqa: F403

pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
euler_gamma = _np.euler_gamma
newaxis = None

# Added functions (issue 25 item 5): one module per concern, written on the names above.
from ember.numpy._bits_math import *  # noqa: E402, F403
from ember.numpy._calculus import *  # noqa: E402, F403
from ember.numpy._editing import *  # noqa: E402, F403
from ember.numpy._functional import *  # noqa: E402, F403
from ember.numpy._histograms import *  # noqa: E402, F403
from ember.numpy._host_io import *  # noqa: E402, F403
from ember.numpy._index_tricks import *  # noqa: E402, F403
from ember.numpy._partition import *  # noqa: E402, F403
from ember.numpy._polynomial import *  # noqa: E402, F403
from ember.numpy._set_pairs import *  # noqa: E402, F403
from ember.numpy._setops import *  # noqa: E402, F403
from ember.numpy._statistics import *  # noqa: E402, F403
from ember.numpy._type_predicates import *  # noqa: E402, F403
from ember.numpy._vector_extras import *  # noqa: E402, F403
from ember.numpy._windows import *  # noqa: E402, F403

__array_api_version__ = "2024.12"

# _array_methods installs the Array/Tracer methods.
from ember.core import traceback_util as _traceback_util  # noqa: E402
from ember.numpy import _array_methods  # noqa: E402, F401

_traceback_util.wrap_public(globals())  # eager errors show the user's frames only

# A JAX name this module lacks: AttributeError saying Ember does not implement it yet.
from ember._missing import module_getattr as _module_getattr  # noqa: E402

_missing_getattr = _module_getattr(__name__)


def __getattr__(name: str) -> object:
    if name == "bfloat16":  # (made on first use: ml_dtypes is slow to import)
        from ember.numpy._dtypes import bfloat16_type
        return bfloat16_type()
    return _missing_getattr(name)
