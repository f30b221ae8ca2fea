"""The float leaves of a structure of arguments or outputs (scalars and float arrays, in
tuples, lists, dicts and objects), which ``jvp``'s batched passes and ``jacobian`` index by:
listing them with their tangents, building a structure of tangents leaf by leaf, the basis
direction of one element, and assembling Jacobian blocks back into the argument's structure."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import tangents as T
from ..tangents import NoTangent
from ..tangents import kinds as K
from ..tangents.arrays import _address, array_root, view_like
from ..tangents.ops import _aligned_children, _build_tangent, _fill_tangent, _tangent_shell, primal_links
from .complex_jacobian import as_leaf_array, leaf_dtype
from ..rules.batched import BATCH, batched, batched_zeros


# --------------------------------------------------------------------------------------------
# Leaves of a structure: the float scalars and float arrays a Jacobian is indexed by
# --------------------------------------------------------------------------------------------


def _refuse_complex(x: Any, what: str) -> None:
    raise TypeError(
        f"jacobian: {what} contains a complex value ({type(x).__qualname__}); yuebing's jacobian is for "
        "real inputs and outputs (use jvp/vjp with complex tangents instead)"
    )


def _refuse_structured(x: Any, what: str) -> None:
    """A structured array's elements are records, not numbers: a Jacobian indexed by them would
    mix its fields (tangents/structured.py)."""
    raise TypeError(
        f"jacobian: {what} contains a structured array (dtype {x.dtype}), whose elements are records, not "
        "numbers; use its float fields as arrays of their own (return np.stack([y['a'], y['b']], -1), or pass "
        "the fields as float arrays), or yb.grad/yb.jvp/yb.vjp, which take it as it is")


def _leaves(x: Any, t: Any, what: str, complex_ok: bool = False) -> list[tuple[Any, Any]]:
    """``(primal_leaf, tangent_leaf)`` for every float scalar and float array reachable from
    ``x`` (each shared object once), in a fixed order; ``t`` is a tangent of ``x``. Complex
    numbers and arrays are leaves too with ``complex_ok`` (``yb.jacobian``), else refused."""
    found: list = []
    seen: set = set()
    stack = [(x, t)]
    while stack:
        v, tv = stack.pop()
        kind = K.primal_kind(v)
        if kind is K.COMPLEX and not complex_ok:
            _refuse_complex(v, what)
        if kind is K.FLOAT or kind is K.COMPLEX:
            found.append((v, tv))
            continue
        if kind is K.NONDIFF:
            continue
        if id(v) in seen:
            continue
        seen.add(id(v))
        if kind is K.ARRAY:
            if v.dtype.kind == "c" and not complex_ok:
                _refuse_complex(v, what)
            if v.dtype.fields is not None:
                _refuse_structured(v, what)
            found.append((v, tv))
            continue
        keys, children, _ = K.parts(v, kind)
        tchildren = _aligned_children(kind, keys, tv)
        stack.extend(reversed(list(zip(children, tchildren))))
    return found


def _build(x: Any, leaf: Callable[[Any], Any], share_memory: bool = False) -> Any:
    """A tangent of ``x`` whose leaves (in ``_leaves`` order) are ``leaf(primal_leaf)``. With
    ``share_memory``, arrays of ``x`` that are views of one memory get the same views of one array,
    ``leaf(their root)``, as DESIGN.md §2 asks of a tangent (``leaf`` may add leading axes)."""
    memo: dict[int, Any] = {}
    links = primal_links(x) if share_memory else None
    made: dict[int, np.ndarray] = {}

    def array(v: np.ndarray) -> np.ndarray:
        root = links.root_of(v) if links else None
        if root is None:
            return leaf(v)
        if id(root) not in made:
            made[id(root)] = leaf(root)
        return _same_view(v, root, made[id(root)])

    def build(v: Any) -> Any:
        kind = K.primal_kind(v)
        if kind is K.FLOAT or kind is K.COMPLEX:
            return leaf(v)
        if kind is K.NONDIFF:
            return NoTangent
        if id(v) in memo:
            return memo[id(v)]
        if kind is K.ARRAY:
            memo[id(v)] = t = array(v)
            return t
        keys, children, _ = K.parts(v, kind)
        if kind in K.MUTABLE_KINDS:
            shell = memo[id(v)] = _tangent_shell(v, kind)
            return _fill_tangent(shell, kind, keys, [build(c) for c in children])
        memo[id(v)] = t = _build_tangent(v, kind, keys, [build(c) for c in children])
        return t

    return build(x)


def _same_view(v: np.ndarray, root: np.ndarray, new_root: np.ndarray) -> np.ndarray:
    """The view of ``new_root`` that ``v`` is of ``root``; leading axes ``new_root`` has beyond
    ``root``'s (a batch axis whose every slice is laid out as ``root``) are kept whole."""
    extra = new_root.ndim - root.ndim
    if not extra:
        return view_like(v, root, new_root)
    owner = array_root(new_root)
    offset = _address(new_root) - _address(owner) + _address(v) - _address(root)
    return np.ndarray(new_root.shape[:extra] + v.shape, v.dtype, buffer=owner, offset=offset,
                      strides=new_root.strides[:extra] + v.strides)


