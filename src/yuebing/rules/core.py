"""The rule interface (DESIGN.md §4): coduals and duals, the rule registries, and dispatch.

Reverse rules
    ``rule(*coduals) -> (codual_out, pullback)`` and ``pullback(out_rdata) -> rdatas``, where
    ``rdatas`` is a tuple with the rdata of ``f`` first (``NoRData`` for a primitive), then one
    rdata per argument the rule received. A pullback *increments* the fdata of its arguments in
    place (never overwrites) and undoes any mutation its forward pass made to primal state.
Forward rules
    ``rule(*duals) -> dual_out``; tangents of mutated arguments are updated in place with them.

Rules are registered per function object (``np.sin``, ``math.exp``, ``len``) or, for methods of
builtin and NumPy types, per ``(type, method name)`` (``(list, "append")``). Arguments are passed
positionally: keyword arguments at a call site are moved into their positions using the rule's
own signature (its parameter names are the primal function's), and the pullback's rdata is mapped
back to the call site's order by ``rrule``. Parameters not given at the call site arrive as their
plain default values, not as coduals; rules use ``primal(v)`` and ``isinstance(v, CoDual)``.
"""
from __future__ import annotations

import inspect
import types
from typing import Any, Callable, Iterable

from ..tangents import NoFData, NoRData, Tangent
from ..tangents.kinds import is_function_record
from . import lazy
from ._partial_work import reroute
from .numpy_coverage import REFUSED as _NUMPY_REFUSED  # data only: it imports nothing of ours

# --------------------------------------------------------------------------------------------
# Coduals and duals
# --------------------------------------------------------------------------------------------


class CoDual:
    """A primal value and its fdata (reverse mode)."""

    __slots__ = ("primal", "fdata")

    def __init__(self, primal: Any, fdata: Any = NoFData) -> None:
        self.primal = primal
        self.fdata = fdata

    def __repr__(self) -> str:
        return f"CoDual({self.primal!r}, {self.fdata!r})"


class Dual:
    """A primal value and its tangent (forward mode)."""

    __slots__ = ("primal", "tangent")

    def __init__(self, primal: Any, tangent: Any) -> None:
        self.primal = primal
        self.tangent = tangent

    def __repr__(self) -> str:
        return f"Dual({self.primal!r}, {self.tangent!r})"


def primal(v: Any) -> Any:
    """The primal value of a codual, a dual, or a plain (default) value."""
    return v.primal if isinstance(v, (CoDual, Dual)) else v


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------



def is_hashable(value: Any) -> bool:
    """Whether ``value`` can be a dict key (rule tables are keyed by function)."""
    try:
        hash(value)
    except TypeError:
        return False
    return True


def describe_callable(f: Any) -> str:
    """A qualified, human name for any callable (``numpy.linalg.inv``, ``list.append``)."""
    owner = getattr(f, "__self__", None)
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or type(f).__qualname__
    if isinstance(f, types.BuiltinMethodType) and owner is not None and is_function_record(owner):
        name = f.__name__  # pybind11's free function: its __qualname__ names the record's type
    elif isinstance(f, types.BuiltinMethodType) and owner is not None and not isinstance(owner, types.ModuleType):
        # bound to an instance (list.append) or to a class (object.__new__, dict.fromkeys: not type.__new__)
        return f"{(owner if isinstance(owner, type) else type(owner)).__qualname__}.{f.__name__}"
    module = getattr(f, "__module__", None)
    if module is None and isinstance(owner, types.ModuleType):
        module = owner.__name__
    if module == "_operator":
        module = "operator"
    if module in (None, "builtins"):
        return name
    return f"{module}.{name}"


class SecondOrderError(TypeError):
    """A construct or function that forward-over-reverse (hvp, hessian) does not support yet."""


class MissingRuleError(TypeError):
    """No rule is registered for a callable and it cannot be derived from source."""

    def __init__(self, f: Any, mode: str = "reverse", reason: str | None = None) -> None:
        name = describe_callable(f)
        why = reason or "it is implemented in C (it has no Python source to transform)"
        register = "yuebing.register_rrule" if mode == "reverse" else "yuebing.register_frule"
        super().__init__(
            f"yuebing has no {mode}-mode rule for {name}: {why}. {_numpy_reason(name)}Register one with "
            f"{register}({name}, rule) (docs/writing-rules.md), or, if its result carries no derivative, declare "
            f"it with yuebing.nondifferentiable({name})"
        )
        self.function = f


