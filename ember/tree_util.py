"""Pytrees: flatten nested Python containers into leaves and a structure, and back.

Input: any Python value (a "pytree"). Tuples, lists, dicts, ``None``, namedtuples,
``collections.OrderedDict``, ``collections.defaultdict`` and every type registered with
:func:`register_pytree_node` / :func:`register_pytree_node_class` /
:func:`register_pytree_with_keys` are *nodes*; every other value is a *leaf*. An
``is_leaf`` predicate, where accepted, can stop the recursion early at any value.

Output: :func:`tree_flatten` returns ``(leaves, treedef)``: the leaves in left-to-right
(depth-first) order and a :class:`PyTreeDef` describing everything but the leaves.
:func:`tree_unflatten` inverts it. The rest of the API (``tree_map``, ``tree_leaves``,
key paths, ...) is built on these two, with ``jax.tree_util`` semantics.

Invariants:

- ``tree_unflatten(*reversed(tree_flatten(t)))`` rebuilds ``t`` (dicts with their keys in
  sorted order, OrderedDicts in insertion order, namedtuples and registered classes as
  the same class).
- Dict children are ordered by sorted key, so ``{'b': 1, 'a': 2}`` and ``{'a': 2, 'b': 1}``
  have equal treedefs and the same leaf order.
- ``None`` is a node with no children, never a leaf.
- A :class:`PyTreeDef` is immutable and hashable; two treedefs are equal iff they have the
  same node types, equal auxiliary data (dict keys, custom aux data, compared with ``==``)
  and the same shape. Its hash is computed once and cached, since treedefs are part of the
  jit cache key; auxiliary data that cannot be hashed (e.g. a dict) is left out of the hash,
  as JAX does, so such trees still work as jit arguments.
- Only exact types are looked up in the registry: a subclass of ``dict`` or ``list`` that
  is not registered is a leaf (namedtuples, i.e. tuple subclasses with ``_fields``, are
  the exception).

Internally a treedef wraps a nested tuple "node": ``_LEAF`` (``None``) for a leaf, or
``(node_type, aux_data, children)`` where ``children`` is a tuple of nodes. Nested tuples
give C-speed ``==`` and ``hash``.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "Partial",
    "PyTreeDef",
    "SequenceKey",
    "all_leaves",
    "flatten_one_level",
    "flatten_one_level_with_keys",
    "is_tree_node",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "register_static",
    "tree_all",
    "tree_broadcast",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_reduce_associative",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "treedef_children",
    "treedef_is_leaf",
    "treedef_tuple",
]

IsLeaf = Callable[[Any], bool] | None

# A node is either _LEAF or (node_type, aux_data, children: tuple[node, ...]).
_LEAF = None
_NoneType = type(None)
_NONE_NODE = (_NoneType, None, ())


# ---------------------------------------------------------------------------------------
# Key entries and key paths
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """Key of a tuple or list child: ``str`` is ``[idx]``."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class DictKey:
    """Key of a dict child: ``str`` is ``[repr(key)]``."""

    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """Key of an attribute child (namedtuple fields): ``str`` is ``.name``."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """Key of the i-th child of a node registered without keys: ``str`` is ``[i]``."""

    key: int

    def __str__(self) -> str:
        return f"[{self.key!r}]"


KeyEntry = Any  # one of the classes above, or any user object with a __str__
KeyPath = tuple[KeyEntry, ...]


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """Render a key path, e.g. ``(SequenceKey(0), DictKey('w'))`` -> ``"[0]['w']"``.

    With ``simple=True`` each entry is shown by its bare value (``0``, ``w``) and the
    entries are joined with ``separator``.
    """
    if not simple:
        return separator.join(str(k) for k in keys)
    return separator.join(_simple_key_str(k) for k in keys)


def _simple_key_str(k: KeyEntry) -> str:
    if isinstance(k, SequenceKey):
        return str(k.idx)
    if isinstance(k, DictKey):
        return str(k.key)
    if isinstance(k, GetAttrKey):
        return k.name
    if isinstance(k, FlattenedIndexKey):
        return str(k.key)
    return str(k)


# ---------------------------------------------------------------------------------------
# The registry
# ---------------------------------------------------------------------------------------


class _NodeHandler:
    """How to take apart and rebuild one registered node type."""

    __slots__ = ("flatten", "unflatten", "flatten_with_keys")

    def __init__(
        self,
        flatten: Callable[[Any], tuple[Iterable[Any], Any]],
        unflatten: Callable[[Any, Iterable[Any]], Any],
        flatten_with_keys: Callable[[Any], tuple[Iterable[tuple[KeyEntry, Any]], Any]] | None,
    ) -> None:
        self.flatten = flatten
        self.unflatten = unflatten
        self.flatten_with_keys = flatten_with_keys


_registry: dict[type, _NodeHandler] = {}


def register_pytree_node(
    nodetype: type,
    flatten_func: Callable[[Any], tuple[Iterable[Any], Any]],
    unflatten_func: Callable[[Any, Iterable[Any]], Any],
    flatten_with_keys_func: (
        Callable[[Any], tuple[Iterable[tuple[KeyEntry, Any]], Any]] | None
    ) = None,
) -> None:
    """Make ``nodetype`` a pytree node.

    ``flatten_func(x) -> (children, aux_data)``; ``unflatten_func(aux_data, children) -> x``.
    ``aux_data`` must be hashable and comparable with ``==`` (it is part of the treedef).
    Raises ValueError if ``nodetype`` is already a node type.
    """
    if not isinstance(nodetype, type):
        raise TypeError(f"register_pytree_node expects a type, got {nodetype!r}")
    if nodetype in _registry:
        raise ValueError(f"Duplicate pytree node registration for type {nodetype!r}")
    _registry[nodetype] = _NodeHandler(flatten_func, unflatten_func, flatten_with_keys_func)


def register_pytree_with_keys(
    nodetype: type,
    flatten_with_keys: Callable[[Any], tuple[Iterable[tuple[KeyEntry, Any]], Any]],
    unflatten_func: Callable[[Any, Iterable[Any]], Any],
    flatten_func: Callable[[Any], tuple[Iterable[Any], Any]] | None = None,
) -> None:
    """Like :func:`register_pytree_node`, with a flatten that names each child.

    ``flatten_with_keys(x) -> (((key, child), ...), aux_data)``; the keys show up in
    :func:`tree_flatten_with_path`. ``flatten_func`` defaults to dropping the keys.
    """
    if flatten_func is None:

        def flatten_func(x: Any) -> tuple[list[Any], Any]:
            key_children, aux = flatten_with_keys(x)
            return [c for _, c in key_children], aux

    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: register ``cls`` using its own methods.

    ``cls`` must define ``tree_flatten(self) -> (children, aux_data)`` and the classmethod
    ``tree_unflatten(cls, aux_data, children)``. Returns ``cls`` unchanged.
    """
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def _sorted_keys(d: dict) -> list:
    try:
        return sorted(d)
    except TypeError:
        pass
    # Mixed key types: order by type name first, then by value within a type.
    try:
        return sorted(d, key=lambda k: (type(k).__module__, type(k).__qualname__, k))
    except TypeError as e:
        raise ValueError(f"pytree dict keys must be sortable; cannot order keys {list(d)!r}") from e


