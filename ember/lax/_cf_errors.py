"""Type checks of control-flow bodies, raising TypeErrors worded as JAX 0.10.2 words them.

Input: the pytrees and abstract values of a loop carry (in and out) or of the outputs of
cond/switch branches. Output: None, or a TypeError naming each differing component by its
key path (`the input carry component c[1] has type float32[3] but ...`), so a user can
search for the message.
Invariant: weak types never make a mismatch (JAX's typematch compares shape and dtype).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ember.core.aval import ShapedArray
from ember.prims.control_flow import typematch
from ember.tree_util import (
    PyTreeDef,
    _flatten_one_with_keys,
    keystr,
    tree_flatten_with_path,
    tree_unflatten,
)


def long_str(aval: ShapedArray) -> str:
    """JAX's `str_short()` of an aval: `float32[3]` (long dtype names)."""
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


def aval_repr(aval: ShapedArray) -> str:
    weak = ", weak_type=True" if aval.weak_type else ""
    return f"ShapedArray({long_str(aval)}{weak})"


def _mismatch_extra(a: ShapedArray, b: ShapedArray) -> str:
    what = []
    if a.dtype != b.dtype:
        what.append("the dtypes do not match")
    if a.shape != b.shape:
        what.append("the shapes do not match")
    if not what:
        return ""
    return ", so " + (what[0] if len(what) == 1 else ", ".join(what[:-1]) + ", and "
                      + what[-1])


def fun_info(fun: Callable) -> str:
    """`name at file:line` of a function (through partials and wrappers)."""
    while isinstance(fun, functools.partial):
        fun = fun.func
    fun = inspect.unwrap(fun)
    code = getattr(fun, "__code__", None)
    if code is None:
        return "<unknown>"
    return f"{fun.__name__} at {code.co_filename}:{code.co_firstlineno}"


def _capitalize(s: str) -> str:
    return s[:1].upper() + s[1:]


def _bullets(diffs: list[str], *, loose: bool) -> str:
    """One difference as a sentence; several as a bulleted list. JAX writes two list
    styles: `loose` ends every item but the last with `;` and a newline and joins them
    with another newline; the other ends items with `;` and joins with newlines."""
    if len(diffs) == 1:
        return f"{_capitalize(diffs[0])}.\n"
    if loose:
        return "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"
    return "\n".join(f"  * {d};" for d in diffs[:-1]) + f"\n  * {diffs[-1]}.\n"


class _Leaf:
    def __init__(self, label: str) -> None:
        self.label = label

    def __repr__(self) -> str:
        return self.label


def structure_errors(t1: Any, t2: Any, path: tuple = ()) -> Iterator[tuple[tuple, str, str,
                                                                             str]]:
    """(path, thing1, thing2, why) for each place two pytrees' structures differ."""
    n1, n2 = _flatten_one_with_keys(t1), _flatten_one_with_keys(t2)
    if n1 is None and n2 is None:
        return
    if type(t1) is not type(t2):
        yield path, _thing(t1), _thing(t2), "their Python types differ"
        return
    if isinstance(t1, (list, tuple)) and len(t1) != len(t2):
        name = type(t1).__name__
        yield (path, f"{name} of length {len(t1)}", f"{name} of length {len(t2)}",
               "the lengths do not match")
        return
    assert n1 is not None and n2 is not None
    (_, aux1, kids1), (_, aux2, kids2) = n1, n2
    if len(kids1) != len(kids2):
        keys1 = {getattr(k, "key", None) for k, _ in kids1}
        keys2 = {getattr(k, "key", None) for k, _ in kids2}
        diff = " ".join(repr(k) for k in keys1 ^ keys2 if k is not None)
        yield (path, f"{type(t1)} with {_children(len(kids1))}",
               f"{type(t2)} with {_children(len(kids2))}",
               "the numbers of children do not match"
               + (f", with the symmetric difference of key sets: {{{diff}}}" if diff else ""))
        return
    if aux1 != aux2:
        yield (path, f"{type(t1)} with pytree metadata {aux1}",
               f"{type(t2)} with pytree metadata {aux2}",
               "the pytree node metadata does not match")
        return
    for (k, c1), (_, c2) in zip(kids1, kids2):
        yield from structure_errors(c1, c2, (*path, k))


def _children(n: int) -> str:
    return f"{n} child" + ("ren" if n > 1 else "")


