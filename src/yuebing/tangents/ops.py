"""The tangent operations of DESIGN.md §3, for every primal and tangent type.

Primal-side operations (walk a primal value):
    ``zero_tangent(x)``, ``randn_tangent(rng, x)``, ``add_to_primal(x, t, scale)``,
    ``difference(x, y)``, ``structural_copy(x)``, ``tangent_type(x)``.
Tangent-side operations (walk tangents):
    ``add(a, b)``, ``scale(a, s)``, ``increment(a, b)`` (in place), ``set_to_zero(a)`` (in place),
    ``dot(a, b)``.

Every operation is memoised on object identity, so cycles terminate, two references to one
mutable object give one tangent object, and in-place and reducing operations touch each mutable
object once (``increment`` never double-counts an alias). Every recursion is driven by
``walk.evaluate``, so nesting depth is bounded by memory, not by Python's recursion limit.

Memo keys: a mutable node is keyed by its identity alone (its tangent *is* one object); an
immutable node by the identities of all operands (tuples are values, so the same tuple object may
legitimately meet two different tangents).
"""
from __future__ import annotations

import collections
import numbers
from typing import Any, Callable

import numpy as np

from . import kinds as K
from .arrays import ArrayLinks, RootMemo
from .deques import tangent_deque
from .dict_views import VALUE_VIEW_NAMES, view_like, view_name, view_parts
from .masked import data_of, is_masked, moved
from .object_arrays import elements, fill, is_object_array, tangent_shell, write_back
from . import structured as S
from .types import MutableTangent, NoTangent, SetTangent, Tangent
from .walk import ATTR, ITEM, Node, StructureError, evaluate

_SCALAR_TANGENT_TYPES = (float, complex, np.floating, np.complexfloating)

# --------------------------------------------------------------------------------------------
# Taking tangents apart
# --------------------------------------------------------------------------------------------

T_LEAF = "leaf"
T_TUPLE = "tuple"
T_LIST = "list"
T_DICT = "dict"
T_IMMUTABLE = "Tangent"
T_MUTABLE = "MutableTangent"
T_DEQUE = "deque"
T_VIEW = "view of a dict"  # (a view of a tangent dict: identity data, built from its dict)
T_OBJECT_ARRAY = "object array"  # (an object array's: its elements' tangents, object_arrays.py)
#: tangent kinds that are identity data: one object per primal object, changed in place
_IN_PLACE = frozenset({T_LIST, T_DICT, T_MUTABLE, T_DEQUE, T_OBJECT_ARRAY})


def tangent_parts(t: Any) -> tuple[str, list, list, str]:
    """``(kind, keys, children, key_style)`` of a tangent value."""
    if is_object_array(t):
        return T_OBJECT_ARRAY, list(range(t.size)), elements(t), ITEM
    if t is NoTangent or isinstance(t, (np.ndarray, np.void, *_SCALAR_TANGENT_TYPES)):
        return T_LEAF, [], [], ITEM  # (a record's tangent is a record: structured.py)
    tp = type(t)
    if tp is list:
        return T_LIST, list(range(len(t))), list(t), ITEM
    if tp is collections.deque:
        return T_DEQUE, list(range(len(t))), list(t), ITEM
    if tp is dict or tp is SetTangent:
        return T_DICT, list(t), list(t.values()), ITEM
    if isinstance(t, tuple):
        return T_TUPLE, list(range(len(t))), list(t), ITEM
    if tp is MutableTangent:
        return T_MUTABLE, list(t.fields), list(t.fields.values()), ATTR
    if tp is Tangent:
        return T_IMMUTABLE, list(t.fields), list(t.fields.values()), ATTR
    if isinstance(t, numbers.Real) and not isinstance(t, bool):
        return T_LEAF, [], [], ITEM  # an int where a float tangent is expected: accepted as a number
    if view_name(t) in VALUE_VIEW_NAMES:
        keys, children = view_parts(t)
        return T_VIEW, keys, children, ATTR
    raise StructureError(f"{tp.__qualname__} is not a tangent type (value {t!r:.60})")