def _flatten_ordereddict(x: collections.OrderedDict) -> tuple[list[Any], tuple]:
    keys = tuple(x)
    return [x[k] for k in keys], keys


def _unflatten_ordereddict(keys: tuple, children: Iterable[Any]) -> collections.OrderedDict:
    return collections.OrderedDict(zip(keys, children))


def _flatten_defaultdict(x: collections.defaultdict) -> tuple[list[Any], tuple]:
    keys = tuple(_sorted_keys(x))
    return [x[k] for k in keys], (x.default_factory, keys)


def _unflatten_defaultdict(aux: tuple, children: Iterable[Any]) -> collections.defaultdict:
    factory, keys = aux
    return collections.defaultdict(factory, zip(keys, children))


def _flatten_dict(x: dict) -> tuple[list[Any], tuple]:
    keys = tuple(_sorted_keys(x))
    return [x[k] for k in keys], keys


def _keyed_dict(x: dict) -> tuple[list[tuple[KeyEntry, Any]], tuple]:
    keys = tuple(_sorted_keys(x))
    return [(DictKey(k), x[k]) for k in keys], keys


def _keyed_ordereddict(x: collections.OrderedDict) -> tuple[list[tuple[KeyEntry, Any]], tuple]:
    keys = tuple(x)
    return [(DictKey(k), x[k]) for k in keys], keys


