"""Outside state: the mutable objects a differentiated function reaches without receiving or
creating them -- module globals, module and class attributes, the cells of closures made outside.

Within one top-level call (a gradient, a JVP, a Hessian-vector product) each such object has one
tangent per role (``"fdata"``, ``"tangent"``, and second order's ``"fdata_tangent"``), so what one
read writes into it (``LOG.append(x)``, ``mod.W[0] = x``, ``push(v)`` of a closure made at module
level) is there at the next read (``sum(LOG)``), in whatever function either happens. The API
layer opens a scope around each top-level pass (``enter``/``leave``); a nested differentiation
opens its own, so two levels never share a tangent. Outside any scope a read gets a fresh zero
tangent, as constants do.
"""
from __future__ import annotations

import threading
import types
from typing import Any, Callable

import numpy as np

from ..ir import generators
from ..tangents import NoFData, NoTangent
from .core import RuleArgumentError
from .outside_redo import final_state

_LOCAL = threading.local()  # (plain: differentiated code may read it, third order, and reads a subclass's
#                              attributes only if its class does not override __getattribute__)

#: open scopes, of any thread, that registered a class's cells or values (``register``): while
#: there are none, ``registered`` answers at once (it runs for every closure cell a call reads)
_CLASS_SCOPES = [0]
_CLASS_SCOPES_LOCK = threading.Lock()


class _Memo(dict):
    """A scope's memo; ``link`` (``(parent memo, {role: parent's role})``, or None) names the
    scope whose tangents it takes over at a first read (``enter``)."""

    __slots__ = ("link",)


def enter(link: tuple | None = None) -> Any:
    """Open a scope (at the start of a top-level pass); returns what ``leave`` restores.

    A nested pass (``yb.grad`` inside the differentiated function) given ``link = (memo, roles)``
    (``memo`` an outer pass's, from ``current``) takes, at the first read of an outside object in
    role ``r``, the outer scope's part of it in role ``roles[r]`` rather than a fresh zero: the
    value a module dict the outer pass wrote holds carries the outer derivative (its tangent, or
    the box its cotangent goes into), as a closure's captured cells do."""
    saved = getattr(_LOCAL, "memo", None)
    if link is None:  # (a pass ``followed`` asked for, the first opened in it)
        link, _LOCAL.next_link = getattr(_LOCAL, "next_link", None), None
    _LOCAL.memo = _Memo()
    _LOCAL.memo.link = link if link is not None and link[0] is not None else None
    _outer_memos().append(saved)
    generators.start_watching()  # (lazy generators with cleanup: refused if dropped unclosed)
    return saved


def leave(saved: Any, undo: Callable | None = None) -> Callable | None:
    """Close the scope ``enter`` opened (at the end of the pass's forward part). A lazy
    generator made in the pass and dropped unclosed where closing runs code is refused
    (``ir/generators.unclosed``), after ``undo()`` (a reverse pass putting the arguments back).
    Returns what gives the outside state the pass reached its contents of now back, for a
    top-level reverse pass to call when it has undone the forward part (``outside_redo.py``;
    None when it reached none)."""
    memo = getattr(_LOCAL, "memo", None)
    redo = None
    if memo:
        redo = final_state(memo)
        _keep_written_globals(memo)
        if _HAS_CLASSES in memo:
            with _CLASS_SCOPES_LOCK:
                _CLASS_SCOPES[0] -= 1
    _LOCAL.memo = saved
    outer = _outer_memos()
    if outer:
        outer.pop()
    dropped = generators.unclosed()
    checks = _CLOSING.pop(id(memo), None) if _CLOSING and memo is not None else None
    texts = [check() for check in checks] if checks else ()  # (every one runs: each forgets its scope's data)
    written = next((text for text in texts if text), None)
    if dropped or written:
        error = generators.UnclosedGeneratorError(*dropped[0]) if dropped else RuleArgumentError(written)
        if undo is not None:  # (the generator's error made before undo() takes the generator apart)
            undo()
        raise error
    return redo


#: what the rules of an open scope asked to check when it closes, by scope (``at_close``: rare, a
#: view repeating an array's entries was made, float data was formatted as text); a scope that
#: asked nothing costs its ``leave`` one test of this dict
_CLOSING: dict[int, list] = {}


def scope_id() -> int | None:
    """The open scope's identity (None outside one), for data a rule keeps for the scope."""
    memo = getattr(_LOCAL, "memo", None)
    return None if memo is None else id(memo)