def _basis(x: Any, position: int, index: int, unit: complex = 1.0) -> Any:
    """The tangent of ``x`` that is ``unit`` (1, or 1j for a complex leaf) at element ``index`` of
    leaf number ``position``, else 0. Views of one memory in ``x`` get views of one tangent array,
    so a 1 in memory they share is seen by each: the direction perturbs the memory, as reverse
    mode's gradient is taken."""
    leaves = _leaves(x, T.zero_tangent(x), "the argument", complex_ok=True)
    target = leaves[position][0]
    # floats are never shared: the one to seed is float number `chosen` in the walk's order
    chosen = sum(not isinstance(v, np.ndarray) for v, _ in leaves[:position])
    counter = iter(range(1 << 62))

    def leaf(v: Any) -> Any:
        if isinstance(v, np.ndarray):
            return np.zeros(v.shape, dtype=v.dtype)
        value = unit if next(counter) == chosen and not isinstance(target, np.ndarray) else 0.0
        return leaf_dtype(v)(value) if K.primal_kind(v) is K.COMPLEX else value

    t = _build(x, leaf, share_memory=True)
    if isinstance(target, np.ndarray):
        tv = _leaves(x, t, "the argument", complex_ok=True)[position][1]
        tv[np.unravel_index(index, tv.shape)] = unit  # (an index, not a reshape: a view may be strided)
    return t


def _flat_leaves(x: Any, t: Any, what: str) -> list[np.ndarray]:
    """Each leaf's tangent as a float64 (complex128) array of the leaf's shape (zeros for ``NoTangent``)."""
    return [np.zeros(np.shape(v), leaf_dtype(v)) if tv is NoTangent else as_leaf_array(v, tv)
            for v, tv in _leaves(x, t, what, complex_ok=True)]


def _is_leaf(x: Any) -> bool:
    kind = K.primal_kind(x)
    return kind is K.FLOAT or kind is K.COMPLEX or kind is K.ARRAY and x.dtype.kind in "fc"


def _assemble(x: Any, y: Any, blocks: list[list[np.ndarray]]) -> Any:
    """The Jacobian of output ``y`` with respect to ``x`` from ``blocks[i][j]`` (output leaf ``i``
    by input leaf ``j``, each shaped ``out_leaf.shape + in_leaf.shape``): one array when both are
    a float or a float array, otherwise ``y``'s tangent structure holding ``x``'s tangent
    structure of blocks."""
    if _is_leaf(x) and _is_leaf(y):
        return blocks[0][0]
    y_count = iter(range(1 << 62))

    def output_leaf(v: Any) -> Any:
        row = blocks[next(y_count)]
        if _is_leaf(x):
            return row[0]
        x_count = iter(range(1 << 62))
        return _build(x, lambda u: row[next(x_count)])

    if _is_leaf(y):
        return output_leaf(y)
    return _build(y, output_leaf)


def _batched_seed(x: Any, a: int, m: int, seeds: dict) -> Any:
    """A zero tangent of ``x`` with a leading batch axis of ``m`` on every float leaf (views of
    one memory in ``x`` get views of one batched array); leaf ``j``'s array is ``seeds[(a, j)]``."""
    t = _build(x, lambda v: batched_zeros(v, m, None if isinstance(v, np.ndarray) else leaf_dtype(v)),
               share_memory=True)  # each direction laid out as v
    for j, (_, tv) in enumerate(_leaves(x, t, f"argument {a}", complex_ok=True) if seeds is not None else ()):
        seeds[(a, j)] = tv
    return t


def _batched_zero(x: Any) -> Any:
    """A zero tangent of ``x`` with the current pass's batch axis on every float leaf."""
    return _batched_seed(x, 0, BATCH.size, None)


def _batched_leaf(v: Any, tv: Any, m: int) -> np.ndarray:
    """An output leaf's batched tangent as a float array of shape ``(m,) + v.shape`` (a tangent
    without the batch axis is the same in every direction)."""
    shape = np.shape(v)
    if tv is NoTangent:
        return np.zeros((m,) + shape, leaf_dtype(v))
    tv = np.asarray(tv, dtype=leaf_dtype(v))
    if tv.ndim == len(shape):
        return np.broadcast_to(tv, (m,) + shape)
    return tv.reshape((m,) + shape)