def _keyed_defaultdict(x: collections.defaultdict) -> tuple[list[tuple[KeyEntry, Any]], tuple]:
    keys = tuple(_sorted_keys(x))
    return [(DictKey(k), x[k]) for k in keys], (x.default_factory, keys)


def _keyed_sequence(x: Sequence) -> tuple[list[tuple[KeyEntry, Any]], None]:
    return [(SequenceKey(i), c) for i, c in enumerate(x)], None


register_pytree_node(tuple, lambda x: (x, None), lambda _, c: tuple(c), _keyed_sequence)
register_pytree_node(list, lambda x: (x, None), lambda _, c: list(c), _keyed_sequence)
register_pytree_node(dict, _flatten_dict, lambda keys, c: dict(zip(keys, c)), _keyed_dict)
register_pytree_node(_NoneType, lambda x: ((), None), lambda _, c: None, lambda x: ((), None))
register_pytree_node(
    collections.OrderedDict, _flatten_ordereddict, _unflatten_ordereddict, _keyed_ordereddict
)
register_pytree_node(
    collections.defaultdict, _flatten_defaultdict, _unflatten_defaultdict, _keyed_defaultdict
)


def _is_namedtuple_type(t: type) -> bool:
    return issubclass(t, tuple) and hasattr(t, "_fields")


# ---------------------------------------------------------------------------------------
# Flatten / unflatten (the hot path)
# ---------------------------------------------------------------------------------------


def _flatten(x: Any, leaves: list, is_leaf: IsLeaf) -> Any:
    """Append the leaves of ``x`` to ``leaves``; return the node describing ``x``."""
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    t = type(x)
    if t is tuple:
        return (tuple, None, tuple([_flatten(c, leaves, is_leaf) for c in x]))
    if t is list:
        return (list, None, tuple([_flatten(c, leaves, is_leaf) for c in x]))
    if t is dict:
        keys = tuple(_sorted_keys(x))
        return (dict, keys, tuple([_flatten(x[k], leaves, is_leaf) for k in keys]))
    if x is None:
        return _NONE_NODE
    handler = _registry.get(t)
    if handler is not None:
        children, aux = handler.flatten(x)
        return (t, aux, tuple([_flatten(c, leaves, is_leaf) for c in children]))
    if isinstance(x, tuple) and hasattr(t, "_fields"):
        return (t, None, tuple([_flatten(c, leaves, is_leaf) for c in x]))
    leaves.append(x)
    return _LEAF


def _unflatten(node: Any, it: Iterator[Any]) -> Any:
    if node is _LEAF:
        return next(it)
    t, aux, children = node
    vals = [_unflatten(c, it) for c in children]
    if t is tuple:
        return tuple(vals)
    if t is list:
        return vals
    if t is dict:
        return dict(zip(aux, vals))
    if t is _NoneType:
        return None
    handler = _registry.get(t)
    if handler is not None:
        return handler.unflatten(aux, vals)
    return t(*vals)  # namedtuple


def _flatten_one(x: Any) -> tuple[type, Any, list[Any]] | None:
    """One level of flattening: ``(type, aux, children)``, or None if ``x`` is a leaf."""
    t = type(x)
    handler = _registry.get(t)
    if handler is not None:
        children, aux = handler.flatten(x)
        return t, aux, list(children)
    if isinstance(x, tuple) and hasattr(t, "_fields"):
        return t, None, list(x)
    return None


def _flatten_one_with_keys(x: Any) -> tuple[type, Any, list[tuple[KeyEntry, Any]]] | None:
    """Like :func:`_flatten_one`, but each child comes with its key entry."""
    t = type(x)
    handler = _registry.get(t)
    if handler is not None:
        if handler.flatten_with_keys is not None:
            key_children, aux = handler.flatten_with_keys(x)
            return t, aux, list(key_children)
        children, aux = handler.flatten(x)
        return t, aux, [(FlattenedIndexKey(i), c) for i, c in enumerate(children)]
    if isinstance(x, tuple) and hasattr(t, "_fields"):
        return t, None, [(GetAttrKey(f), c) for f, c in zip(t._fields, x)]
    return None