def _thing(x: Any) -> str:
    return repr(x) if isinstance(x, _Leaf) else str(type(x))


def _component(carry_name: str | None) -> Callable[[tuple], str]:
    if carry_name:
        return lambda p: (f"the input carry component {carry_name}{keystr(p)}" if p
                          else f"the input carry {carry_name}")
    return lambda p: (f"the input carry at path {keystr(p)}" if p else "the input carry")


def _first_param(fun: Callable) -> str | None:
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return None
    return params[0] if params else None


def check_carry(name: str, body_fun: Callable, in_tree: PyTreeDef,
                in_avals: Sequence[ShapedArray], out_tree: PyTreeDef,
                out_avals: Sequence[ShapedArray]) -> None:
    """Raise JAX's TypeError unless the carry out has the carry in's structure and types.

    `name` is `while_loop body` or `scan body`; components are named after body_fun's
    first parameter.
    """
    component = _component(_first_param(body_fun))
    if in_tree != out_tree:
        leaf = _Leaf("pytree leaf")
        t_in = tree_unflatten(in_tree, [leaf] * in_tree.num_leaves)
        t_out = tree_unflatten(out_tree, [leaf] * out_tree.num_leaves)
        diffs = [f"{component(p)} is a {a} but the corresponding component of the carry "
                 f"output is a {b}, so {why}" for p, a, b, why in structure_errors(t_in, t_out)]
        if not diffs:
            return
        raise TypeError(
            f"{name} function carry input and carry output must have the same pytree "
            f"structure, but they differ:\n\n{_bullets(diffs, loose=True)}\n"
            "Revise the function so that the carry output has the same pytree structure as "
            "the carry input.")
    paths = [p for p, _ in tree_flatten_with_path(
        tree_unflatten(in_tree, [_Leaf("*")] * in_tree.num_leaves))[0]]
    diffs = [f"{component(p)} has type {long_str(a)} but the corresponding output carry "
             f"component has type {long_str(b)}{_mismatch_extra(a, b)}"
             for p, a, b in zip(paths, in_avals, out_avals) if not typematch(a, b)]
    if diffs:
        raise TypeError(
            f"{name} function carry input and carry output must have equal types, but they "
            f"differ:\n\n{_bullets(diffs, loose=True)}\n"
            "Revise the function so that all output types match the corresponding input "
            "types.")


def check_branch_outputs(api: str, name1: str, name2: str, f1: Callable, f2: Callable,
                         tree1: PyTreeDef, avals1: Sequence[ShapedArray], tree2: PyTreeDef,
                         avals2: Sequence[ShapedArray]) -> None:
    """Raise JAX's TypeError unless two branches return the same structure and types."""
    who = f"{name1} is {fun_info(f1)}\n{name2} is {fun_info(f2)}\n\n"
    leaf = _Leaf("pytree leaf")
    t1 = tree_unflatten(tree1, [leaf] * tree1.num_leaves)
    if tree1 != tree2:
        t2 = tree_unflatten(tree2, [leaf] * tree2.num_leaves)

        def at(p: tuple) -> str:
            return f" at path {keystr(p)}" if p else ""

        diffs = [f"{name1} output{at(p)} is a {a} but {name2} output{at(p)} is a {b}, "
                 f"so {why}" for p, a, b, why in structure_errors(t1, t2)]
        if not diffs:
            return
        text = diffs[0] + ".\n" if len(diffs) == 1 else _bullets(diffs, loose=True)
        raise TypeError(
            f"{api} branch outputs must have the same pytree structure, but they differ:"
            f"\n\n{who}{text}\nRevise {name1} and/or {name2} so that they have the same "
            "pytree structure.")
    paths = [p for p, _ in tree_flatten_with_path(t1)[0]]
    diffs = [f"the output of {name1}{f' at path {keystr(p)}' if p else ''} has type "
             f"{long_str(a)} but the corresponding output of {name2} has type "
             f"{long_str(b)}{_mismatch_extra(a, b)}"
             for p, a, b in zip(paths, avals1, avals2) if not typematch(a, b)]
    if diffs:
        raise TypeError(
            f"{api} branches must have equal output types but they differ.\n\n{who}"
            f"{_bullets(diffs, loose=False)}\n"
            f"Revise {name1} and/or {name2} so that all output types match.")
