"""Tests for ember.tree_util: flatten/unflatten round trips, treedefs, tree_map, key paths."""

import collections
import pickle
from typing import NamedTuple

import numpy as np
import pytest

from ember import tree_util as tu


class Point(NamedTuple):
    x: object
    y: object


Pair = collections.namedtuple("Pair", ["a", "b"])


class Box:
    """Registered with register_pytree_node; aux is a label."""

    def __init__(self, label, a, b):
        self.label, self.a, self.b = label, a, b

    def __eq__(self, other):
        return type(other) is Box and (self.label, self.a, self.b) == (
            other.label,
            other.a,
            other.b,
        )

    def __repr__(self):
        return f"Box({self.label!r}, {self.a!r}, {self.b!r})"


tu.register_pytree_node(Box, lambda b: ((b.a, b.b), b.label), lambda lab, c: Box(lab, *c))


@tu.register_pytree_node_class
class Linear:
    """Registered with register_pytree_node_class."""

    def __init__(self, w, b, name="lin"):
        self.w, self.b, self.name = w, b, name

    def tree_flatten(self):
        return (self.w, self.b), self.name

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, name=aux)

    def __eq__(self, other):
        return type(other) is Linear and (self.w, self.b, self.name) == (
            other.w,
            other.b,
            other.name,
        )


class Keyed:
    def __init__(self, p, q):
        self.p, self.q = p, q

    def __eq__(self, other):
        return type(other) is Keyed and (self.p, self.q) == (other.p, other.q)


tu.register_pytree_with_keys(
    Keyed,
    lambda k: (((tu.GetAttrKey("p"), k.p), (tu.GetAttrKey("q"), k.q)), None),
    lambda _, c: Keyed(*c),
)


def roundtrip(tree):
    leaves, treedef = tu.tree_flatten(tree)
    rebuilt = tu.tree_unflatten(treedef, leaves)
    assert treedef.num_leaves == len(leaves)
    assert tu.tree_structure(rebuilt) == treedef
    return leaves, treedef, rebuilt


# ---------------------------------------------------------------------------------------
# Round trips
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tree, expected_leaves",
    [
        (1, [1]),
        ((), []),
        ([], []),
        ({}, []),
        (None, []),
        ((1, 2, 3), [1, 2, 3]),
        ([1, [2, 3]], [1, 2, 3]),
        ({"b": 2, "a": 1}, [1, 2]),
        (Point(1, 2), [1, 2]),
        (Pair(a=[1], b=(2,)), [1, 2]),
        (collections.OrderedDict([("z", 1), ("a", 2)]), [1, 2]),
        ((1, None, [2, {"k": None, "j": 3}]), [1, 2, 3]),
        ({"x": (Point(1, [2, 3]), None), "a": [{"q": 4}]}, [4, 1, 2, 3]),
        (Box("lbl", 1, (2, 3)), [1, 2, 3]),
        (Linear([1, 2], None), [1, 2]),
        (Keyed({"u": 1}, 2), [1, 2]),
    ],
)
def test_roundtrip(tree, expected_leaves):
    leaves, _, rebuilt = roundtrip(tree)
    assert leaves == expected_leaves
    assert rebuilt == tree
    assert type(rebuilt) is type(tree)


def test_leaf_array_and_scalars():
    a = np.arange(3)
    leaves, treedef = tu.tree_flatten((a, 1.5, "s", True))
    assert leaves[0] is a
    assert leaves[1:] == [1.5, "s", True]
    assert treedef.num_leaves == 4


def test_dict_sorted_keys_and_rebuild_order():
    leaves, treedef = tu.tree_flatten({"c": 3, "a": 1, "b": 2})
    assert leaves == [1, 2, 3]
    rebuilt = tu.tree_unflatten(treedef, ["A", "B", "C"])
    assert list(rebuilt) == ["a", "b", "c"]
    assert rebuilt == {"a": "A", "b": "B", "c": "C"}
    assert tu.tree_structure({"b": 0, "a": 0}) == tu.tree_structure({"a": 0, "b": 0})


