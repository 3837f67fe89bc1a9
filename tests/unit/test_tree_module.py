"""ember.tree (jax.tree's short names) and the tree_util additions: reduce, broadcast,
register_dataclass, register_static, Partial, one-level flattening, and pytrees whose
auxiliary data cannot be hashed (a dict) as jit arguments. JAX 0.10.2 is the reference."""

from __future__ import annotations

import dataclasses
import operator

import jax
import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import tree_util as tu

TREES = [
    [1, (2, 3), {"b": 4, "a": [5, None]}],
    {"x": (1.5,), "y": []},
    7,
    (),
]


def test_every_jax_tree_name_exists_and_agrees_with_tree_util() -> None:
    jax_names = {n for n in dir(jax.tree) if not n.startswith("_")}
    assert jax_names <= set(dir(ember.tree))
    assert set(ember.tree.__all__) == jax_names
    assert ember.tree.map is tu.tree_map and ember.tree.leaves is tu.tree_leaves


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_short_names_match_jax(tree) -> None:
    assert ember.tree.leaves(tree) == jax.tree.leaves(tree)
    assert repr(ember.tree.structure(tree)) == repr(jax.tree.structure(tree))
    leaves, treedef = ember.tree.flatten(tree)
    assert ember.tree.unflatten(treedef, leaves) == tree
    assert ember.tree.map(lambda x: x * 2, tree) == jax.tree.map(lambda x: x * 2, tree)
    assert ember.tree.all(tree) == jax.tree.all(tree)
    paths = [(tu.keystr(p), x) for p, x in ember.tree.leaves_with_path(tree)]
    assert paths == [(jax.tree_util.keystr(p), x) for p, x in jax.tree.leaves_with_path(tree)]


def test_reduce_and_reduce_associative() -> None:
    tree = [1, (2, 3), {"a": 4, "b": 5}]
    assert ember.tree.reduce(operator.add, tree) == 15
    assert ember.tree.reduce(operator.add, tree, 100) == 115
    assert ember.tree.reduce(operator.add, [], 5) == 5
    assert ember.tree.reduce(lambda a, b: [*a, b], [1, (2, 3)], [],
                             is_leaf=lambda x: isinstance(x, tuple)) == [1, (2, 3)]
    with pytest.raises(TypeError, match="reduce"):
        ember.tree.reduce(operator.add, [])
    pair = lambda a, b: (a, b)  # noqa: E731 (the grouping shows the balanced tree)
    for n in range(1, 8):
        leaves = list(range(n))
        assert (ember.tree.reduce_associative(pair, leaves)
                == jax.tree.reduce_associative(pair, leaves))
    assert ember.tree.reduce_associative(operator.add, [], identity=0) == 0
    with pytest.raises(TypeError, match="Must specify identity"):
        ember.tree.reduce_associative(operator.add, [None])


def test_broadcast() -> None:
    cases = [((1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0))), (1, None), ([1], [[0, 0]]),
             ({"a": 1}, {"a": (0, [0])}), (5, 0)]
    for prefix, full in cases:
        assert ember.tree.broadcast(prefix, full) == jax.tree.broadcast(prefix, full)
    with pytest.raises(ValueError, match="prefix"):
        ember.tree.broadcast((1, 2), (0, 0, 0))


def test_is_leaf_takes_path() -> None:
    tree = {"a": [1, 2], "b": (3, [4])}
    stop = lambda p, x: len(p) == 2  # noqa: E731
    got = [(tu.keystr(p), x) for p, x in
           ember.tree.leaves_with_path(tree, is_leaf=stop, is_leaf_takes_path=True)]
    want = [(jax.tree_util.keystr(p), x) for p, x in
            jax.tree.leaves_with_path(tree, is_leaf=stop, is_leaf_takes_path=True)]
    assert got == want and got[-1] == ("['b'][1]", [4])
    out = ember.tree.map_with_path(lambda p, x: len(p), tree, is_leaf=stop,
                                   is_leaf_takes_path=True)
    assert out == {"a": [2, 2], "b": (2, 2)}


def test_one_level_flattening_and_is_tree_node() -> None:
    from collections import namedtuple
    P = namedtuple("P", "a b")
    for x in [{"b": 1, "a": (2, 3)}, [1, 2], P(1, 2), None]:
        got, want = tu.flatten_one_level(x), jax.tree_util.flatten_one_level(x)
        assert (list(got[0]), got[1]) == (list(want[0]), want[1])
    kc, aux = tu.flatten_one_level_with_keys({"b": 1, "a": 2})
    assert [(str(k), c) for k, c in kc] == [("['a']", 2), ("['b']", 1)] and aux == ("a", "b")
    with pytest.raises(ValueError, match="can't tree-flatten type"):
        tu.flatten_one_level(3)
    for t in [int, type(None), list, dict, P, float]:
        assert tu.is_tree_node(t) == jax.tree_util.is_tree_node(t), t


@tu.register_dataclass
@dataclasses.dataclass
class Op:
    x: object
    y: object
    op: str = ember.tree.static(default="add")