def _numpy_reason(name: str) -> str:
    """Why a NumPy name has no derivative, and what to use instead (``numpy_coverage.REFUSED``:
    ``np.matrix``'s ``*`` is a matrix product no array rule would see)."""
    reason = _NUMPY_REFUSED.get(name) or _NUMPY_REFUSED.get(f"numpy.{name}")
    return f"NumPy coverage: {reason}. " if reason else ""


class RuleArgumentError(TypeError):
    """A call passed an argument the rule does not accept."""


class NoDerivativeWarning(RuntimeWarning):
    """A derivative that does not exist at this point was asked for, so the result holds inf or
    NaN (as JAX's and PyTorch's do) and the warning says why: the vectors of a repeated eigenvalue
    or singular value, read by code whose derivative the rule cannot see (docs/linalg.md)."""


# --------------------------------------------------------------------------------------------
# Registries
# --------------------------------------------------------------------------------------------


class _Binder:
    """Maps a call site's keyword arguments into a rule's positional parameters."""

    __slots__ = ("names", "defaults", "passthrough", "name")

    def __init__(self, rule: Callable, name: str) -> None:
        params = list(inspect.signature(rule).parameters.values())
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self.names = [p.name for p in positional]
        self.defaults = [p.default for p in positional]
        # A rule taking **kwargs receives call-site keywords as keywords, and its pullback returns
        # their rdata after the positional ones, in call order.
        self.passthrough = any(p.kind is p.VAR_KEYWORD for p in params)
        self.name = name

    def bind(self, args: tuple, kwargs: dict) -> tuple[list, list[int]]:
        """Positional argument list, and where each call-site keyword ended up."""
        values = list(args)
        positions = []
        for key, value in kwargs.items():
            try:
                index = self.names.index(key)
            except ValueError:
                raise RuleArgumentError(
                    f"{self.name} got keyword argument {key!r}, which yuebing's rule for it does "
                    f"not support (supported: {', '.join(self.names[len(args):]) or 'none'})"
                ) from None
            if index < len(args):
                raise RuleArgumentError(f"{self.name} got multiple values for argument {key!r}")
            while len(values) <= index:
                values.append(_UNSET)
            values[index] = value
            positions.append(index)
        for i, v in enumerate(values):  # the gaps keywords left: defaults, or an error
            if v is _UNSET:
                if self.defaults[i] is inspect.Parameter.empty:
                    raise RuleArgumentError(f"{self.name} missing argument {self.names[i]!r}")
                values[i] = self.defaults[i]
        return values, positions


_UNSET = object()