def test_ordereddict_keeps_insertion_order():
    od = collections.OrderedDict([("z", 1), ("a", 2)])
    leaves, treedef = tu.tree_flatten(od)
    assert leaves == [1, 2]
    rebuilt = tu.tree_unflatten(treedef, [10, 20])
    assert type(rebuilt) is collections.OrderedDict
    assert list(rebuilt.items()) == [("z", 10), ("a", 20)]
    other = collections.OrderedDict([("a", 2), ("z", 1)])
    assert tu.tree_structure(other) != treedef
    assert tu.tree_structure(dict(od)) != treedef


def test_defaultdict_sorted_keeps_factory():
    dd = collections.defaultdict(list, {"b": 1, "a": 2})
    leaves, treedef = tu.tree_flatten(dd)
    assert leaves == [2, 1]
    rebuilt = tu.tree_unflatten(treedef, leaves)
    assert type(rebuilt) is collections.defaultdict
    assert rebuilt.default_factory is list
    assert rebuilt == dd
    assert tu.tree_structure(collections.defaultdict(int, {"b": 1, "a": 2})) != treedef


def test_none_is_node_not_leaf():
    leaves, treedef = tu.tree_flatten(None)
    assert leaves == []
    assert treedef.num_leaves == 0
    assert treedef.num_nodes == 1
    assert not tu.treedef_is_leaf(treedef)
    assert tu.tree_unflatten(treedef, []) is None
    assert tu.tree_leaves([None, 1, None]) == [1]


def test_namedtuple_rebuilt_with_same_class():
    _, treedef, rebuilt = roundtrip(Point(Pair(1, 2), 3))
    assert type(rebuilt) is Point and type(rebuilt.x) is Pair
    # A namedtuple differs from a plain tuple with the same children.
    assert treedef != tu.tree_structure(((1, 2), 3))
    assert tu.tree_structure(Point(1, 2)) != tu.tree_structure(Pair(1, 2))


def test_unregistered_subclasses_are_leaves():
    class MyList(list):
        pass

    class MyDict(dict):
        pass

    assert tu.tree_leaves([MyList([1, 2]), MyDict(a=1)]) == [MyList([1, 2]), MyDict(a=1)]


def test_unflatten_wrong_leaf_count():
    _, treedef = tu.tree_flatten((1, 2))
    with pytest.raises(ValueError, match="expected 2"):
        tu.tree_unflatten(treedef, [1])
    with pytest.raises(ValueError, match="expected 2"):
        treedef.unflatten([1, 2, 3])


def test_mixed_type_dict_keys_deterministic():
    a = tu.tree_structure({1: "x", "a": "y"})
    b = tu.tree_structure({"a": "y", 1: "x"})
    assert a == b
    assert tu.tree_leaves({1: "x", "a": "y"}) == tu.tree_leaves({"a": "y", 1: "x"})


# ---------------------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------------------


def test_registered_node_aux_in_treedef():
    assert tu.tree_structure(Box("a", 1, 2)) == tu.tree_structure(Box("a", 5, 6))
    assert tu.tree_structure(Box("a", 1, 2)) != tu.tree_structure(Box("b", 1, 2))
    assert tu.tree_structure(Linear(1, 2, "x")) != tu.tree_structure(Linear(1, 2, "y"))


def test_register_twice_raises():
    with pytest.raises(ValueError):
        tu.register_pytree_node(Box, lambda b: ((), None), lambda a, c: None)
    with pytest.raises(ValueError):
        tu.register_pytree_node(tuple, lambda b: ((), None), lambda a, c: None)
    with pytest.raises(ValueError):
        tu.register_pytree_node_class(Linear)