def _is_number(t: Any) -> bool:
    return isinstance(t, (numbers.Number, np.number)) and not isinstance(t, (bool, np.bool_))


def _aligned_children(kind: str, keys: list, t: Any, what: str = "tangent", extra_keys_ok: bool = False) -> list:
    """The children of tangent ``t`` in the order of a container's ``keys``. With
    ``extra_keys_ok``, keys of ``t`` that the container lacks are ignored (a zero partner)."""
    if t is NoTangent:
        return [NoTangent] * len(keys)
    if kind is K.TUPLE or kind is K.LIST or kind is T_TUPLE or kind is T_LIST:
        expected = tuple if kind in (K.TUPLE, T_TUPLE) else list
        if not isinstance(t, expected) or len(t) != len(keys):
            raise StructureError(
                f"expected a {what} {expected.__name__} of length {len(keys)}, got {_describe(t)}"
            )
        return list(t)
    if kind is K.DEQUE or kind is T_DEQUE:
        if type(t) is not collections.deque or len(t) != len(keys):
            raise StructureError(f"expected a {what} deque of length {len(keys)}, got {_describe(t)}")
        return list(t)
    if kind is K.OBJECT_ARRAY or kind is T_OBJECT_ARRAY:
        if not is_object_array(t) or t.size != len(keys):
            raise StructureError(f"expected a {what} object array of {len(keys)} elements, got {_describe(t)}")
        return elements(t)
    if kind is K.VIEW or kind is T_VIEW:
        if view_name(t) not in VALUE_VIEW_NAMES:
            raise StructureError(f"expected a {what} dict view, got {_describe(t)}")
        return view_parts(t)[1]
    if kind is K.DICT or kind is T_DICT or kind is K.SET:
        if not isinstance(t, dict):
            raise StructureError(f"expected a {what} dict, got {_describe(t)}")
        if not extra_keys_ok and t.keys() - set(keys):
            raise StructureError(f"{what} dict has keys the primal lacks: {sorted(map(repr, t.keys() - set(keys)))}")
        return [t.get(k, NoTangent) for k in keys]
    expected = MutableTangent if kind in (K.OBJECT, K.CELL, T_MUTABLE) else Tangent
    if type(t) is not expected:
        raise StructureError(f"expected a {expected.__name__}, got {_describe(t)}")
    fields = t.fields
    return [fields.get(k, NoTangent) for k in keys]


def _check_structured(first: Any, others: tuple) -> None:
    for other in others:
        if not S.same_structure(first, other):
            raise StructureError(f"expected a structured tangent like {_describe(first)}, got {_describe(other)}")


def _moved_structured(a: Any, ta: Any, scale: float, roots: RootMemo) -> Any:
    """A structured array or record moved by ``scale * ta`` (copied when ``ta`` is None); views of
    one root within the structure stay views of one new root."""
    if ta is not None:
        _check_structured(a, (ta,))
    root = roots.links.root_of(a) if isinstance(a, np.ndarray) else None
    if root is None:
        return S.copied(a) if ta is None else S.moved(a, ta, scale)
    t_root = None if ta is None else ArrayLinks.paired_root(a, root, ta)
    if ta is None or t_root is not None:
        return roots.build(a, S.copied if ta is None else lambda r: S.moved(r, t_root, scale))
    view = roots.build(a, S.copied)  # tangent not laid out like the primal: add per view
    S.add_into(view, S.mapped(lambda v: scale * v, ta))
    return view


def _check_array_pair(a: Any, b: Any) -> None:
    if S.is_structured(a):
        _check_structured(a, (b,))
    elif not isinstance(b, np.ndarray) or b.shape != a.shape:
        raise StructureError(f"expected an array of shape {a.shape}, got {_describe(b)}")


def _add_into(target: np.ndarray, source: np.ndarray) -> None:
    if S.is_structured(target):
        S.add_into(target, source)
    else:
        target += source