def _flatten_with_path(
    x: Any, path: KeyPath, out: list[tuple[KeyPath, Any]], is_leaf: Callable[..., bool] | None,
    takes_path: bool = False,
) -> Any:
    if is_leaf is not None and (is_leaf(path, x) if takes_path else is_leaf(x)):
        out.append((path, x))
        return _LEAF
    one = _flatten_one_with_keys(x)
    if one is None:
        out.append((path, x))
        return _LEAF
    t, aux, key_children = one
    return (
        t,
        aux,
        tuple([_flatten_with_path(c, (*path, k), out, is_leaf, takes_path)
               for k, c in key_children]),
    )


def _count(node: Any) -> tuple[int, int]:
    """(num_leaves, num_nodes) of a node."""
    if node is _LEAF:
        return 1, 1
    leaves, nodes = 0, 1
    for c in node[2]:
        lv, nd = _count(c)
        leaves += lv
        nodes += nd
    return leaves, nodes


def _node_repr(node: Any) -> str:
    if node is _LEAF:
        return "*"
    t, aux, children = node
    parts = [_node_repr(c) for c in children]
    if t is tuple:
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if t is list:
        return "[" + ", ".join(parts) + "]"
    if t is dict:
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(aux, parts)) + "}"
    if t is _NoneType:
        return "None"
    if t is collections.OrderedDict:
        return "OrderedDict({" + ", ".join(f"{k!r}: {p}" for k, p in zip(aux, parts)) + "})"
    if t is collections.defaultdict:
        factory, keys = aux
        body = ", ".join(f"{k!r}: {p}" for k, p in zip(keys, parts))
        return f"defaultdict({factory!r}, {{{body}}})"
    if t not in _registry and _is_namedtuple_type(t):
        fields = ", ".join(f"{f}={p}" for f, p in zip(t._fields, parts))
        return f"{t.__name__}({fields})"
    return f"CustomNode({t.__name__}[{aux!r}], [{', '.join(parts)}])"


def _node_kind(node: Any) -> str:
    if node is _LEAF:
        return "leaf"
    t = node[0]
    if t is _NoneType:
        return "None"
    return t.__name__


# ---------------------------------------------------------------------------------------
# PyTreeDef
# ---------------------------------------------------------------------------------------


