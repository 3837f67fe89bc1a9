"""Traceback filtering (issue 22, item 5): a user error raised under jit, make_jaxpr,
eval_shape or lax control flow leaves with the user's frames only by default, all frames
with jax_traceback_filtering="off", and JAX's other modes."""

from __future__ import annotations

import traceback

import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.core import traceback_util

EMBER_DIR = traceback_util._EMBER_DIR


@pytest.fixture
def filtering():
    """Set the flag for one test and restore it."""
    before = ember.config.jax_traceback_filtering

    def set_mode(mode: str) -> None:
        ember.config.update("jax_traceback_filtering", mode)

    yield set_mode
    ember.config.update("jax_traceback_filtering", before)


def _shape_error(x):
    return x + jnp.ones(4)  # (3,) + (4,): a TypeError raised deep inside Ember


def _files(e: BaseException) -> list[str]:
    return [f.filename for f in traceback.extract_tb(e.__traceback__)]


def _catch(fn, *args):
    with pytest.raises(Exception) as info:
        fn(*args)
    return info.value


def test_default_is_auto_and_shows_user_frames_only(filtering) -> None:
    assert ember.config.jax_traceback_filtering == "auto"
    assert traceback_util.mode() == "quiet_remove_frames"  # (not under IPython)
    e = _catch(ember.jit(_shape_error), jnp.ones(3))
    assert isinstance(e, TypeError) and "incompatible shapes" in str(e)
    files = _files(e)
    assert files and not any(f.startswith(EMBER_DIR) for f in files), files
    names = [f.name for f in traceback.extract_tb(e.__traceback__)]
    assert names == ["_catch", "_shape_error"]
    assert e.__notes__ == [traceback_util.NOTE]
    assert "JAX_TRACEBACK_FILTERING=off" in traceback_util.NOTE
    assert e.__cause__ is None  # no printed chain of the full traceback


def test_off_keeps_every_frame(filtering) -> None:
    filtering("off")
    e = _catch(ember.jit(_shape_error), jnp.ones(3))
    files = _files(e)
    assert sum(f.startswith(EMBER_DIR) for f in files) >= 5
    assert not getattr(e, "__notes__", None)


def test_remove_frames_chains_the_full_traceback(filtering) -> None:
    filtering("remove_frames")
    e = _catch(ember.jit(_shape_error), jnp.ones(3))
    assert not any(f.startswith(EMBER_DIR) for f in _files(e))
    full = e.__cause__
    assert isinstance(full, traceback_util.UnfilteredStackTrace)
    assert "incompatible shapes" in str(full)
    full_files = _files(full)
    assert any(f.startswith(EMBER_DIR) for f in full_files)
    assert full_files.count(__file__) >= 2  # the callers above the boundary too
    assert not getattr(e, "__notes__", None)


def test_tracebackhide_marks_embers_frames(filtering) -> None:
    filtering("tracebackhide")
    e = _catch(ember.jit(_shape_error), jnp.ones(3))
    frames = [f for f, _ in traceback.walk_tb(e.__traceback__)]
    internal = [f for f in frames if f.f_code.co_filename.startswith(EMBER_DIR)]
    assert internal and all(f.f_locals.get("__tracebackhide__") for f in internal)
    assert not any(f.f_locals.get("__tracebackhide__") for f in frames if f not in internal)


def test_the_flag_takes_jaxs_values_only(filtering) -> None:
    for mode in ("off", "tracebackhide", "remove_frames", "quiet_remove_frames", "auto"):
        filtering(mode)
    with pytest.raises(ValueError, match="new enum value must be in"):
        ember.config.update("jax_traceback_filtering", "bogus")


def test_nested_jits_filter_once_and_keep_the_error(filtering) -> None:
    inner = ember.jit(_shape_error)
    outer = ember.jit(lambda x: inner(x) * 2)
    e = _catch(outer, jnp.ones(3))
    assert isinstance(e, TypeError)
    assert e.__notes__ == [traceback_util.NOTE]
    assert [f.name for f in traceback.extract_tb(e.__traceback__)] == [
        "_catch", "<lambda>", "_shape_error"]


def test_concretization_errors_keep_their_type(filtering) -> None:
    def branchy(x):
        if x > 0:
            return x
        return -x

    e = _catch(ember.jit(branchy), 1.0)
    assert isinstance(e, ember.errors.TracerBoolConversionError)
    assert [f.name for f in traceback.extract_tb(e.__traceback__)] == ["_catch", "branchy"]


@pytest.mark.parametrize("entry", ["make_jaxpr", "eval_shape", "lower", "cond", "scan",
                                   "while_loop", "fori_loop"])