def _inner(a: np.ndarray, b: np.ndarray) -> float:
    return S.inner(a, b) if S.is_structured(a) else float(np.vdot(a, b).real)


def _describe(v: Any) -> str:
    if isinstance(v, (np.ndarray, np.void)):
        return f"ndarray(shape={v.shape}, dtype={v.dtype})"
    return f"{type(v).__qualname__} {v!r:.60}"


def _collect_arrays(root: Any, children_of: Callable[[Any], list]) -> list[np.ndarray]:
    """Every distinct ndarray reachable from ``root`` (iterative, cycle-safe)."""
    found: list[np.ndarray] = []
    seen: set[int] = set()
    stack = [root]
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, np.ndarray) and v.dtype.kind != "O":  # (an object array is a container)
            found.append(v)
        else:
            stack.extend(children_of(v))
    return found


def _primal_children(x: Any) -> list:
    kind = K.primal_kind(x)
    if kind in (K.FLOAT, K.COMPLEX, K.ARRAY, K.NONDIFF):
        return []
    return K.parts(x, kind)[1]


def _tangent_children(t: Any) -> list:
    return tangent_parts(t)[2]


def primal_links(x: Any) -> ArrayLinks:
    """The array roots shared inside primal ``x``."""
    if isinstance(x, np.ndarray):
        return ArrayLinks(())
    return ArrayLinks(_collect_arrays(x, _primal_children))


def tangent_links(t: Any) -> ArrayLinks:
    if isinstance(t, np.ndarray):
        return ArrayLinks(())
    return ArrayLinks(_collect_arrays(t, _tangent_children))


# --------------------------------------------------------------------------------------------
# Building tangents from primals: zero_tangent, randn_tangent
# --------------------------------------------------------------------------------------------

def _tangent_shell(x: Any, kind: str) -> Any:
    if kind is K.LIST:
        return []
    if kind is K.SET:
        return SetTangent()
    if kind is K.DEQUE:
        return tangent_deque((), x)
    if kind is K.OBJECT_ARRAY:
        return tangent_shell(x)
    if kind is K.DICT and type(x) is SetTangent:  # (the fdata of a set, differentiated in second order)
        return SetTangent()
    if kind is K.DICT:
        return {}
    return MutableTangent(type(x))


def _fill_tangent(shell: Any, kind: str, keys: list, values: list) -> Any:
    if kind is K.LIST or kind is T_LIST:
        shell[:] = values
    elif kind is K.DEQUE or kind is T_DEQUE:
        shell.clear()
        shell.extend(values)
    elif kind is K.OBJECT_ARRAY or kind is T_OBJECT_ARRAY:
        fill(shell, values)
    elif kind is K.DICT or kind is T_DICT or kind is K.SET:
        shell.clear()
        shell.update(zip(keys, values))
    else:
        shell.fields.clear()
        shell.fields.update(zip(keys, values))
    return shell


def _build_tangent(x: Any, kind: str, keys: list, values: list) -> Any:
    """Immutable tangent of immutable primal (or tangent) ``x``; NoTangent if it carries none."""
    if all(v is NoTangent for v in values):
        return NoTangent
    if kind is K.TUPLE or kind is T_TUPLE:
        return tuple(values) if not hasattr(type(x), "_fields") else _with_item_aliases(x, tuple.__new__(type(x), values))
    if kind is K.VIEW or kind is T_VIEW:
        return view_like(x, values[0])
    primal_type = x.primal_type if kind is T_IMMUTABLE else type(x)
    return Tangent(primal_type, dict(zip(keys, values)))


def _with_item_aliases(x: tuple, t: tuple) -> tuple:
    """Tangent ``t`` of a tuple with attributes (a SciPy tuple bunch) given ``x``'s attributes
    that are one of its items (``res.correlation``, the statistic itself), as that item's tangent."""
    for name, value in getattr(x, "__dict__", {}).items():
        index = next((i for i, item in enumerate(x) if item is value and not isinstance(value, (bool, int, str))), None)
        if index is not None:
            t.__dict__[name] = t[index]
    return t