class PyTreeDef:
    """The structure of a pytree: everything except its leaves. Immutable and hashable."""

    __slots__ = ("_node", "_hash", "_num_leaves", "_num_nodes")

    def __init__(self, node: Any, num_leaves: int | None = None) -> None:
        object.__setattr__(self, "_node", node)
        object.__setattr__(self, "_hash", None)
        object.__setattr__(self, "_num_leaves", num_leaves)
        object.__setattr__(self, "_num_nodes", None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("PyTreeDef is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("PyTreeDef is immutable")

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            try:
                h = hash(self._node)
            except TypeError:
                # Custom auxiliary data that cannot be hashed (a dict, a list): JAX accepts
                # it and compares it with ==, so the hash leaves it out (equal trees still
                # hash equal; unequal ones that differ only there share a bucket).
                h = hash(_hashable_skeleton(self._node))
            object.__setattr__(self, "_hash", h)
        return h

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        if self._hash is not None and other._hash is not None and self._hash != other._hash:
            return False
        return bool(self._node == other._node)

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __repr__(self) -> str:
        return f"PyTreeDef({_node_repr(self._node)})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (PyTreeDef, (self._node, self._num_leaves))

    def _counts(self) -> None:
        lv, nd = _count(self._node)
        object.__setattr__(self, "_num_leaves", lv)
        object.__setattr__(self, "_num_nodes", nd)

    @property
    def num_leaves(self) -> int:
        """Number of leaves in the trees with this structure."""
        if self._num_leaves is None:
            self._counts()
        return self._num_leaves  # type: ignore[return-value]

    @property
    def num_nodes(self) -> int:
        """Number of nodes, counting leaves and ``None`` nodes."""
        if self._num_nodes is None:
            self._counts()
        return self._num_nodes  # type: ignore[return-value]

    @property
    def node_data(self) -> tuple[type, Any] | None:
        """``(node_type, aux_data)`` of the root, or None if the root is a leaf."""
        if self._node is _LEAF:
            return None
        return self._node[0], self._node[1]

    def children(self) -> list[PyTreeDef]:
        """Treedefs of the root's children (empty for a leaf or ``None``)."""
        if self._node is _LEAF:
            return []
        return [PyTreeDef(c) for c in self._node[2]]

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Build the tree with this structure and the given leaves (in order)."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(
                f"Too {'few' if len(leaves) < self.num_leaves else 'many'} leaves for "
                f"PyTreeDef; expected {self.num_leaves}, got {len(leaves)}: {self!r}"
            )
        return _unflatten(self._node, iter(leaves))

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """Flatten ``tree`` down to this structure only.

        This treedef must be a prefix of ``tree``'s structure: where this treedef has a
        leaf, the whole corresponding subtree of ``tree`` is returned as one element.
        Raises ValueError naming the first mismatch and its key path.
        """
        out: list[Any] = []
        _flatten_up_to(self._node, tree, out, ())
        return out

    def walk(
        self,
        f_node: Callable[[Any, Any], Any],
        f_leaf: Callable[[Any], Any] | None,
        leaves: Iterable[Any],
    ) -> Any:
        """Fold over the structure: ``f_node(children_results, node_data)`` at nodes and
        ``f_leaf(leaf)`` (identity if None) at leaves."""
        it = iter(leaves)

        def go(node: Any) -> Any:
            if node is _LEAF:
                x = next(it)
                return x if f_leaf is None else f_leaf(x)
            return f_node(tuple(go(c) for c in node[2]), (node[0], node[1]))

        return go(self._node)


def _hashable_skeleton(node: Any) -> Any:
    """``node`` with every unhashable auxiliary datum replaced by its type's name."""
    if node is _LEAF:
        return node
    t, aux, children = node
    try:
        hash(aux)
    except TypeError:
        aux = ("<unhashable>", type(aux).__qualname__)
    return (t, aux, tuple(_hashable_skeleton(c) for c in children))


def _flatten_up_to(node: Any, x: Any, out: list[Any], path: KeyPath) -> None:
    if node is _LEAF:
        out.append(x)
        return
    t, aux, children = node
    where = f" at key path {keystr(path)}" if path else " at the root"
    if t is _NoneType:
        if x is not None:
            raise ValueError(f"Expected None{where}, got {_short_repr(x)}")
        return
    if type(x) is not t:
        raise ValueError(f"Expected {t.__name__}{where}, got {type(x).__name__}: {_short_repr(x)}")
    one = _flatten_one_with_keys(x)
    assert one is not None
    _, x_aux, key_children = one
    if t is tuple or t is list or (t not in _registry and _is_namedtuple_type(t)):
        if len(key_children) != len(children):
            raise ValueError(
                f"{t.__name__} arity mismatch{where}: expected {len(children)} children, "
                f"got {len(key_children)}: {_short_repr(x)}"
            )
    elif t is dict or t is collections.OrderedDict or t is collections.defaultdict:
        if x_aux != aux:
            exp_keys = aux[1] if t is collections.defaultdict else aux
            got_keys = x_aux[1] if t is collections.defaultdict else x_aux
            if list(exp_keys) != list(got_keys):
                raise ValueError(
                    f"Dict key mismatch{where}: expected keys {list(exp_keys)!r}, "
                    f"got keys {list(got_keys)!r}"
                )
            raise ValueError(
                f"defaultdict default_factory mismatch{where}: expected {aux[0]!r}, "
                f"got {x_aux[0]!r}"
            )
    else:
        if x_aux != aux:
            raise ValueError(
                f"Custom node data mismatch for {t.__name__}{where}: expected {aux!r}, "
                f"got {x_aux!r}"
            )
        if len(key_children) != len(children):
            raise ValueError(
                f"Custom node {t.__name__} arity mismatch{where}: expected "
                f"{len(children)} children, got {len(key_children)}"
            )
    for child_node, (k, c) in zip(children, key_children):
        _flatten_up_to(child_node, c, out, (*path, k))


def _short_repr(x: Any, limit: int = 80) -> str:
    r = repr(x)
    return r if len(r) <= limit else r[: limit - 3] + "..."


# ---------------------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------------------


def tree_flatten(tree: Any, is_leaf: IsLeaf = None) -> tuple[list[Any], PyTreeDef]:
    """Flatten a pytree into its leaves and its structure.

    Args:
        tree: a pytree: nested tuples, lists, dicts (keys in sorted order), None and
            registered nodes, with anything else as leaves.
        is_leaf: an optional predicate; a subtree for which it is true is a leaf.

    Returns:
        ``(leaves, treedef)``: the leaves in flatten order, and a ``PyTreeDef`` that
        ``tree_unflatten`` turns back into a tree.

    Example:
        >>> leaves, treedef = ember.tree_util.tree_flatten({"b": (1, 2), "a": 3})
        >>> leaves
        [3, 1, 2]
    """
    leaves: list[Any] = []
    node = _flatten(tree, leaves, is_leaf)
    return leaves, PyTreeDef(node, len(leaves))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree from its structure and leaves (the inverse of ``tree_flatten``).

    Args:
        treedef: the structure, a ``PyTreeDef``.
        leaves: as many leaves as ``treedef`` has, in flatten order.

    Returns:
        The pytree of structure ``treedef`` holding ``leaves``.
    """
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: IsLeaf = None) -> list[Any]:
    """Return the leaves of a pytree.

    Args:
        tree: a pytree.
        is_leaf: an optional predicate; a subtree for which it is true is a leaf.

    Returns:
        The list of leaves, in flatten order (``tree_flatten(tree)[0]``).
    """
    leaves: list[Any] = []
    _flatten(tree, leaves, is_leaf)
    return leaves


def tree_structure(tree: Any, is_leaf: IsLeaf = None) -> PyTreeDef:
    """The treedef of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def _flatten_rest(treedef: PyTreeDef, rest: Sequence[Any], fname: str) -> list[list[Any]]:
    out = []
    for i, r in enumerate(rest):
        try:
            out.append(treedef.flatten_up_to(r))
        except ValueError as e:
            raise ValueError(
                f"{fname}: argument {i + 1} does not have the structure of the first tree.\n"
                f"  first tree: {treedef!r}\n"
                f"  argument {i + 1}: {tree_structure(r)!r}\n"
                f"  {e}"
            ) from None
    return out


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: IsLeaf = None) -> Any:
    """Apply ``f`` leafwise: ``f(leaf, *leaves_of_rest)``, same structure as ``tree``.

    Each tree in ``rest`` must have ``tree``'s structure (or one that ``tree``'s structure
    is a prefix of); otherwise ValueError names both structures.
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    others = _flatten_rest(treedef, rest, "tree_map")
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others)])


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Like :func:`tree_flatten`, but each leaf comes as ``(key_path, leaf)``.

    With ``is_leaf_takes_path=True``, ``is_leaf`` is called as ``is_leaf(key_path, x)``.
    """
    out: list[tuple[KeyPath, Any]] = []
    node = _flatten_with_path(tree, (), out, is_leaf, is_leaf_takes_path)
    return out, PyTreeDef(node, len(out))