def test_registered_class_children_are_flattened_recursively():
    model = {"layers": [Linear(np.ones(2), 0.0), Linear(np.zeros(2), 1.0, "out")]}
    leaves, treedef = tu.tree_flatten(model)
    assert len(leaves) == 4
    doubled = tu.tree_map(lambda x: x * 2, model)
    assert doubled["layers"][1].name == "out"
    assert doubled["layers"][1].b == 2.0
    np.testing.assert_array_equal(doubled["layers"][0].w, [2.0, 2.0])


# ---------------------------------------------------------------------------------------
# PyTreeDef
# ---------------------------------------------------------------------------------------


def test_treedef_equality_and_hash():
    s = tu.tree_structure
    assert s((1, {"a": 2})) == s((3, {"a": 4}))
    assert hash(s((1, {"a": 2}))) == hash(s((3, {"a": 4})))
    assert s({"a": 1}) != s({"b": 1})
    assert s([1, 2]) != s((1, 2))
    assert s((1, 2)) != s((1, 2, 3))
    assert s((1, None)) != s((1, 2))
    assert s(None) != s(1)
    assert s(()) != s([])
    assert s(1) == s(np.ones(3))  # leaves are all alike
    cache = {s((1, {"a": 2})): "hit"}
    assert cache[s(("x", {"a": "y"}))] == "hit"
    assert s([1]) not in cache
    assert s((1,)) != (1,)  # comparing with a non-treedef is just unequal


def test_treedef_immutable():
    t = tu.tree_structure((1, 2))
    with pytest.raises(AttributeError):
        t.foo = 1
    with pytest.raises(AttributeError):
        t._node = None


def test_num_leaves_num_nodes():
    t = tu.tree_structure((1, {"a": 2, "b": None}))
    assert t.num_leaves == 2
    assert t.num_nodes == 5  # tuple, leaf, dict, leaf, None
    assert tu.tree_structure(1).num_nodes == 1
    assert tu.tree_structure(1).num_leaves == 1
    assert tu.treedef_is_leaf(tu.tree_structure(1))
    assert not tu.treedef_is_leaf(tu.tree_structure((1,)))
    assert tu.tree_structure([[1, 2], [3]]).num_leaves == 3


def test_treedef_children():
    t = tu.tree_structure((1, [2, 3], {"a": None}))
    kids = t.children()
    assert kids == [tu.tree_structure(1), tu.tree_structure([0, 0]), tu.tree_structure({"a": None})]
    assert tu.treedef_children(t) == kids
    assert tu.tree_structure(1).children() == []
    assert tu.treedef_tuple(kids) == t


def test_treedef_repr():
    assert (
        repr(tu.tree_structure((1, {"a": 2, "b": None}))) == "PyTreeDef((*, {'a': *, 'b': None}))"
    )
    assert repr(tu.tree_structure(1)) == "PyTreeDef(*)"
    assert repr(tu.tree_structure(None)) == "PyTreeDef(None)"
    assert repr(tu.tree_structure((1,))) == "PyTreeDef((*,))"
    assert repr(tu.tree_structure([1, [2]])) == "PyTreeDef([*, [*]])"
    assert repr(tu.tree_structure(Point(1, 2))) == "PyTreeDef(Point(x=*, y=*))"
    assert repr(tu.tree_structure(Box("L", 1, 2))) == "PyTreeDef(CustomNode(Box['L'], [*, *]))"


def test_treedef_pickle():
    t = tu.tree_structure((1, {"a": Point(2, None)}))
    t2 = pickle.loads(pickle.dumps(t))
    assert t2 == t and hash(t2) == hash(t)


# ---------------------------------------------------------------------------------------
# flatten_up_to
# ---------------------------------------------------------------------------------------


def test_flatten_up_to_prefix():
    t = tu.tree_structure((1, {"a": 2}))
    assert t.flatten_up_to((10, {"a": 20})) == [10, 20]
    # Leaves of the treedef absorb whole subtrees.
    assert t.flatten_up_to(([1, 2], {"a": (3, 4)})) == [[1, 2], (3, 4)]
    assert tu.tree_structure(1).flatten_up_to({"x": 1}) == [{"x": 1}]
    # None in the tree at a leaf position is fine (it is taken whole).
    assert t.flatten_up_to((None, {"a": None})) == [None, None]