def _from_primal(x: Any, make_leaf: Callable[[Any], Any]) -> Any:
    """A tangent with ``x``'s structure and aliasing, leaves made by ``make_leaf(primal_leaf)``."""
    roots = RootMemo(primal_links(x))
    memo: dict[int, Any] = {}

    def expand(x: Any) -> Any:
        kind = K.primal_kind(x)
        if kind is K.FLOAT or kind is K.COMPLEX:
            return make_leaf(x)
        if kind is K.NONDIFF:
            return NoTangent
        key = id(x)
        if key in memo:
            return memo[key]
        if kind is K.ARRAY:
            t = roots.build(x, make_leaf)
            memo[key] = t = make_leaf(x) if t is None else t
            return t
        keys, children, style = K.parts(x, kind)
        if kind in K.MUTABLE_KINDS and kind is not K.VIEW:  # (a set: keyed by its elements, walked as values)
            shell = memo[key] = _tangent_shell(x, kind)
            return Node(children, lambda ts: _fill_tangent(shell, kind, keys, ts), keys, style)

        def finish(ts: list) -> Any:
            memo[key] = t = _build_tangent(x, kind, keys, ts)
            return t

        return Node(children, finish, keys, style)

    return evaluate(x, expand)


def _rebuilt_set(x: Any, moved: list) -> Any:
    """A new set (frozenset) of ``x``'s elements moved (``moved``); refused if two merge."""
    result = type(x)(moved)
    if len(result) != len(x):
        raise StructureError(f"moving the elements of {_describe(x)} by this tangent merges two of them (a "
                             "set's elements are its values): take a smaller step, or keep the values in a list "
                             "(yb.flatten, which sets every element to zero, cannot take a set of floats)")
    return result


def _paired_elements(x: Any, y: Any) -> list:
    """The elements of sets ``x`` and ``y`` of the same size, paired in ``K.canonical_order``
    (small moves keep that order)."""
    if not isinstance(y, (set, frozenset)) or len(y) != len(x):
        raise StructureError(f"expected a set of {len(x)} elements like {_describe(x)}, got {_describe(y)}")
    return list(zip(K.canonical_order(x), K.canonical_order(y)))


def _zero_leaf(x: Any) -> Any:
    if S.is_structured(x):
        return S.zeros_like(x)
    if isinstance(x, np.ndarray):
        return np.zeros_like(x, subok=False)
    return 0j if isinstance(x, (complex, np.complexfloating)) else 0.0


def zero_tangent(x: Any) -> Any:
    """The zero tangent of ``x``: same structure, aliasing and cycles, all leaves zero."""
    return _from_primal(x, _zero_leaf)


def randn_tangent(rng: np.random.Generator, x: Any) -> Any:
    """A tangent of ``x`` with independent standard normal leaves (complex: both parts)."""

    def leaf(x: Any) -> Any:
        if S.is_structured(x):
            return S.random_like(rng, x)
        if isinstance(x, np.ndarray):
            t = rng.standard_normal(x.shape)
            if x.dtype.kind == "c":
                t = t + 1j * rng.standard_normal(x.shape)
            out = np.empty_like(x, subok=False)  # same memory order as the primal
            out[...] = t
            return out
        if isinstance(x, (complex, np.complexfloating)):
            return complex(rng.standard_normal(), rng.standard_normal())
        return float(rng.standard_normal())

    return _from_primal(x, leaf)


def tangent_type(x: Any) -> type:
    """The type of ``x``'s tangent (``type(NoTangent)`` for values that carry none)."""
    return type(zero_tangent(x))


# --------------------------------------------------------------------------------------------
# Primal + tangent -> primal, primal - primal -> tangent, structural copies
# --------------------------------------------------------------------------------------------

def _check_number(t: Any, x: Any) -> None:
    if not _is_number(t):
        raise StructureError(f"expected a number as the tangent of {_describe(x)}, got {_describe(t)}")