class RuleTable:
    """Rules of one mode, keyed by function object or by (type, method name)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.by_function: dict[Any, tuple[Callable, _Binder]] = {}
        self.by_method: dict[tuple[type, str], tuple[Callable, _Binder]] = {}
        self.origin: dict[Any, str] = {}  # target -> module that registered it (for docs/rules.md)

    def register(self, target: Any, rule: Callable) -> None:
        self.origin[target if not isinstance(target, list) else tuple(target)] = _registering_module()
        if isinstance(target, tuple):
            tp, name = target
            self.by_method[(tp, name)] = (rule, _Binder(rule, f"{tp.__qualname__}.{name}"))
        else:
            self.by_function[target] = (rule, _Binder(rule, describe_callable(target)))

    def lookup(self, f: Any) -> tuple[Callable, _Binder, Any] | None:
        """``(rule, binder, self_or_None)``: a method rule receives the bound object first."""
        try:
            entry = self.by_function.get(f)
        except TypeError:  # unhashable callable
            entry = None
        if entry is not None:
            return entry[0], entry[1], None
        if lazy.load_imported():  # f may be a function of a library imported since: its rules are in now
            return self.lookup(f)
        if isinstance(f, (types.MethodDescriptorType, types.WrapperDescriptorType)):
            # an unbound method such as list.append or np.ndarray.sum: self is the first argument
            for tp in f.__objclass__.__mro__:
                entry = self.by_method.get((tp, f.__name__))
                if entry is not None:
                    return entry[0], entry[1], None
            return None
        owner = getattr(f, "__self__", None)
        if owner is not None and isinstance(f, (types.BuiltinMethodType, types.MethodWrapperType)) \
                and not isinstance(owner, types.ModuleType):
            name = f.__name__
            # a classmethod of a C class (itertools.chain.from_iterable) is bound to the class:
            # its entry is the class's own, (chain, "from_iterable"), before its metaclass's
            owners = (*owner.__mro__, *type(owner).__mro__) if isinstance(owner, type) else type(owner).__mro__
            for tp in owners:
                entry = self.by_method.get((tp, name))
                if entry is not None:
                    return entry[0], entry[1], owner
            entry = self.by_function.get(_slot_bound(f, owner, name))
            if entry is not None:  # a slot wrapper with a rule, bound by super(): object.__init__
                return entry[0], entry[1], owner
        return None

    def __contains__(self, target: Any) -> bool:
        if isinstance(target, tuple):
            return target in self.by_method
        return self.lookup(target) is not None


def _slot_bound(f: Any, owner: Any, name: str) -> Any:
    """The slot wrapper of a class in ``owner``'s MRO that ``f`` is bound from (``super().__init__``
    reaching ``object.__init__``), or None. Compared by binding it again, so ``dict.__init__`` is
    never taken for ``object.__init__``."""
    if not isinstance(f, types.MethodWrapperType):
        return None
    for tp in type(owner).__mro__:
        slot = tp.__dict__.get(name)
        if isinstance(slot, types.WrapperDescriptorType) and slot.__get__(owner) == f:
            return slot
    return None


def _registering_module() -> str:
    """The module whose top-level code is registering (directly or through helpers)."""
    import sys

    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name == "<module>":
            return frame.f_globals.get("__name__", "")
        frame = frame.f_back
    return ""


RRULES = RuleTable("reverse")
FRULES = RuleTable("forward")


def register_rrule(target: Any, rule: Callable) -> None:
    """Register reverse rule ``rule`` for a function object or a ``(type, method name)`` pair."""
    lazy.load_imported()  # yuebing's own rules for target's library first: they must not replace this one
    RRULES.register(target, rule)


def register_frule(target: Any, rule: Callable) -> None:
    """Register forward rule ``rule`` for a function object or a ``(type, method name)`` pair."""
    lazy.load_imported()
    FRULES.register(target, rule)


def rrule_for(*targets: Any) -> Callable[[Callable], Callable]:
    """Decorator: ``@rrule_for(np.sin)`` or ``@rrule_for((list, "append"))``."""

    def decorate(rule: Callable) -> Callable:
        for target in targets:
            register_rrule(target, rule)
        return rule

    return decorate


def frule_for(*targets: Any) -> Callable[[Callable], Callable]:
    """Decorator: ``@frule_for(np.sin)``."""

    def decorate(rule: Callable) -> Callable:
        for target in targets:
            register_frule(target, rule)
        return rule

    return decorate


# --------------------------------------------------------------------------------------------
# Dispatch
# --------------------------------------------------------------------------------------------


def _split_f(f: Any) -> tuple[Any, Any]:
    return (f.primal, f.fdata) if isinstance(f, CoDual) else (f, NoFData)


#: Set by ``yuebing.transform.runtime`` when yuebing is imported (rules never import
#: ``transform/``): ``derive_rrule(f_codual, *coduals)`` is the runtime's dispatch, which runs any
#: callable's reverse rule, deriving one from source when none is registered (Python functions,
#: methods, classes...). Rules that call back into differentiation (``map``, ``sorted(key=)``) use it.
derive_rrule: Callable | None = None


def rrule(f: Any, *args: CoDual, **kwargs: CoDual) -> tuple[CoDual, Callable]:
    """Run the reverse rule of ``f`` on coduals; returns ``(codual_out, pullback)``.

    ``pullback(out_rdata)`` returns the rdata of ``f``, then of each positional argument, then of
    each keyword argument in call order. Callables without a registered rule get a rule derived
    from their source (so rules such as ``map`` can call user functions).
    """
    function, f_fdata = _split_f(f)
    found = RRULES.lookup(function)
    if found is None:
        if derive_rrule is not None:
            return derive_rrule(f if isinstance(f, CoDual) else CoDual(f, NoFData), *args, **kwargs)
        raise MissingRuleError(function, "reverse")
    return run_rrule(found, f_fdata, args, kwargs)


def run_rrule(found: tuple, f_fdata: Any, args: tuple, kwargs: dict) -> tuple[CoDual, Callable]:
    """Run a looked-up reverse rule ``(rule, binder, owner)`` (see ``rrule``)."""
    rule, binder, owner = found
    if owner is not None:
        self_fdata = getattr(f_fdata, "__self__", NoFData) if f_fdata is not NoFData else NoFData
        args = (CoDual(owner, self_fdata),) + args
    if kwargs and binder.passthrough:
        values, keywords, positions, n_positional = args, kwargs, None, len(args) + len(kwargs)
    else:
        values, positions = binder.bind(args, kwargs) if kwargs else (args, None)
        keywords, n_positional = {}, len(args)
    try:
        out, pullback = rule(*values, **keywords) if keywords else rule(*values)
    except Exception as error:  # a function the rule called raised after partial work (issue 13)
        if owner is not None or positions is not None:
            reroute(error, lambda inner: _reordering_pullback(inner, owner is not None, n_positional, positions))
        raise
    if owner is not None or positions is not None:
        pullback = _reordering_pullback(pullback, owner is not None, n_positional, positions)
    if DEBUG_CHECKS is not None:
        names = binder.names[1:] if owner is not None else binder.names
        return DEBUG_CHECKS.checked_reverse(rule, names, args[1:] if owner is not None else args, kwargs, out, pullback)
    return out, pullback


def _reordering_pullback(pullback: Callable, has_owner: bool, n_positional: int, positions: list | None) -> Callable:
    """Map a rule's rdata (one per bound position) back to the call site's argument order."""

    def reordered(out_rdata: Any) -> tuple:
        rdatas = pullback(out_rdata)
        body = rdatas[1:]
        if has_owner:  # the bound object's rdata is the rdata of the bound method
            owner_rdata = body[0]
            f_rdata = NoRData if owner_rdata is NoRData else Tangent(types.BuiltinMethodType, {"__self__": owner_rdata})
            first = 1
        else:
            f_rdata, first = rdatas[0], 0
        return (f_rdata, *body[first:n_positional], *(body[p] for p in positions or ()))

    return reordered


#: Debug mode's checks (the module ``rules/debug.py``, which sets this when the mode is on, and
#: None when it is off: one global read per rule call).
DEBUG_CHECKS: Any = None

#: Set by ``yuebing.transform.forward_runtime``: builds forward rules for callables without a
#: registered one (Python functions, methods, classes...) by transforming their source.
derive_frule: Callable | None = None


def frule(f: Any, *args: Dual, **kwargs: Dual) -> Dual:
    """Run the forward rule of ``f`` on duals; returns the output dual. Callables without a
    registered rule get a rule derived from their source."""
    function = f.primal if isinstance(f, Dual) else f
    found = FRULES.lookup(function)
    if found is None:
        if derive_frule is not None:  # set by transform/forward_runtime.py when yuebing is imported
            return derive_frule(f, *args, **kwargs)
        raise MissingRuleError(function, "forward")
    rule, binder, owner = found
    if owner is not None:
        tangent = getattr(f.tangent, "__self__", None) if isinstance(f, Dual) else None
        from ..tangents import zero_tangent

        args = (Dual(owner, zero_tangent(owner) if tangent is None else tangent),) + args
    if kwargs and binder.passthrough:
        out = rule(*args, **kwargs)
    elif kwargs:
        values, _ = binder.bind(args, kwargs)
        out = rule(*values)
    else:
        out = rule(*args)
    if DEBUG_CHECKS is not None:
        return DEBUG_CHECKS.checked_forward(rule, binder.names, args, kwargs, out)
    return out


def has_rrule(f: Any) -> bool:
    return RRULES.lookup(f) is not None


def has_frule(f: Any) -> bool:
    return FRULES.lookup(f) is not None


def registered_functions() -> Iterable[Any]:
    """Every function object and (type, method) pair with a reverse rule."""
    return list(RRULES.by_function) + list(RRULES.by_method)