def at_close(check: Callable[[], str | None]) -> None:
    """Run ``check`` when the open scope closes (``leave``, at the end of the forward part): the
    text it returns, if any, is raised as a ``RuleArgumentError`` after the pass is undone."""
    memo = getattr(_LOCAL, "memo", None)
    if memo is not None:
        _CLOSING.setdefault(id(memo), []).append(check)


def _outer_memos() -> list:
    """The memos of the scopes around the open one (None for no scope), innermost last."""
    outer = getattr(_LOCAL, "outer", None)
    if outer is None:
        outer = _LOCAL.outer = []
    return outer


def nested() -> bool:
    """Whether the open scope is a pass inside another pass (``yb.grad`` inside a differentiated
    function): what it writes to a global reaches the outer pass, which does not see its derivative."""
    outer = _outer_memos()
    return bool(outer) and outer[-1] is not None  # (the scope around the open one, if any)


def written_by_outer_pass(namespace: dict, name: str, or_this_one: bool = False) -> bool:
    """Whether a pass around the open one (``or_this_one``: or the open one) wrote global ``name``
    of ``namespace`` the value it holds (its derivative is that pass's, which an inner one does not
    see)."""
    value = namespace.get(name, UNWRITTEN)
    memos = _outer_memos() + [getattr(_LOCAL, "memo", None)] if or_this_one else _outer_memos()
    return any(key[0] == "global" and key[2] == id(namespace) and key[3] == name and hit[1].value is value
               for memo in memos if memo for key, hit in memo.items())


def note_nested_write(namespace: dict, name: str, value: Any) -> None:
    """The open scope, nested in others, wrote ``value`` to global ``name`` of ``namespace``: the
    scopes around it must not read that value (its derivative is the nested pass's, which they do
    not see: ``written_by_nested_pass``)."""
    for memo in _outer_memos():
        if memo is not None:  # (hit[0] None: nothing ``reached`` or ``final_state`` follows)
            memo[("nested_global", id(namespace), name)] = (None, (namespace, value))


def written_by_nested_pass(namespace: dict, name: str, value: Any) -> bool:
    """Whether a pass nested in the open one wrote ``value`` to global ``name`` of ``namespace``."""
    memo = getattr(_LOCAL, "memo", None)
    hit = memo.get(("nested_global", id(namespace), name)) if memo else None
    return hit is not None and hit[1][0] is namespace and hit[1][1] is value


class GlobalSlot:
    """A module global written in a differentiated call: the value written (``value``) and its
    tangent in one role (``tangent``), which every later read in the call shares."""

    __slots__ = ("value", "tangent")

    def __init__(self) -> None:
        self.value: Any = UNWRITTEN
        self.tangent: Any = NoTangent


UNWRITTEN = object()


def global_slot(role: str, namespace: dict, name: str, create: bool = False) -> GlobalSlot | None:
    """The slot of global ``name`` of module ``namespace`` in ``role`` for the open scope: made by
    the first write (``create``); None outside a scope, or before the call wrote the global."""
    memo = getattr(_LOCAL, "memo", None)
    if memo is None:
        return None
    if role == "fdata":
        role = getattr(_LOCAL, "fdata_role", "fdata")
    key = ("global", role, id(namespace), name)
    hit = memo.get(key)
    if hit is None:
        if not create:
            return None
        hit = memo[key] = (namespace, GlobalSlot())  # the namespace is kept: its id stays its own
    return hit[1]


def _keep_written_globals(memo: dict) -> None:
    """A container or array the pass wrote to a global (with its fdata: a reverse pass) will be
    unbuilt by the reverse pass, which undoes the pass's mutations of what it made: the module
    keeps a copy of it as the forward pass left it, what a plain call leaves there."""
    from ..tangents import structural_copy

    for key, (namespace, slot) in list(memo.items()):
        if key[0] != "global" or key[1] != "fdata" or slot.value is UNWRITTEN:
            continue
        value = namespace.get(key[3], UNWRITTEN)
        if value is slot.value and (is_mutable(value) or isinstance(value, tuple)):
            namespace[key[3]] = structural_copy(value)


def note_write(owner: Any, name: Any = None) -> None:
    """Called before a batched Hessian pass rebinds a name: global ``name`` of namespace
    ``owner``, attribute ``name`` of object ``owner``, or cell ``owner``'s variable (``name``
    None). Its memo (``api/outside_snapshot.py``) keeps what the name held, to put back if the
    pass is dropped."""
    note = getattr(getattr(_LOCAL, "memo", None), "note_write", None)
    if note is not None:
        note(owner, name)