def _rebuild(x: Any, t: Any, scale: float, copy_only: bool, element_copies: dict | None = None) -> Any:
    links = primal_links(x)
    roots = RootMemo(links)
    memo: dict[Any, Any] = {}

    def new_array(a: np.ndarray, ta: Any) -> np.ndarray:
        if S.carries_derivative(a):
            return _moved_structured(a, None if copy_only else ta, scale, roots)
        if is_masked(a) and (copy_only or a.dtype.kind in "fc"):  # its data moves, its mask is copied
            return moved(a, None if copy_only else ta, scale)
        if copy_only or a.dtype.kind not in "fc":
            if not copy_only and ta is not NoTangent:
                raise StructureError(f"{_describe(a)} carries no tangent, but got {_describe(ta)}")
            root = links.root_of(a)
            if root is not None:
                return roots.build(a, np.copy)
            return np.array(a, copy=True, subok=True)
        if not isinstance(ta, np.ndarray) or ta.shape != a.shape:
            raise StructureError(f"expected an array tangent of shape {a.shape}, got {_describe(ta)}")
        root = links.root_of(a)
        if root is None:
            out = np.empty_like(a, subok=False)  # keep a's memory order
            np.add(a, scale * ta, out=out, casting="unsafe")
            return out
        t_root = ArrayLinks.paired_root(a, root, ta)
        if t_root is not None:
            return roots.build(a, lambda r: np.asarray(r + scale * t_root, dtype=r.dtype))
        view = roots.build(a, np.copy)  # tangent not laid out like the primal: add per view
        view += scale * ta
        return view

    def expand(job: tuple) -> Any:
        x, t = job
        kind = K.primal_kind(x)
        if kind is K.FLOAT or kind is K.COMPLEX:
            if copy_only:
                return x
            _check_number(t, x)
            return type(x)(x + scale * t)
        if kind is K.NONDIFF and not isinstance(x, np.ndarray):
            if not copy_only and t is not NoTangent:
                raise StructureError(f"{_describe(x)} carries no tangent, but got {_describe(t)}")
            return K.copy_nondiff(x) if K.is_mutable_nondiff(x) else x
        mutable = kind in K.MUTABLE_KINDS or kind is K.ARRAY or kind is K.NONDIFF
        key = id(x) if mutable else (id(x), id(t))
        if key in memo:
            return memo[key]
        if kind is K.ARRAY or kind is K.NONDIFF:
            memo[key] = result = new_array(x, t)
            return result
        keys, children, style = K.parts(x, kind)
        child_tangents = [None] * len(keys) if copy_only else _aligned_children(kind, keys, t)
        jobs = list(zip(children, child_tangents))
        if kind is K.SET:  # (its elements moved, each by the tangent keyed by it)

            def rebuilt(values: list) -> Any:
                memo[key] = result = _rebuilt_set(x, values)
                if element_copies is not None:
                    element_copies.update((id(k), (k, v)) for k, v in zip(keys, values) if v is not k)
                return result

            return Node(jobs, rebuilt, keys, style)
        if mutable and kind is not K.VIEW:  # (a view is made from its dict's copy: below)
            shell = memo[key] = K.new_mutable_shell(x, kind)
            return Node(jobs, lambda vs: K.fill_mutable(shell, kind, keys, vs), keys, style)

        def finish(values: list) -> Any:
            memo[key] = result = K.build_immutable(x, kind, keys, values)
            return result

        return Node(jobs, finish, keys, style)

    return evaluate((x, t), expand)


def add_to_primal(x: Any, t: Any, scale: float = 1.0) -> Any:
    """A new primal ``x + scale * t``; ``x`` is untouched, aliasing and cycles are reproduced."""
    return _rebuild(x, t, scale, copy_only=False)


def structural_copy(x: Any, element_copies: dict | None = None) -> Any:
    """A deep copy of ``x`` that keeps aliasing, cycles and views, at any nesting depth.

    Non-differentiable immutable leaves (ints, strings, functions, modules) are shared; arrays,
    sets and every container are copied. ``element_copies``, if given, receives ``id(element):
    (element, its copy)`` for the elements of sets that were copied (an object hashed by identity:
    a tangent keyed by it is re-keyed by ``set_keys.rekeyed``).
    """
    return _rebuild(x, None, 0.0, copy_only=True, element_copies=element_copies)