@pytest.mark.parametrize(
    "tree, match",
    [
        ([1, {"a": 2}], "Expected tuple at the root, got list"),
        ((1, 2, 3), "tuple arity mismatch at the root"),
        ((1, {"b": 2}), r"Dict key mismatch at key path \[1\]"),
        ((1, 2), r"Expected dict at key path \[1\], got int"),
        (None, "Expected tuple at the root, got NoneType"),
    ],
)
def test_flatten_up_to_mismatch(tree, match):
    t = tu.tree_structure((1, {"a": 2}))
    with pytest.raises(ValueError, match=match):
        t.flatten_up_to(tree)


def test_flatten_up_to_none_and_custom_mismatch():
    with pytest.raises(ValueError, match="Expected None"):
        tu.tree_structure((None,)).flatten_up_to((1,))
    with pytest.raises(ValueError, match="Custom node data mismatch for Box"):
        tu.tree_structure(Box("a", 1, 2)).flatten_up_to(Box("b", 1, 2))
    with pytest.raises(ValueError, match=r"list arity mismatch at key path \['a'\]"):
        tu.tree_structure({"a": [1, 2]}).flatten_up_to({"a": [1, 2, 3]})
    with pytest.raises(ValueError, match="Expected Point at the root, got Pair"):
        tu.tree_structure(Point(1, 2)).flatten_up_to(Pair(1, 2))
    assert tu.tree_structure(Box("a", 1, 2)).flatten_up_to(Box("a", [1], 2)) == [[1], 2]


# ---------------------------------------------------------------------------------------
# tree_map, is_leaf, other helpers
# ---------------------------------------------------------------------------------------


def test_tree_map_single_and_multiple():
    tree = {"a": (1, 2), "b": [3]}
    assert tu.tree_map(lambda x: x + 1, tree) == {"a": (2, 3), "b": [4]}
    other = {"a": (10, 20), "b": [30]}
    third = {"a": (100, 200), "b": [300]}
    assert tu.tree_map(lambda x, y, z: x + y + z, tree, other, third) == {
        "a": (111, 222),
        "b": [333],
    }
    assert tu.tree_map(lambda x: x, None) is None


def test_tree_map_mismatch_error_names_both_structures():
    with pytest.raises(ValueError) as info:
        tu.tree_map(lambda x, y: x + y, {"a": 1, "b": 2}, {"a": 1, "c": 2})
    msg = str(info.value)
    assert "{'a': *, 'b': *}" in msg
    assert "{'a': *, 'c': *}" in msg
    with pytest.raises(ValueError, match=r"\[\*, \*\]"):
        tu.tree_map(lambda x, y: x, (1, 2), [1, 2])


def test_tree_map_rest_may_be_deeper():
    # The first tree's structure only needs to be a prefix of the others'.
    out = tu.tree_map(lambda x, y: (x, y), [1, 2], [(3, 4), {"k": 5}])
    assert out == [(1, (3, 4)), (2, {"k": 5})]


def test_is_leaf():
    tree = {"a": (1, 2), "b": [(3, 4)]}
    is_pair = lambda x: isinstance(x, tuple)
    leaves, treedef = tu.tree_flatten(tree, is_leaf=is_pair)
    assert leaves == [(1, 2), (3, 4)]
    assert tu.tree_unflatten(treedef, leaves) == tree
    assert tu.tree_leaves(tree, is_leaf=is_pair) == [(1, 2), (3, 4)]
    assert tu.tree_structure(tree, is_leaf=is_pair).num_leaves == 2
    assert tu.tree_map(sum, tree, is_leaf=is_pair) == {"a": 3, "b": [7]}
    # is_leaf can turn None into a leaf.
    assert tu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]