def test_other_entry_points_filter_too(filtering, entry: str) -> None:
    x = jnp.ones(3)
    calls = {
        "make_jaxpr": lambda: ember.make_jaxpr(_shape_error)(x),
        "eval_shape": lambda: ember.eval_shape(_shape_error, x),
        "lower": lambda: ember.jit(_shape_error).lower(x),
        "cond": lambda: lax.cond(True, _shape_error, _shape_error, x),
        "scan": lambda: lax.scan(lambda c, _: (_shape_error(c), None), x, None, length=2),
        "while_loop": lambda: lax.while_loop(lambda c: False, _shape_error, x),
        "fori_loop": lambda: lax.fori_loop(0, 2, lambda i, c: _shape_error(c), x),
    }
    e = _catch(calls[entry])
    assert isinstance(e, TypeError), e
    files = _files(e)
    assert not any(f.startswith(EMBER_DIR) for f in files), files
    assert e.__notes__ == [traceback_util.NOTE]


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "vmap", "jacfwd", "jacrev"])
def test_transformations_are_boundaries_too(filtering, transform) -> None:
    """A user error under grad, vmap or a Jacobian (no jit) leaves with user frames only."""
    def loss(x):
        return jnp.sum(_shape_error(x))

    fn = getattr(ember, transform)(_shape_error if transform == "vmap" else loss)
    arg = jnp.ones((2, 3)) if transform == "vmap" else jnp.ones(3)
    e = _catch(fn, arg)
    assert "incompatible shapes" in str(e)
    assert not any(f.startswith(EMBER_DIR) for f in _files(e)), _files(e)


# Eager errors: every public function and Array method is an entry point (issue 22's
# eager-error frames): a bad call outside any transformation shows the user's frames only.
EAGER_ERRORS = {
    "jnp.add": (lambda: jnp.add(jnp.ones(3), jnp.ones(4)), TypeError, "incompatible shapes"),
    "operator +": (lambda: jnp.ones(3) + jnp.ones(4), TypeError, "incompatible shapes"),
    "x.reshape": (lambda: jnp.ones(3).reshape(4), TypeError, "cannot reshape"),
    "jnp.reshape": (lambda: jnp.reshape(jnp.ones(3), (4,)), TypeError, "cannot reshape"),
    "x[i, j]": (lambda: jnp.ones(3)[5, 1], IndexError, "Too many indices"),
    "x.at[].set": (lambda: jnp.ones(3).at[0, 0].set(1.0), IndexError, "Too many indices"),
    "x[i] = v": (lambda: jnp.ones(3).__setitem__(0, 1.0), TypeError, "at\\[idx\\].set"),
    "lax.add": (lambda: lax.add(jnp.ones(3), jnp.ones(4)), TypeError, "add got incompatible"),
    "jnp.add.reduce": (lambda: jnp.add.reduce(jnp.ones(3), axis=2), ValueError, "axis 2"),
    "jnp.linalg.solve": (lambda: jnp.linalg.solve(jnp.ones((2, 3)), jnp.ones(2)), ValueError,
                         "must have shape"),
    "ember.nn.softmax": (lambda: ember.nn.softmax(jnp.ones(3), axis=4), ValueError,
                         "out of bounds"),
    "ember.random.normal": (lambda: ember.random.normal(ember.random.key(0), (2,), jnp.int32),
                            ValueError, "must be a float"),
}


@pytest.mark.parametrize("case", list(EAGER_ERRORS))
def test_eager_errors_show_user_frames_only(filtering, case: str) -> None:
    call, kind, text = EAGER_ERRORS[case]
    with pytest.raises(kind, match=text) as info:
        call()
    e = info.value
    assert not any(f.startswith(EMBER_DIR) for f in _files(e)), _files(e)
    assert [f.name for f in traceback.extract_tb(e.__traceback__)][-1] == "<lambda>"
    assert e.__notes__ == [traceback_util.NOTE]
    # with filtering off, the same error keeps Ember's frames
    filtering("off")
    with pytest.raises(kind, match=text) as info:
        call()
    assert any(f.startswith(EMBER_DIR) for f in _files(info.value))
    assert not getattr(info.value, "__notes__", None)


def test_an_error_ember_handles_inside_is_left_alone(monkeypatch) -> None:
    """A public function called from inside Ember does not filter (the exception may be
    caught there): only the entry the user called does, once."""
    seen = []
    real = traceback_util.filter_exception
    monkeypatch.setattr(traceback_util, "filter_exception",
                        lambda e: (seen.append(type(e)), real(e)))
    # `x + object()`: jnp.add's TypeError is caught by the operator, which returns
    # NotImplemented; Python then raises its own error, which no boundary filters
    with pytest.raises(TypeError, match="unsupported operand"):
        jnp.ones(3) + object()
    assert seen == []
    # `x + y` with bad shapes: the operator, ufunc and lax.add entries are all on the
    # stack; only the operator (the user's call) filters
    with pytest.raises(TypeError, match="incompatible shapes"):
        jnp.ones(3) + jnp.ones(4)
    assert seen == [TypeError]


def test_public_entries_keep_identity_signature_and_docs() -> None:
    import inspect

    from ember.lax import _ops
    from ember.numpy import _manipulation
    assert jnp.abs is jnp.absolute
    assert ember.remat is ember.checkpoint
    assert jnp.reshape.__wrapped__ is _manipulation.reshape
    assert jnp.reshape.__doc__ == _manipulation.reshape.__doc__
    assert inspect.signature(jnp.reshape) == inspect.signature(_manipulation.reshape)
    assert traceback_util.unwrap(lax.add) is _ops.add
    assert traceback_util.unwrap(_ops.add) is _ops.add
    assert traceback_util.unwrap([]) == []
    # lax.reduce still recognizes lax.add as the sum monoid through its entry
    jaxpr = str(ember.make_jaxpr(lambda x: lax.reduce(x, 0.0, lax.add, (0,)))(jnp.ones(3)))
    assert "reduce_sum" in jaxpr