def _subtract(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x - y`` with equal entries (infinities included) giving exactly zero."""
    with np.errstate(invalid="ignore"):
        return np.where(x == y, 0, x - y)


def difference(x: Any, y: Any) -> Any:
    """The tangent ``x - y`` of two primals of the same structure (structure taken from ``x``)."""
    links = primal_links(x)
    roots = RootMemo(links)
    memo: dict[Any, Any] = {}

    def expand(job: tuple) -> Any:
        x, y = job
        kind = K.primal_kind(x)
        if kind is K.FLOAT or kind is K.COMPLEX:
            _check_number(y, x)
            # equal values (infinities included) are no change
            return (complex if kind is K.COMPLEX else float)(0 if x == y else x - y)
        if kind is K.NONDIFF:
            return NoTangent
        key = id(x) if kind in K.MUTABLE_KINDS or kind is K.ARRAY else (id(x), id(y))
        if key in memo:
            return memo[key]
        if kind is K.SET:
            pairs = _paired_elements(x, y)
            shell = memo[key] = SetTangent()
            return Node(pairs, lambda ts: _fill_tangent(shell, kind, [a for a, _ in pairs], ts), None, ITEM)
        if kind is K.ARRAY and S.is_structured(x):
            _check_structured(x, (y,))
            root = links.root_of(x) if isinstance(x, np.ndarray) else None
            y_root = None if root is None else ArrayLinks.paired_root(x, root, y)
            memo[key] = result = S.difference(x, y) if y_root is None else roots.build(
                x, lambda r: S.difference(r, y_root))
            return result
        if kind is K.ARRAY:
            if not isinstance(y, np.ndarray) or y.shape != x.shape:
                raise StructureError(f"expected an array of shape {x.shape}, got {_describe(y)}")
            if is_masked(x) or is_masked(y):  # on the data alone (tangents/masked.py)
                x, y = data_of(x), data_of(y)
            root = links.root_of(x)
            y_root = None if root is None else ArrayLinks.paired_root(x, root, y)
            if y_root is not None:
                result = roots.build(x, lambda r: np.asarray(_subtract(r, y_root), dtype=r.dtype))
            else:
                result = np.asarray(_subtract(x, y), dtype=x.dtype)
            memo[key] = result
            return result
        keys, children, style = K.parts(x, kind)
        if K.primal_kind(y) is not kind:
            raise StructureError(f"expected a {kind} like {_describe(x)}, got {_describe(y)}")
        y_keys, y_children, _ = K.parts(y, kind)
        if y_keys != keys:
            raise StructureError(f"keys differ: {keys!r:.80} vs {y_keys!r:.80}")
        jobs = list(zip(children, y_children))
        if kind in K.MUTABLE_KINDS and kind is not K.VIEW:
            shell = memo[key] = _tangent_shell(x, kind)
            return Node(jobs, lambda ts: _fill_tangent(shell, kind, keys, ts), keys, style)

        def finish(ts: list) -> Any:
            memo[key] = result = _build_tangent(x, kind, keys, ts)
            return result

        return Node(jobs, finish, keys, style)

    return evaluate((x, y), expand)


# --------------------------------------------------------------------------------------------
# Tangent arithmetic
# --------------------------------------------------------------------------------------------

def _map_tangents(operands: tuple, leaf: Callable[..., Any], by_root: bool = True) -> Any:
    """A new tangent shaped like ``operands[0]`` with leaves ``leaf(*operand_leaves)``; views of
    one tangent array map their root once (``by_root``), or each array on its own."""
    roots = RootMemo(tangent_links(operands[0]) if by_root else ArrayLinks(()))
    memo: dict[Any, Any] = {}

    def on_arrays(*arrays: np.ndarray) -> np.ndarray:
        if S.is_structured(arrays[0]):  # field by field (structured.py)
            _check_structured(arrays[0], arrays[1:])
            return S.mapped(leaf, *arrays)
        return np.asarray(leaf(*arrays), dtype=arrays[0].dtype)

    def array_leaf(arrays: tuple) -> np.ndarray:
        first = arrays[0]
        root = roots.links.root_of(first)
        if root is not None:
            others = [ArrayLinks.paired_root(first, root, a) for a in arrays[1:]]
            if all(o is not None for o in others):
                return roots.build(first, lambda r: on_arrays(r, *others))
        return on_arrays(*arrays)

    def expand(ts: tuple) -> Any:
        first = ts[0]
        if first is NoTangent:
            for other in ts[1:]:
                if other is not NoTangent:
                    raise StructureError(f"expected NoTangent, got {_describe(other)}")
            return NoTangent
        kind, keys, children, style = tangent_parts(first)
        if kind is T_LEAF and isinstance(first, np.void):  # a record's tangent (structured.py)
            key = tuple(map(id, ts))
            if key not in memo:
                memo[key] = array_leaf(ts)
            return memo[key]
        if kind is T_LEAF:
            if isinstance(first, np.ndarray):
                for other in ts[1:]:
                    if not isinstance(other, np.ndarray) or other.shape != first.shape:
                        raise StructureError(f"expected an array of shape {first.shape}, got {_describe(other)}")
                key = tuple(map(id, ts))
                if key not in memo:
                    memo[key] = array_leaf(ts)
                return memo[key]
            for other in ts[1:]:
                _check_number(other, first)
            return leaf(*ts)
        mutable = kind in _IN_PLACE
        key = id(first) if mutable else tuple(map(id, ts))
        if key in memo:
            return memo[key]
        columns = [children] + [_aligned_children(kind, keys, other) for other in ts[1:]]
        jobs = list(zip(*columns))
        if mutable:
            shell = memo[key] = _empty_like(first, kind)
            return Node(jobs, lambda vs: _fill_tangent(shell, kind, keys, vs), keys, style)

        def finish(values: list) -> Any:
            memo[key] = result = _build_tangent(first, kind, keys, values)
            return result

        return Node(jobs, finish, keys, style)

    return evaluate(operands, expand)


def _empty_like(t: Any, kind: str) -> Any:
    """An empty mutable tangent of the type of ``t`` (of tangent kind ``kind``)."""
    if kind is T_LIST:
        return []
    if kind is T_DICT:
        return type(t)()
    if kind is T_DEQUE:
        return tangent_deque((), t)
    if kind is T_OBJECT_ARRAY:
        return tangent_shell(t)
    return MutableTangent(t.primal_type)


def add(a: Any, b: Any) -> Any:
    """A new tangent ``a + b`` (neither operand is modified)."""
    return _map_tangents((a, b), lambda x, y: x + y)


def scale(a: Any, s: float) -> Any:
    """A new tangent ``s * a``."""
    return _map_tangents((a,), lambda x: x * s)


def increment(a: Any, b: Any) -> Any:
    """Add ``b`` into ``a`` in place where ``a`` is mutable; return the result (``a`` itself for
    mutable tangents, a new value for floats and tuples). ``NoTangent`` in ``b`` counts as zero.

    Each mutable part of ``a`` is incremented once however often it is referenced, so aliased
    tangents are never double-counted.
    """
    links = tangent_links(a)
    done: dict[int, Any] = {}

    def expand(job: tuple) -> Any:
        a, b = job
        if a is NoTangent or b is NoTangent:
            return a
        kind, keys, children, style = tangent_parts(a)
        if kind is T_LEAF:
            if isinstance(a, (np.ndarray, np.void)):  # (a record's tangent is a record: structured.py)
                _check_array_pair(a, b)
                root = links.root_of(a)
                b_root = None if root is None else ArrayLinks.paired_root(a, root, b)
                target, source = (root, b_root) if b_root is not None else (a, b)
                if id(target) not in done:
                    done[id(target)] = target
                    _add_into(target, source)
                return a
            _check_number(b, a)
            return a + b
        mutable = kind in _IN_PLACE
        key = id(a) if mutable else (id(a), id(b))
        if key in done:
            return done[key]
        jobs = list(zip(children, _aligned_children(kind, keys, b)))
        if mutable:
            done[key] = a
            return Node(jobs, lambda vs: _write_back(a, kind, keys, vs), keys, style)

        def finish(values: list) -> Any:
            done[key] = result = _build_tangent(a, kind, keys, values)
            return result

        return Node(jobs, finish, keys, style)

    return evaluate((a, b), expand)


def _ranked_values(a: dict, b: dict) -> tuple[list, list]:
    """The values of two tangents of nearby sets (a finite difference's and a derivative's), paired
    by the rank of their elements (``K.canonical_order``): small moves keep it."""
    return [a[k] for k in K.canonical_order(a)], [b[k] for k in K.canonical_order(b)]


def _write_back(a: Any, kind: str, keys: list, values: list) -> Any:
    """Store updated children into mutable tangent ``a`` (identity-preserving, no reallocation)."""
    if kind is T_OBJECT_ARRAY:
        return write_back(a, values)
    target = a.fields if kind is T_MUTABLE else a
    for k, v in zip(keys, values):
        if target[k] is not v:
            target[k] = v
    return a


def set_to_zero(a: Any) -> Any:
    """Zero ``a`` in place where it is mutable; return the zeroed tangent (``a`` when mutable)."""
    done: dict[Any, Any] = {}

    def expand(a: Any) -> Any:
        if a is NoTangent:
            return a
        kind, keys, children, style = tangent_parts(a)
        if kind is T_LEAF and S.is_structured(a):  # float fields only (structured.py)
            S.set_zero(a)
            return a
        if kind is T_LEAF:
            if isinstance(a, np.ndarray):
                a.fill(0)
                return a
            return 0j if isinstance(a, (complex, np.complexfloating)) else 0.0
        key = id(a)
        if key in done:
            return done[key]
        if kind in _IN_PLACE:
            done[key] = a
            return Node(children, lambda vs: _write_back(a, kind, keys, vs), keys, style)

        def finish(values: list) -> Any:
            done[key] = result = _build_tangent(a, kind, keys, values)
            return result

        return Node(children, finish, keys, style)

    return evaluate(a, expand)


def dot(a: Any, b: Any) -> float:
    """The real inner product of two tangents of the same primal.

    Each mutable object and each shared array root counts once; complex numbers contribute
    ``Re(conj(a) * b)``, so ``dot`` is symmetric, bilinear over the reals and positive definite.
    """
    links = tangent_links(a)
    seen: set[Any] = set()

    def expand(job: tuple) -> Any:
        a, b = job
        if a is NoTangent or b is NoTangent:  # NoTangent is the zero of every tangent type
            return 0.0
        kind, keys, children, style = tangent_parts(a)
        if kind is T_LEAF:
            if isinstance(a, (np.ndarray, np.void)):  # (a record's tangent is a record: structured.py)
                _check_array_pair(a, b)
                root = links.root_of(a)
                b_root = None if root is None else ArrayLinks.paired_root(a, root, b)
                left, right = (root, b_root) if b_root is not None else (a, b)
                if id(left) in seen:
                    return 0.0
                seen.add(id(left))
                return _inner(left, right)
            _check_number(b, a)
            return float((np.conj(a) * b).real)
        if kind in _IN_PLACE:
            if id(a) in seen:
                return 0.0
            seen.add(id(a))
        # keys only b has meet a zero in a: they add nothing to the inner product
        if type(a) is SetTangent and isinstance(b, dict) and len(a) == len(b) and a.keys() != b.keys():
            return Node(list(zip(*_ranked_values(a, b))), sum, keys, style)
        jobs = list(zip(children, _aligned_children(kind, keys, b, extra_keys_ok=True)))
        return Node(jobs, sum, keys, style)

    return float(evaluate((a, b), expand))