def test_tree_all_and_all_leaves():
    assert tu.tree_all([1, (True, {"a": 2})])
    assert not tu.tree_all([1, (0, {"a": 2})])
    assert tu.tree_all(None)
    assert tu.all_leaves([1, "x", np.ones(2)])
    assert not tu.all_leaves([1, (2,)])
    assert not tu.all_leaves([None])
    assert tu.all_leaves([(1, 2)], is_leaf=lambda x: isinstance(x, tuple))


def test_tree_transpose():
    outer = tu.tree_structure([0, 0, 0])
    inner = tu.tree_structure({"a": 0, "b": 0})
    tree = [{"a": 1, "b": 2}, {"a": 3, "b": 4}, {"a": 5, "b": 6}]
    out = tu.tree_transpose(outer, inner, tree)
    assert out == {"a": [1, 3, 5], "b": [2, 4, 6]}
    assert tu.tree_transpose(outer, None, tree) == out


# ---------------------------------------------------------------------------------------
# Key paths
# ---------------------------------------------------------------------------------------


def test_key_entry_str():
    assert str(tu.SequenceKey(0)) == "[0]"
    assert str(tu.DictKey("a")) == "['a']"
    assert str(tu.DictKey(3)) == "[3]"
    assert str(tu.GetAttrKey("name")) == ".name"
    assert str(tu.FlattenedIndexKey(2)) == "[2]"
    assert tu.SequenceKey(1) == tu.SequenceKey(1)
    assert hash(tu.DictKey("a")) == hash(tu.DictKey("a"))


def test_flatten_with_path_keystr():
    tree = {
        "w": [1, (2, None)],
        "p": Point(3, 4),
        "m": Linear(5, 6),
        "k": Keyed(7, 8),
        "o": collections.OrderedDict([("z", 9)]),
    }
    pairs, treedef = tu.tree_flatten_with_path(tree)
    assert treedef == tu.tree_structure(tree)
    assert [tu.keystr(p) for p, _ in pairs] == [
        "['k'].p",
        "['k'].q",
        "['m'][0]",
        "['m'][1]",
        "['o']['z']",
        "['p'].x",
        "['p'].y",
        "['w'][0]",
        "['w'][1][0]",
    ]
    assert [x for _, x in pairs] == tu.tree_leaves(tree)
    assert pairs[0][0] == (tu.DictKey("k"), tu.GetAttrKey("p"))
    assert pairs[2][0] == (tu.DictKey("m"), tu.FlattenedIndexKey(0))
    assert pairs[-1][0] == (tu.DictKey("w"), tu.SequenceKey(1), tu.SequenceKey(0))
    assert tu.keystr(pairs[-1][0], simple=True, separator="/") == "w/1/0"
    assert tu.keystr(()) == ""


def test_flatten_with_path_leaf_root_and_is_leaf():
    pairs, treedef = tu.tree_flatten_with_path(5)
    assert pairs == [((), 5)]
    assert tu.treedef_is_leaf(treedef)
    pairs, _ = tu.tree_flatten_with_path([(1, 2), 3], is_leaf=lambda x: isinstance(x, tuple))
    assert pairs == [((tu.SequenceKey(0),), (1, 2)), ((tu.SequenceKey(1),), 3)]
    assert tu.tree_leaves_with_path({"a": 1}) == [((tu.DictKey("a"),), 1)]


def test_tree_map_with_path():
    tree = {"a": [1, 2], "b": 3}
    out = tu.tree_map_with_path(lambda p, x: f"{tu.keystr(p)}={x}", tree)
    assert out == {"a": ["['a'][0]=1", "['a'][1]=2"], "b": "['b']=3"}
    out = tu.tree_map_with_path(lambda p, x, y: x + y, tree, {"a": [10, 20], "b": 30})
    assert out == {"a": [11, 22], "b": 33}
    with pytest.raises(ValueError):
        tu.tree_map_with_path(lambda p, x, y: x, tree, {"a": [1], "b": 3})