def tree_leaves_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> list[tuple[KeyPath, Any]]:
    """The ``(key_path, leaf)`` pairs of ``tree`` (``is_leaf`` as in
    :func:`tree_flatten_with_path`)."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[..., bool] | None = None,
                       is_leaf_takes_path: bool = False) -> Any:
    """Like :func:`tree_map`, but calls ``f(key_path, leaf, *leaves_of_rest)``."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = _flatten_rest(treedef, rest, "tree_map_with_path")
    return treedef.unflatten([f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


def tree_all(tree: Any, *, is_leaf: IsLeaf = None) -> bool:
    """True iff every leaf of ``tree`` is truthy."""
    return all(tree_leaves(tree, is_leaf))


class _Missing:
    """The default of an optional argument whose every value, None included, is valid."""

    def __repr__(self) -> str:
        return "<missing>"


_MISSING: Any = _Missing()


def tree_reduce(function: Callable[[Any, Any], Any], tree: Any,
                initializer: Any = _MISSING, is_leaf: IsLeaf = None) -> Any:
    """Fold ``function`` over the leaves left to right, as ``functools.reduce`` does.

    Args:
      function: ``function(accumulated, leaf) -> accumulated``.
      tree: the pytree whose leaves are folded.
      initializer: the starting value; without it the first leaf is, and an empty tree
        raises ``TypeError`` (as ``functools.reduce``).
      is_leaf: as in :func:`tree_flatten`.

    Returns:
      The accumulated value, e.g. ``tree_reduce(operator.add, [1, (2, 3)]) == 6``.
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _MISSING:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_reduce_associative(operation: Callable[[Any, Any], Any], tree: Any, *,
                            identity: Any = _MISSING, is_leaf: IsLeaf = None) -> Any:
    """Reduce the leaves with an associative ``operation`` as a balanced binary tree.

    The leaves are split in halves recursively (``len // 2`` on the left), so the depth of
    ``operation`` calls is logarithmic in the number of leaves: for ``[a, b, c, d, e]``
    the result is ``op(op(a, b), op(c, op(d, e)))``.

    Args:
      operation: an associative binary function.
      tree: the pytree whose leaves are reduced.
      identity: returned for a tree without leaves (required then: ``TypeError``
        otherwise); never combined with leaves.
      is_leaf: as in :func:`tree_flatten`.

    Returns:
      The reduced value.
    """
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _MISSING:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity

    def halve(lo: int, hi: int) -> Any:
        if hi - lo == 1:
            return leaves[lo]
        mid = lo + (hi - lo) // 2
        return operation(halve(lo, mid), halve(mid, hi))

    return halve(0, len(leaves))


def tree_broadcast(prefix_tree: Any, full_tree: Any, is_leaf: IsLeaf = None) -> Any:
    """Repeat each leaf of ``prefix_tree`` over the subtree of ``full_tree`` it stands for.

    Args:
      prefix_tree: a pytree whose structure is a prefix of ``full_tree``'s.
      full_tree: the pytree giving the result's structure.
      is_leaf: as in :func:`tree_flatten`, applied to ``prefix_tree``.

    Returns:
      A pytree with ``full_tree``'s structure, e.g. ``tree_broadcast((1, 2), (0, [0, 0]))
      == (1, [2, 2])``. Raises ``ValueError`` naming the key path where ``prefix_tree`` is
      not a prefix.
    """
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    try:
        subtrees = prefix_def.flatten_up_to(full_tree)
    except ValueError as e:
        raise ValueError(f"tree_broadcast: prefix_tree is not a prefix of full_tree: {e}") from None
    full_def = tree_structure(full_tree)
    leaves: list[Any] = []
    for value, sub in zip(prefix_leaves, subtrees):
        leaves.extend([value] * tree_structure(sub).num_leaves)
    return full_def.unflatten(leaves)


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """Take apart the root node only: ``(children, aux_data)``.

    A namedtuple's aux data is its class; a leaf raises
    ``ValueError("can't tree-flatten type: ...")``.
    """
    one = _flatten_one(tree)
    if one is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    t, aux, children = one
    if t not in _registry:  # a namedtuple
        aux = t
    return children, aux


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[KeyEntry, Any]], Hashable]:
    """Like :func:`flatten_one_level`, with each child as a ``(key, child)`` pair."""
    one = _flatten_one_with_keys(tree)
    if one is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    t, aux, key_children = one
    if t not in _registry:
        aux = t
    return key_children, aux


def is_tree_node(typ: type) -> bool:
    """True iff values of type ``typ`` are pytree nodes (registered types, namedtuples,
    ``type(None)``), False if they are leaves."""
    return typ in _registry or (isinstance(typ, type) and _is_namedtuple_type(typ))


def register_pytree_with_keys_class(cls: type) -> type:
    """Class decorator: register ``cls`` with its ``tree_flatten_with_keys`` method.

    ``cls`` defines ``tree_flatten_with_keys(self) -> (((key, child), ...), aux_data)``,
    the classmethod ``tree_unflatten(cls, aux_data, children)`` and optionally
    ``tree_flatten(self)``. Returns ``cls`` unchanged.
    """
    flatten = (lambda x: x.tree_flatten()) if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              flatten)
    return cls


def register_static(cls: type) -> type:
    """Register ``cls`` as a node with no children: its instances are part of the treedef.

    A static value is passed to ``jit`` as part of the cache key (like a ``static_argnums``
    argument), so ``cls`` must be hashable and comparable. Usable as a decorator.
    """
    register_pytree_node(cls, lambda x: ((), x), lambda x, _: x,
                         lambda x: ((), x))
    return cls


def register_dataclass(nodetype: type, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> type:
    """Register a dataclass-like type as a pytree node; usable as a class decorator.

    Args:
      nodetype: the class; its constructor takes every field as a keyword.
      data_fields: the fields that are children (leaves or subtrees; traced under jit).
      meta_fields: the fields that are auxiliary data (static under jit: hashable and
        comparable with ``==``).
      drop_fields: ``init=True`` dataclass fields that are neither (not rebuilt).

    Both ``data_fields`` and ``meta_fields`` are given, or neither: then ``nodetype`` must
    be a dataclass, and a field is meta data iff its metadata has ``static=True``
    (``dataclasses.field(metadata={"static": True})`` or ``ember.tree.static()``).

    Returns:
      ``nodetype``. The treedef's aux data is the tuple of meta field values; the key
      path of a child is ``GetAttrKey(name)``.
    """
    if (data_fields is None) != (meta_fields is None):
        raise TypeError("register_dataclass: data_fields and meta_fields must both be specified"
                        f" when either is specified. Got {data_fields=} {meta_fields=}.")
    if data_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required when"
                            f" nodetype is not a dataclass. Got {nodetype=}.")
        fields = dataclasses.fields(nodetype)
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data = tuple(data_fields)
    meta = tuple(meta_fields)  # type: ignore[arg-type]
    if dataclasses.is_dataclass(nodetype):
        init = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        given = {*data, *meta}
        if given != init:
            msg = ("data_fields and meta_fields must include all dataclass fields with"
                   " ``init=True`` and only them.")
            if init - given:
                msg += (f" Missing fields: {init - given}. Add them to drop_fields to suppress"
                        " this error.")
            if given - init:
                msg += f" Unexpected fields: {given - init}."
            raise ValueError(msg)
    if set(data) & set(meta):
        raise ValueError("data_fields and meta_fields must not overlap. Overlapping fields: "
                         f"{set(data) & set(meta)}.")

    def flatten(x: Any) -> tuple[list[Any], tuple]:
        return [getattr(x, n) for n in data], tuple(getattr(x, n) for n in meta)

    def flatten_with_keys(x: Any) -> tuple[list[tuple[KeyEntry, Any]], tuple]:
        return ([(GetAttrKey(n), getattr(x, n)) for n in data],
                tuple(getattr(x, n) for n in meta))

    def unflatten(aux: tuple, children: Iterable[Any]) -> Any:
        return nodetype(**dict(zip(meta, aux)), **dict(zip(data, children)))

    register_pytree_node(nodetype, flatten, unflatten, flatten_with_keys)
    return nodetype


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree: the bound arguments are its children and
    the function is its auxiliary data, so a ``Partial`` can be passed to and returned from
    ``jit``-compiled functions (the function must be hashable).

    ``Partial(f, *args, **kwargs)(*more) == f(*args, *more, **kwargs)``; the leaves are
    those of ``args`` then of ``kwargs`` (by sorted key).
    """


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]),
)


