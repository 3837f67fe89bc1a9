"""`ember.nn`: neural-network functions, as `jax.nn` (activations, softmax and friends,
one_hot, standardize, dot_product_attention) and `initializers`.

Input/output: arrays in, arrays out, with JAX's signatures, defaults and dtypes. Modules:
`_activations.py` (elementwise activations, JAX's custom JVPs for relu/relu6/log1mexp),
`_logsumexp.py` (shared with ember.scipy.special), `_softmax.py` (reductions over axes,
one_hot), `_attention.py`. Invariant: every function is written on ember.numpy/ember.lax,
so it traces, jits, differentiates and vmaps as they do; the ones JAX 0.10.2 wraps in its
own `jit` are staged as one `jit[name=...]` equation under a trace (numpy/_jit_wrap.py),
so make_jaxpr prints them as JAX does, and run op by op eagerly. `initializers.py` is
`jax.nn.initializers` on ember.random. Any other jax.nn name Ember lacks raises the "not
implemented yet" AttributeError.
"""

from ember._missing import module_getattr
from ember.nn import initializers
from ember.nn._activations import *  # noqa: F403
from ember.nn._activations import __all__ as _activations_all
from ember.nn._attention import dot_product_attention
from ember.nn._logsumexp import logsumexp
from ember.nn._softmax import *  # noqa: F403
from ember.nn._softmax import __all__ as _softmax_all

__all__ = [*_activations_all, *_softmax_all, "logsumexp", "dot_product_attention",
           "initializers"]

from ember.core import traceback_util as _traceback_util  # noqa: E402

_traceback_util.wrap_public(globals())  # eager errors show the user's frames only
__getattr__ = module_getattr(__name__)