def note_reached(value: Any) -> None:
    """Record, for the open scope, an outside object the pass writes without giving it a tangent
    (a cell of a closure made outside holding an int): ``outside_redo`` gives it back what the
    forward pass left in it after a reverse pass."""
    memo = getattr(_LOCAL, "memo", None)
    if memo is not None:
        memo.setdefault(("reached", id(value)), (value, None))


def reached() -> list:
    """The outside values the open scope and the scopes around it gave a tangent, and the values
    they wrote to globals: where a pass may have left data carrying derivatives (a function run
    without them must not read it: ``rules/cached_calls.py``)."""
    found = []
    for memo in (getattr(_LOCAL, "memo", None), *_outer_memos()):
        for key, hit in (memo or {}).items():
            found.append(hit[1].value if key[0] == "global" else hit[0])
    return found


def touched() -> bool:
    """Whether the open scope has handed out a tangent (the pass reached outside state)."""
    return bool(getattr(_LOCAL, "memo", None))


def active() -> bool:
    """Whether a scope is open (outside one, closures made outside keep no tangent boxes, so a
    ``nonlocal`` write into one is refused rather than lost)."""
    return getattr(_LOCAL, "memo", None) is not None


def shared(role: str, value: Any, make: Callable[[Any], Any]) -> Any:
    """The tangent of outside object ``value`` in ``role`` for the current scope, made by
    ``make(value)`` at its first read (or at every read outside a scope)."""
    memo = getattr(_LOCAL, "memo", None)
    if memo is None:
        return make(value)
    if role == "fdata":
        role = getattr(_LOCAL, "fdata_role", "fdata")
    return _resolve(memo, role, value, make)


class followed:
    """Around a nested pass the API opens as a top-level one (its ``enter()`` takes no link):
    links it to the open scope in ``roles``. With none, its value alone is used, the outer
    derivative through it followed by another pass (reverse mode over ``yb.grad``'s plain
    gradient): it reads what the outer pass wrote as constants without refusing them
    (``registered``)."""

    __slots__ = ("roles",)

    def __init__(self, roles: dict | None = None) -> None:
        self.roles = roles or {}

    def __enter__(self) -> None:
        _LOCAL.next_link = (current(), self.roles)

    def __exit__(self, *exc: Any) -> None:
        _LOCAL.next_link = None


def current() -> Any:
    """The open scope's memo (None outside one): what a nested pass links to (``enter``)."""
    return getattr(_LOCAL, "memo", None)


def _resolve(memo: dict, role: str, value: Any, make: Callable[[Any], Any]) -> Any:
    key = (role, id(value))
    hit = memo.get(key)
    if hit is None:
        made = _linked(memo, role, value, make)
        if made is NoTangent or made is NoFData:  # nothing to share (and nothing reached: see touched)
            return made
        hit = memo[key] = (value, made)  # the value is kept: its id stays its own for the scope
    return hit[1]


def _linked(memo: dict, role: str, value: Any, make: Callable[[Any], Any]) -> Any:
    """``value``'s part in ``role`` at its first read in ``memo``'s scope: the linked outer
    scope's, if it (or a scope it is linked to) reached ``value``; else a fresh one. (Never one
    made there: two passes linked to one scope, reaching what it did not, share nothing.)"""
    found = _found(getattr(memo, "link", None), role, value)
    return make(value) if found is None else found


def _found(link: tuple | None, role: str, value: Any) -> Any:
    """The part of ``value`` in the role ``role`` maps to in the scope ``link`` names (or in a
    scope that one is linked to), or None."""
    while link is not None and role in link[1]:
        memo, role = link[0], link[1][role]  # (the parent's name of the role)
        hit = memo.get((role, id(value)))
        if hit is not None and hit[0] is value:
            return hit[1]
        link = getattr(memo, "link", None)
    return None


def register(role: str, value: Any, made: Any, kind: str = "") -> None:
    """Give ``value`` the tangent ``made`` in ``role`` for the open scope: what a class made inside
    the differentiated function captures (``rules/local_classes.py``). ``kind`` keeps such entries
    apart from ``shared``'s (``"class_level"``: a class attribute's value); without it, ``shared``
    hands out ``made`` for ``value`` too (a cell's box)."""
    memo = getattr(_LOCAL, "memo", None)
    if memo is None:
        raise TypeError("yuebing: a class defined inside a differentiated function was made outside a "
                        "differentiation pass (call the function through yb.grad, yb.jvp or yb.hessian)")
    if role == "fdata":
        role = getattr(_LOCAL, "fdata_role", "fdata")
    memo[(kind, role, id(value)) if kind else (role, id(value))] = (value, made)
    memo[("registered", kind, id(value))] = (value, None)  # (what a nested pass must not reach)
    if _HAS_CLASSES not in memo:  # (registered's quick answer while no open scope registered)
        memo[_HAS_CLASSES] = (None, None)
        with _CLASS_SCOPES_LOCK:
            _CLASS_SCOPES[0] += 1