@dataclasses.dataclass
class Explicit:
    w: object
    name: str
    cache: object = None


tu.register_dataclass(Explicit, data_fields=["w"], meta_fields=["name"], drop_fields=["cache"])


def test_register_dataclass_decorator_and_jit() -> None:
    m = Op(x=jnp.ones(3), y=jnp.arange(3.0))
    leaves, treedef = ember.tree.flatten(m)
    assert len(leaves) == 2 and repr(treedef) == "PyTreeDef(CustomNode(Op[('add',)], [*, *]))"
    back = ember.tree.unflatten(treedef, leaves)
    assert type(back) is Op and back.op == "add"
    assert [tu.keystr(p) for p, _ in ember.tree.leaves_with_path(m)] == [".x", ".y"]
    calls = []

    @ember.jit
    def f(m):
        calls.append(m.op)
        return m.x + m.y if m.op == "add" else m.x * m.y

    np.testing.assert_array_equal(f(m), [1, 2, 3])
    np.testing.assert_array_equal(f(Op(m.x, m.y, "mul")), [0, 1, 2])
    f(m)
    assert calls == ["add", "mul"]  # the static field is part of the cache key


def test_register_dataclass_explicit_fields_and_errors() -> None:
    leaves, treedef = ember.tree.flatten(Explicit(w=2.0, name="n", cache="dropped"))
    assert leaves == [2.0]
    back = ember.tree.unflatten(treedef, [3.0])
    assert (back.w, back.name, back.cache) == (3.0, "n", None)

    @dataclasses.dataclass
    class D:
        a: int
        b: int

    with pytest.raises(TypeError, match="must both be specified"):
        tu.register_dataclass(D, data_fields=["a"])
    with pytest.raises(ValueError, match="Missing fields: {'b'}"):
        tu.register_dataclass(D, data_fields=["a"], meta_fields=[])
    with pytest.raises(ValueError, match="Unexpected fields: {'c'}"):
        tu.register_dataclass(D, data_fields=["a", "b"], meta_fields=["c"])

    class Plain:
        pass

    with pytest.raises(TypeError, match="required when nodetype is not a dataclass"):
        tu.register_dataclass(Plain)


def test_register_static_and_pytree_with_keys_class() -> None:
    @tu.register_static
    class Tag:
        def __init__(self, v):
            self.v = v

        def __eq__(self, other):
            return isinstance(other, Tag) and other.v == self.v

        def __hash__(self):
            return hash(self.v)

    leaves, treedef = ember.tree.flatten([Tag(1), 2.0])
    assert leaves == [2.0]
    assert ember.tree.unflatten(treedef, [5.0])[0] == Tag(1)
    assert ember.tree.structure([Tag(1)]) != ember.tree.structure([Tag(2)])

    @tu.register_pytree_with_keys_class
    class KV:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def tree_flatten_with_keys(self):
            return ((tu.GetAttrKey("a"), self.a), (tu.GetAttrKey("b"), self.b)), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    assert ember.tree.leaves(KV(1, [2, 3])) == [1, 2, 3]
    assert [tu.keystr(p) for p, _ in ember.tree.leaves_with_path(KV(1, 2))] == [".a", ".b"]


def test_partial_is_a_pytree_through_jit() -> None:
    def add(a, b, scale=1.0):
        return (a + b) * scale

    p = tu.Partial(add, jnp.ones(2), scale=3.0)
    leaves = ember.tree.leaves(p)
    assert len(leaves) == 2 and leaves[1] == 3.0
    np.testing.assert_array_equal(ember.jit(lambda p, x: p(x))(p, 1.0), [6.0, 6.0])
    out = ember.jit(lambda s: tu.Partial(add, s))(2.0)
    assert isinstance(out, tu.Partial) and out.func is add
    np.testing.assert_array_equal(out(1.0), 3.0)


class Meta:
    """A custom node whose auxiliary data is a dict (unhashable), as users write."""

    def __init__(self, x, meta):
        self.x, self.meta = x, meta


tu.register_pytree_node(Meta, lambda m: ((m.x,), m.meta), lambda meta, ch: Meta(ch[0], meta))


def test_unhashable_aux_data_works_as_a_jit_argument() -> None:
    t1 = ember.tree.structure(Meta(1, {"a": 1}))
    t2 = ember.tree.structure(Meta(1, {"a": 2}))
    t3 = ember.tree.structure(Meta(1, {"a": 1}))
    assert hash(t1) == hash(t3) and t1 == t3 and t1 != t2
    assert {t1: 0}[t3] == 0
    calls = []

    @ember.jit
    def f(m):
        calls.append(dict(m.meta))
        return m.x * m.meta["a"]

    assert float(f(Meta(1.0, {"a": 2}))) == 2.0
    assert float(f(Meta(5.0, {"a": 2}))) == 10.0  # cache hit: equal dict
    assert float(f(Meta(1.0, {"a": 3}))) == 3.0   # different dict: traced again
    assert calls == [{"a": 2}, {"a": 3}]
