"""ember.lax: the primitives as functions, as `jax.lax`.

No dtype promotion here (ember.numpy does that); weakly typed operands (Python scalars)
take the dtype of the others. One module per family: _ops (elementwise, shape,
reductions), _slicing (slice, pad, concatenate, dynamic slices, gather, scatter),
_linalg (dot_general), _sorting (sort, cumulative reductions), _control_flow (cond,
switch), _loops (while_loop, fori_loop), _scan (scan, map), _custom_solvers
(custom_linear_solve, custom_root: solvers differentiated implicitly) and _parallel (psum,
pmean, pmax, pmin, all_gather, axis_index over vmap's named axes), _user_reductions
(associative_scan, reduce with a user's computation), _fft (fft, FftType).
"""

from ember.lax import linalg as linalg  # jax.lax.linalg, a submodule
from ember.lax._base import convert_element_type
from ember.lax._control_flow import *  # noqa: F403
from ember.lax._control_flow import __all__ as _control_flow_all
from ember.lax._convolution import *  # noqa: F403
from ember.lax._convolution import __all__ as _convolution_all
from ember.lax._custom_solvers import *  # noqa: F403
from ember.lax._custom_solvers import __all__ as _custom_solvers_all
from ember.lax._fft import *  # noqa: F403
from ember.lax._fft import __all__ as _fft_all
from ember.lax._linalg import *  # noqa: F403
from ember.lax._linalg import __all__ as _linalg_all
from ember.lax._loops import *  # noqa: F403
from ember.lax._loops import __all__ as _loops_all
from ember.lax._ops import *  # noqa: F403
from ember.lax._ops import __all__ as _ops_all
from ember.lax._parallel import *  # noqa: F403
from ember.lax._parallel import __all__ as _parallel_all
from ember.lax._scan import *  # noqa: F403
from ember.lax._scan import __all__ as _scan_all
from ember.lax._sharding import *  # noqa: F403
from ember.lax._sharding import __all__ as _sharding_all
from ember.lax._slicing import *  # noqa: F403
from ember.lax._slicing import __all__ as _slicing_all
from ember.lax._sorting import *  # noqa: F403
from ember.lax._sorting import __all__ as _sorting_all
from ember.lax._special import *  # noqa: F403
from ember.lax._special import __all__ as _special_all
from ember.lax._user_reductions import *  # noqa: F403
from ember.lax._user_reductions import __all__ as _user_reductions_all
from ember.prims.elementwise import RoundingMethod

__all__ = ["convert_element_type", "RoundingMethod", *_ops_all, *_slicing_all, *_linalg_all,
           *_sorting_all, *_control_flow_all, *_loops_all, *_scan_all, *_custom_solvers_all,
           *_parallel_all, *_special_all, *_sharding_all,
           *_convolution_all, *_user_reductions_all, *_fft_all]

# A JAX name this module lacks: AttributeError saying Ember does not implement it yet.
from ember._missing import module_getattr as _module_getattr  # noqa: E402
from ember.core import traceback_util as _traceback_util  # noqa: E402

_traceback_util.wrap_public(globals())  # eager errors show the user's frames only
__getattr__ = _module_getattr(__name__)