def all_leaves(iterable: Iterable[Any], is_leaf: IsLeaf = None) -> bool:
    """True iff every element of ``iterable`` is a leaf (not a pytree node)."""
    for x in iterable:
        if is_leaf is not None and is_leaf(x):
            continue
        if _flatten_one(x) is not None:
            return False
    return True


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True iff ``treedef`` is the structure of a single leaf."""
    return treedef._node is _LEAF


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The treedefs of the root's children."""
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The treedef of a tuple whose children have the given treedefs."""
    return PyTreeDef((tuple, None, tuple(t._node for t in treedefs)))


def tree_transpose(
    outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any
) -> Any:
    """Turn an outer-of-inner tree into an inner-of-outer tree.

    ``pytree_to_transpose`` has structure ``outer_treedef`` composed with
    ``inner_treedef``; the result has ``inner_treedef`` composed with ``outer_treedef``.
    If ``inner_treedef`` is None it is taken from the first outer leaf.
    """
    outer = outer_treedef.flatten_up_to(pytree_to_transpose)
    if inner_treedef is None:
        if not outer:
            raise ValueError("tree_transpose: cannot infer inner_treedef from an empty tree")
        inner_treedef = tree_structure(outer[0])
    inner = [inner_treedef.flatten_up_to(x) for x in outer]
    columns = zip(*inner) if inner else [[] for _ in range(inner_treedef.num_leaves)]
    return inner_treedef.unflatten([outer_treedef.unflatten(col) for col in columns])

# A JAX name this module lacks: AttributeError saying Ember does not implement it yet.
from ember._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)
