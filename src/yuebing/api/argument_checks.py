"""What the public entry points check about the arguments they differentiate (the choices are
written in docs/conventions.md, "Arguments"):

* ``require_float_leaf``: an argument named in ``argnums`` must reach at least one float leaf (a
  float, a complex number, a float or complex array). One with none -- an int, a dict of ints, an
  int array -- would get an all-``NoTangent`` gradient, so it is refused, naming its leaves and
  what to pass instead. Int leaves next to float leaves (``{"w": array, "n": 3}``) keep
  ``NoTangent`` in the gradient.
* ``separate_arguments``: arguments that share float data (one array passed twice, or views of one
  array) are differentiated slot by slot, as JAX does: each such argument becomes its own
  read-only view, given its own tangent by the caller, so each slot's gradient is that slot's
  partial derivative; a write into the shared memory is refused by NumPy. Float data shared
  *inside* containers of two arguments cannot be separated this way and is refused.
* ``shared_view_tangents``: within one argument, arrays that are views of one memory (``(a,
  a[1:])``) share one tangent; separate tangent arrays given for them by ``yb.jvp``/``yb.hvp``'s
  caller are merged into one when they agree where the views overlap, and refused (``ValueError``)
  when they do not (``tangents/view_tangents.py``).
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from ..tangents import kinds as K
from ..tangents.arrays import array_root
from ..tangents.view_tangents import share_view_tangents
from ..tangents.walk import StructureError, format_key

_FLOAT_KINDS = (K.FLOAT, K.COMPLEX)
_MAX_LISTED = 4  # leaves named in a refusal


def _kind(value: Any) -> str | None:
    try:
        return K.primal_kind(value)
    except StructureError:
        return None  # no tangent type: zero_tangent reports it, with its own advice


def _walk(value: Any, root: str, seen: set) -> Iterator[tuple[Any, Any, str | None]]:
    """``(path, value, kind)`` of ``value`` and everything reachable from it, depth first; each
    container is entered once (``seen`` holds their ids). A path is ``root`` or a ``(parent,
    key, style)`` chain, spelt out by ``_spelt`` only for a message."""
    stack = [(root, value)]
    while stack:
        path, v = stack.pop()
        kind = _kind(v)
        yield path, v, kind
        if kind is None or kind is K.NONDIFF or kind is K.ARRAY or kind in _FLOAT_KINDS:
            continue
        if id(v) in seen:
            continue
        seen.add(id(v))
        keys, children, style = K.parts(v, kind)
        for i in range(len(children) - 1, -1, -1):
            stack.append(((path, keys[i], style), children[i]))


def _spelt(path: Any) -> str:
    """``argument 0['w'].bias`` from a path chain."""
    parts = []
    while type(path) is tuple:
        path, key, style = path
        parts.append(format_key(key, style))
    return path + "".join(reversed(parts))


def has_float_leaf(value: Any) -> bool:
    """Whether a float, complex number or float/complex array is reachable from ``value``."""
    for _, _, kind in _walk(value, "", set()):
        if kind in _FLOAT_KINDS or kind is K.ARRAY:
            return True
    return False


def _article(word: str) -> str:
    return f"an {word}" if word[:1].lower() in "aeiou" else f"a {word}"


def _describe_leaf(path: str, value: Any) -> tuple[str, str | None]:
    """What a leaf without a derivative is, and what to pass instead (None: nothing obvious)."""
    if isinstance(value, np.ndarray):
        return f"{path} is an array of dtype {value.dtype}", "a float array (np.asarray(x, dtype=float))"
    if value is None:
        return f"{path} is None", None
    if isinstance(value, (bool, np.bool_)):
        return f"{path} is the bool {value!r}", None
    if isinstance(value, (int, np.integer)):
        return f"{path} is the int {value!r}", f"{float(value)!r} for {value!r}"
    return f"{path} is {_article(type(value).__qualname__)}", None


def require_float_leaf(value: Any, index: int, name: str) -> None:
    """Refuse argument ``index`` (named in ``argnums``) when nothing in it can carry a derivative.
    An empty container passes: its gradient is an empty container, nothing dropped."""
    leaves = []
    for path, v, kind in _walk(value, f"argument {index}", set()):
        if kind in _FLOAT_KINDS or kind is K.ARRAY:
            return
        if kind is K.NONDIFF:
            leaves.append((path, v))
    if not leaves:
        return
    described = [_describe_leaf(_spelt(path), v) for path, v in leaves[:_MAX_LISTED]]
    fixes = list(dict.fromkeys(fix for _, fix in described if fix is not None))
    to_do = f"pass {', '.join(fixes)}, or" if fixes else "make it hold floats or float arrays, or"
    if len(leaves) == 1 and type(leaves[0][0]) is str:  # the argument itself
        raise TypeError(f"{name}: {described[0][0]}, which has no derivative. To differentiate it, {to_do} "
                        f"leave argument {index} out of argnums")
    what = "; ".join(d for d, _ in described) + ("; ..." if len(leaves) > _MAX_LISTED else "")
    raise TypeError(
        f"{name}: argument {index} has no float, complex or float-array leaf, so its gradient would be "
        f"empty (no derivative): {what}. To differentiate it, {to_do} leave argument {index} out of argnums"
    )


# --------------------------------------------------------------------------------------------
# Arguments sharing float data: differentiated slot by slot
# --------------------------------------------------------------------------------------------


def _owners(args: tuple) -> tuple[dict, list]:
    """For every float array root and container reachable from the arguments, the first
    argument and path that reach it; and every later ``(path, first_path, value)`` that reaches
    one of them from another argument."""
    first: dict[int, tuple[int, str]] = {}
    shared: list = []
    for i, arg in enumerate(args):
        if type(arg) is float:
            continue
        seen: set = set()
        for path, v, kind in _walk(arg, f"argument {i}", seen):
            if kind is K.ARRAY:
                key = id(array_root(v))
            elif kind in K.MUTABLE_KINDS:  # tuples and other immutables: only what they hold
                key = id(v)
            else:
                continue
            owner = first.setdefault(key, (i, path))
            if owner[0] != i:
                shared.append((path, owner[1], v))
    return first, shared


def _read_only_view(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.flags.writeable = False
    return view


def separate_arguments(args: tuple, name: str) -> tuple | None:
    """``args`` with every top-level array argument that shares memory with another argument
    replaced by its own read-only view, or None when no two arguments share float data (the
    caller then keeps its usual tangents). The caller gives each argument its own tangent."""
    if len(args) < 2:
        return None
    _, shared = _owners(args)
    shared = [(p, q, v) for p, q, v in shared if isinstance(v, np.ndarray) or has_float_leaf(v)]
    if not shared:
        return None
    nested = [(p, q, v) for p, q, v in shared if not (isinstance(v, np.ndarray) and _top(p) and _top(q))]
    if nested:
        p, q, v = nested[0]
        p, q = _spelt(p), _spelt(q)
        what = "share one array's memory" if isinstance(v, np.ndarray) else \
            f"are the same {type(v).__qualname__} (holding float data)"
        raise TypeError(
            f"{name}: {q} and {p} {what}. yuebing differentiates each argument separately, as JAX does "
            "(docs/conventions.md, \"Arguments\"): it separates arrays passed directly as arguments, but "
            "not data shared inside containers. Pass a copy to one of them (copy.deepcopy(...)), or "
            "differentiate a function of one argument (lambda p: f(p, p)) for the derivative through both"
        )
    positions = {int(p.split()[1]) for p, _, _ in shared} | {int(q.split()[1]) for _, q, _ in shared}
    return tuple(_read_only_view(a) if i in positions else a for i, a in enumerate(args))


def _top(path: Any) -> bool:
    """Whether a path is an argument itself (not something inside one)."""
    return type(path) is str


def note_shared_write(error: BaseException, name: str) -> None:
    """A write into an array shared by two arguments (read-only while they are differentiated
    separately): say why, and what to do."""
    if isinstance(error, ValueError) and "read-only" in str(error) and hasattr(error, "add_note"):
        error.add_note(
            f"{name}: two arguments share this array's memory (the same array passed twice, or views of "
            "one array), so yuebing differentiates each argument separately, as JAX does, and the function "
            "may not write into it. Pass a copy to one of them (f(a, a.copy())), or differentiate a "
            "function of one argument (lambda a: f(a, a)) for the derivative through both"
        )


def shared_view_tangents(primals: tuple, tangents: tuple, name: str) -> tuple:
    """``tangents``, each made views of one tangent array where its primal holds views of one array
    (module docstring); a ``ValueError`` naming the places where two of them disagree."""
    try:
        return tuple(share_view_tangents(p, t, f"primals[{i}]") for i, (p, t) in enumerate(zip(primals, tangents)))
    except ValueError as error:
        raise ValueError(f"{name}: {error}") from None