_HAS_CLASSES = ("has_classes",)  # a memo's key: the scope registered something


def registered(role: str, value: Any, kind: str = "") -> Any:
    """What ``register`` gave ``value`` in ``role`` (None if nothing, or outside a scope). A value
    an outer pass registered, reached by a nested pass (``yb.grad`` inside the function), is
    refused: the inner pass would take it for a constant."""
    if not _CLASS_SCOPES[0] and kind != "class_level":  # the common case: nothing registered (a hot path)
        return None
    memo = getattr(_LOCAL, "memo", None)
    if memo is None or not _CLASS_SCOPES[0] and getattr(memo, "link", None) is None:
        return None  # (a class attribute: the linked pass's outer one may have closed, reverse over yb.grad)
    if role == "fdata":
        role = getattr(_LOCAL, "fdata_role", "fdata")
    hit = memo.get((kind, role, id(value)) if kind else (role, id(value)))
    if hit is not None and hit[0] is value:
        return hit[1]
    link = getattr(memo, "link", None)
    if link is not None and kind == "class_level":  # a nested pass linked to the outer one: the outer
        # part of a class attribute, in the roles it takes over (its own, a constant, in the others)
        return _registered_in(link[0], link[1][role], value, kind) if role in link[1] else None
    outer = getattr(_LOCAL, "outer", None)
    if outer and (len(outer) > 1 or outer[0] is not None):  # (a nested pass: rare)
        _refuse_what_an_outer_pass_registered(value, kind, outer)
    return None


def _registered_in(memo: dict, role: str, value: Any, kind: str) -> Any:
    """What ``register`` gave ``value`` in ``role`` in the scope of ``memo`` or the scopes it is
    linked to (``enter``), or None."""
    hit = memo.get((kind, role, id(value)) if kind else (role, id(value)))
    if hit is not None and hit[0] is value:
        return hit[1]
    link = getattr(memo, "link", None)
    return _registered_in(link[0], link[1][role], value, kind) if link is not None and role in link[1] else None


def registered_by_linked_pass(value: Any, kind: str) -> bool:
    """Whether a pass the open one is linked to (``enter``) registered ``value`` (of ``kind``) in
    any role: a class attribute the outer pass wrote a value carrying derivatives into."""
    memo = getattr(_LOCAL, "memo", None)
    link = getattr(memo, "link", None)
    while link is not None:
        memo = link[0]
        if any(memo.get((kind, role, id(value)), (None,))[0] is value for role in ("fdata", "tangent")):
            return True
        link = getattr(memo, "link", None)
    return False


def _refuse_what_an_outer_pass_registered(value: Any, kind: str, outer: list) -> None:
    key = ("registered", kind, id(value))
    if any(memo and memo.get(key, (None,))[0] is value for memo in outer):
        if kind == "exception":  # (rules/exception_data.py)
            raise TypeError(
                "yuebing cannot differentiate a nested differentiation (yb.grad inside the differentiated function) "
                "reading float data out of an exception the outer pass made: the inner pass cannot follow its outer "
                "derivative. Read the value in the outer function and pass it to the inner one as an argument")
        raise TypeError(
            "yuebing cannot differentiate a nested differentiation (yb.grad inside the differentiated function) "
            "reaching " + ("a class attribute computed by" if kind else "a variable read by the methods of") +
            " a class the outer function defined: the inner pass cannot follow its outer derivative. Define the "
            "class inside the function given to the inner yb.grad, or pass the value to it as an argument")


class fdata_tangent_pass:
    """While second order runs a first-order rule on the fdata tangents (``transform/lifting.py``),
    the rule's outside reads are of the ``"fdata_tangent"`` role."""

    __slots__ = ("saved",)

    def __enter__(self) -> None:
        self.saved = getattr(_LOCAL, "fdata_role", "fdata")
        _LOCAL.fdata_role = "fdata_tangent"

    def __exit__(self, *exc: Any) -> None:
        _LOCAL.fdata_role = self.saved


def is_mutable(value: Any) -> bool:
    """Whether an outside value can be changed in place (so its tangent must be shared)."""
    if isinstance(value, (list, dict, set, np.ndarray)):
        return True
    return hasattr(value, "__dict__") and not isinstance(value, (type, types.ModuleType, types.FunctionType,
                                                                  types.MethodType, types.BuiltinFunctionType))
