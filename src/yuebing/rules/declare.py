"""Declarative rule makers: one short table entry per function, like autograd's ``defvjp``.

* ``elementwise(f, *partials)`` -- an elementwise function (ufunc, ``math`` function, scalar
  operator) given the partial derivative with respect to each argument as
  ``partial(*inputs, output)``. Reverse and forward rules are built from it, with broadcasting,
  complex numbers (holomorphic: the adjoint multiplies by the conjugate), and ufunc ``out=``,
  ``where=`` (with ``out=``: the unselected elements keep their values) and ``dtype=``.
  ``None`` in place of a partial means "not differentiable in this argument" (zero).
* ``nondifferentiable(*fs)`` -- functions whose derivative is zero (``len``, comparisons, RNG
  draws, ``np.argmax``): both rules return the primal result with a zero tangent. With ``out=``
  (``np.round(x, 2, out=y)``, ``np.rint(x, y)``) the array written holds a constant: its old
  derivative is dropped (zeroed; where ``where=`` selects), and the pullback restores its contents.
* ``nondifferentiable_methods(type, *names)`` -- the same for methods of builtin types.

The strong-zero rule (docs/conventions.md) lives here too: ``strong_product(d, partial)`` is
``d * partial`` with exactly 0 wherever the incoming cotangent or tangent ``d`` is exactly 0, even
where the local partial is inf or NaN (a masked branch, ``np.where(x > 0, np.sqrt(x), 0.0)``,
gets 0, not NaN, where it is masked). Every derivative product in the rules and the inline
templates goes through it or through an equivalent test; primal values are never touched.
"""
from __future__ import annotations

import contextlib
import inspect
import threading
import types
from typing import Any, Callable

import numpy as np

from ..ir import float_errors
from ..tangents import NoFData, NoRData, NoTangent, zero_tangent
from . import aliasing_views, array_like, float_text
from .core import CoDual, Dual, RuleArgumentError, describe_callable, primal, register_frule, register_rrule
from .util import (accumulate, call_on_primals, fit_tangent, is_differentiable, out_cotangent, output,
                   refuse_numbers_into_object_array, tangent)

Partial = Callable[..., Any] | None

#: What the declarations below recorded, for second order (``rules/second_order.py``): the
#: partials of each elementwise function, and the functions and methods with zero derivative.
ELEMENTWISE_PARTIALS: dict[Any, tuple] = {}
ZERO_DERIVATIVE: set = set()

_ARG_NAMES = ("x", "y", "z", "w")
_NO_CONTEXT = contextlib.nullcontext()


def _signature(arity: int, ufunc_keywords: bool) -> inspect.Signature:
    P = inspect.Parameter
    params = [P(name, P.POSITIONAL_OR_KEYWORD) for name in _ARG_NAMES[:arity]]
    if ufunc_keywords:
        params += [P("out", P.POSITIONAL_OR_KEYWORD, default=None),
                   P("where", P.POSITIONAL_OR_KEYWORD, default=True),
                   P("dtype", P.POSITIONAL_OR_KEYWORD, default=None)]
    return inspect.Signature(params)


def _conj(d: Any) -> Any:
    return np.conj(d) if np.iscomplexobj(d) else d


def _unpack_out(out: Any) -> CoDual | None:
    """The ``out=`` codual of a ufunc call (``out=arr`` or ``out=(arr,)``), or None (also for
    ``out=None`` passed explicitly, as NumPy's own Python passes it on)."""
    if out is None or primal(out) is None:
        return None
    if isinstance(out, CoDual) and isinstance(out.primal, tuple):
        if len(out.primal) != 1:
            raise RuleArgumentError("yuebing supports ufuncs with a single output array")
        fd = out.fdata[0] if isinstance(out.fdata, tuple) else out.fdata
        return CoDual(out.primal[0], fd)
    if not isinstance(out, CoDual):
        return CoDual(out, np.zeros_like(out))
    return out


def _check_where(name: str, where: Any) -> None:
    if primal(where) is not True:
        raise RuleArgumentError(
            f"{name}: yuebing does not differentiate this function called with where=; "
            "use np.where(mask, f(x), fallback) instead"
        )


def ufunc_mask(name: str, where: Any, has_out: bool) -> Any:
    """A ufunc's ``where=`` as a bool array (None for ``True``): the elements of ``out=`` it writes,
    the others keeping their old contents (and their cotangents). Without ``out=`` NumPy leaves
    the unselected elements uninitialized, which have no derivative: refused."""
    mask = primal(where)
    if mask is True:
        return None
    if not has_out:
        raise RuleArgumentError(
            f"{name}: where= without out= leaves the unselected elements uninitialized; pass out= "
            "(the array keeping the other values), or use np.where(mask, f(x), fallback)")
    return np.asarray(mask, dtype=bool)


def ufunc_dtype(name: str, dtype: Any, xs: list) -> np.dtype | None:
    """The dtype a ufunc's ``dtype=`` names (None when not given). A DType class
    (``type(np.dtype(float))``, which ``np.linspace`` passes) names its scalar type's dtype, though
    ``np.dtype`` of it is ``object``. An object dtype on float inputs is refused: the result's
    elements would be Python objects, which carry no derivative."""
    if dtype is None:
        return None
    if isinstance(dtype, type) and issubclass(dtype, np.dtype):
        dtype = dtype.type
    dtype = np.dtype(dtype)
    if dtype.kind == "O" and any(is_differentiable(x) for x in xs):
        raise RuleArgumentError(f"{name}(..., dtype=object) of float data: object arrays carry no derivative; "
                                "drop dtype= (or pass dtype=np.float64)")
    return dtype


def strong_product(d: Any, partial: Any) -> Any:
    """``d * partial`` where an exactly-zero ``d`` (cotangent or tangent) gives exactly 0, even
    where ``partial`` is inf or NaN. Cheap: the product is taken as usual and fixed only when it
    holds a NaN (one reduction; ``+inf + -inf`` also reads as NaN and only costs the fix-up)."""
    p = d * partial
    if type(p) is np.ndarray:
        if has_nan(p):
            zero_where_zero(p, d)
        return p
    if p != p and d == 0:  # a number (Python floats give 0.0 * inf = nan too)
        return type(p)(0)
    return p


class _ForwardStrength(threading.local):
    strong = True  # the default everywhere: products by the strong-zero rule


#: Forward mode checks the strong zero once per program output (``api/forward.py``): the first pass
#: multiplies tangents plainly (``FORWARD.strong`` False, in the elementwise forward rules and the
#: forward templates), and only an output holding a NaN is computed again with every product by
#: the rule. A NaN-free output is the same either way: the rule changes only products that come
#: out NaN, and a NaN, once made, reaches the output unless a selection by primal values (the same
#: in both passes) drops it.
FORWARD = _ForwardStrength()


def forward_product(d: Any, partial: Any) -> Any:
    """A tangent times a partial in forward mode: ``strong_product`` unless the pass is plain."""
    return strong_product(d, partial) if FORWARD.strong else d * partial


def strong_quotient(d: Any, b: Any) -> Any:
    """``d / b`` with the strong zero of ``strong_product`` (``0 / 0`` and ``0 / nan`` give 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = d / b
    if type(q) is np.ndarray:
        if has_nan(q):
            zero_where_zero(q, d)
        return q
    if q != q and d == 0:
        return type(q)(0)
    return q


_add_reduce = np.add.reduce
_vdot = np.vdot
_F64 = np.dtype(np.float64)
SMALL = 4096  # below this, BLAS dot products run on one thread (OpenBLAS threads above 10000)


def has_nan(p: np.ndarray) -> bool:
    """Whether float or complex array ``p`` may hold a NaN (no false negatives). A small float64
    array: its sum of squares (``np.vdot``, the cheapest call; squares are never -inf, so only a
    NaN makes it NaN). Otherwise its sum, a ufunc reduction (a large dot product may start BLAS
    threads, which on a busy machine cost milliseconds); ``+inf`` and ``-inf`` together read as
    NaN too, a false alarm that only costs the fix-up."""
    if p.dtype is _F64 and p.size <= SMALL:
        total = _vdot(p, p)
    elif p.dtype.kind in "fc":
        total = _add_reduce(p, None)
    else:
        return False
    return total != total


def zero_where_zero(p: np.ndarray, d: Any) -> None:
    """Set ``p`` (a fresh product) to 0 where ``d``, broadcast to ``p``'s shape, is exactly 0."""
    np.copyto(p, 0, where=np.equal(d, 0))


def _is_exact_zero(d: Any) -> bool:
    """Whether a number tangent/cotangent is exactly 0 (arrays are not inspected: too costly)."""
    return type(d) is float and d == 0.0 or isinstance(d, (np.floating, int)) and d == 0


def elementwise(f: Any, *partials: Partial, ufunc_keywords: bool | None = None) -> None:
    """Register reverse and forward rules for elementwise ``f`` from its partial derivatives."""
    rrule, frule = make_elementwise_rules(f, *partials, ufunc_keywords=ufunc_keywords)
    register_rrule(f, rrule)
    register_frule(f, frule)


def make_elementwise_rules(f: Any, *partials: Partial, ufunc_keywords: bool | None = None) -> tuple[Callable, Callable]:
    """``(rrule, frule)`` for elementwise ``f``, not registered (for rules that dispatch on type)."""
    arity = len(partials)
    name = describe_callable(f)
    ELEMENTWISE_PARTIALS.setdefault(f, partials)
    if ufunc_keywords is None:
        ufunc_keywords = isinstance(f, np.ufunc)

    def rrule(*args: Any) -> tuple[CoDual, Callable]:
        inputs = args[:arity]
        out = _unpack_out(args[arity]) if ufunc_keywords and len(args) > arity else None
        mask = ufunc_mask(name, args[arity + 1], out is not None) if ufunc_keywords and len(args) > arity + 1 else None
        xs = [primal(a) for a in inputs]
        dtype = ufunc_dtype(name, primal(args[arity + 2]), xs) if ufunc_keywords and len(args) > arity + 2 else None
        kwargs = {"dtype": dtype} if dtype is not None else {}
        if mask is not None:
            kwargs["where"] = mask
        if out is None:
            y = f(*xs, **kwargs)
            result = output(y)
            saved = None
        else:
            refuse_numbers_into_object_array(name, out.primal, xs)
            saved = out.primal.copy()
            f(*xs, out=out.primal, **kwargs)
            aliasing_views.note_write(out.primal)
            result = out
            y = out.primal.copy()

        def pullback(dy: Any) -> tuple:
            g = out_cotangent(result, dy)
            if saved is not None and not isinstance(out.fdata, np.ndarray):  # out= an int or bool array:
                out.primal[...] = saved                                      # no cotangent to move
            elif saved is not None:  # the old contents of out= were overwritten: cotangent 0
                g = g.copy()
                if mask is None:
                    out.fdata[...] = 0
                else:  # where= wrote the selected elements only: the others keep their cotangent
                    np.copyto(out.fdata, 0, where=mask)
                    g = np.where(mask, g, 0)
                out.primal[...] = saved
            rdatas = [NoRData]
            zero = _is_exact_zero(g)  # strong zero: contributes nothing, whatever the partials
            with np.errstate(all="ignore") if mask is not None else _NO_CONTEXT:  # unselected: cotangent 0
                for arg, x, partial in zip(inputs, xs, partials):
                    if partial is None or zero or not is_differentiable(x) or _is_constant_array(arg):
                        rdatas.append(NoRData)
                    else:
                        rdatas.append(accumulate(arg, strong_product(g, _conj(partial(*xs, y)))))
            return tuple(rdatas) + (NoRData,) * (len(args) - arity)

        if saved is None:  # no out=: nothing that existed was changed (transform/exceptions.py)
            pullback.changes_nothing = True  # type: ignore[attr-defined]
        return result, pullback

    def frule(*args: Any) -> Dual:
        inputs = args[:arity]
        out = args[arity] if ufunc_keywords and len(args) > arity and primal(args[arity]) is not None else None
        mask = ufunc_mask(name, args[arity + 1], out is not None) if ufunc_keywords and len(args) > arity + 1 else None
        xs = [primal(a) for a in inputs]
        dtype = ufunc_dtype(name, primal(args[arity + 2]), xs) if ufunc_keywords and len(args) > arity + 2 else None
        kwargs = {"dtype": dtype} if dtype is not None else {}
        if out is not None and isinstance(primal(out), tuple):
            t = tangent(out)
            out = Dual(primal(out)[0], t[0] if isinstance(t, tuple) else NoTangent)
        with np.errstate(all="ignore") if mask is not None else _NO_CONTEXT:  # unselected: computed, then dropped
            y = f(*xs, **kwargs)
            dy = _elementwise_tangent(inputs, xs, y, partials)
        if out is None:
            return Dual(y, fit_tangent(dy, y))
        target = out.primal if isinstance(out, Dual) else out
        refuse_numbers_into_object_array(name, target, y)
        if mask is not None:  # where=: the unselected elements keep their values and tangents
            np.copyto(target, y, where=mask, casting="unsafe")
            if isinstance(out, Dual) and isinstance(out.tangent, np.ndarray):
                np.copyto(out.tangent, fit_tangent(dy, target), where=mask, casting="unsafe")
                return Dual(target, out.tangent)
            return Dual(target, np.where(mask, fit_tangent(dy, target), 0))
        target[...] = y
        dy = fit_tangent(dy, target)
        if isinstance(out, Dual) and isinstance(out.tangent, np.ndarray):
            out.tangent[...] = dy
            return Dual(target, out.tangent)
        return Dual(target, dy)

    float_errors.DERIVATIVE_CODE.update(p.__code__ for p in partials if hasattr(p, "__code__"))
    signature = _signature(arity, ufunc_keywords)
    rrule.__signature__ = frule.__signature__ = signature  # type: ignore[attr-defined]
    rrule.__qualname__ = f"rrule[{name}]"
    frule.__qualname__ = f"frule[{name}]"
    return rrule, frule


def _elementwise_tangent(inputs: tuple, xs: list, y: Any, partials: tuple) -> Any:
    """The tangent of an elementwise call: each input's tangent times its partial, summed."""
    dy: Any = NoTangent
    for arg, x, partial in zip(inputs, xs, partials):
        dx = tangent(arg)
        if partial is None or dx is NoTangent or _is_exact_zero(dx) or not is_differentiable(x):
            continue  # no derivative (a constant exponent), or a zero tangent: strong zero
        term = forward_product(dx, partial(*xs, y))
        dy = term if dy is NoTangent else dy + term
    return dy


# their floating-point errors are a derivative's, never the primal's (ir/float_errors.py)
float_errors.DERIVATIVE_CODE.update(f.__code__ for f in (strong_product, strong_quotient, forward_product,
                                                          _elementwise_tangent))


def _is_constant_array(arg: Any) -> bool:
    """An array argument without fdata: constant data, whose cotangent nobody gathers."""
    return isinstance(arg, CoDual) and isinstance(arg.primal, np.ndarray) and arg.fdata is NoFData


def nondifferentiable(*fs: Any) -> None:
    """Declare functions whose result has zero derivative with respect to every argument.

    Keyword arguments at call sites are passed through unchanged.
    """
    for f in fs:
        ZERO_DERIVATIVE.add(f)
        array_like.TAKES_ARRAY_OBJECTS.add(f)  # any argument, a np.poly1d too: the result is constant
        for table_register, make in ((register_rrule, _zero_rrule_kw), (register_frule, _zero_frule_kw)):
            table_register(f, make(f))


def nondifferentiable_as(f: Any, computed: Callable) -> None:
    """Declare ``f`` with zero derivative, its value computed by ``computed`` (the same value in a
    form whose reads yuebing follows: ``scipy_stats._kendalltau_of_ranks``)."""
    ZERO_DERIVATIVE.add(f)
    array_like.TAKES_ARRAY_OBJECTS.add(f)
    register_rrule(f, _zero_rrule_kw(computed))
    register_frule(f, _zero_frule_kw(computed))


def nondifferentiable_methods(tp: type, *names: str) -> None:
    """Declare methods of builtin type ``tp`` with zero derivative (``list.index``, ...)."""
    for name in names:
        method = getattr(tp, name)
        ZERO_DERIVATIVE.add((tp, name))
        register_rrule((tp, name), _zero_rrule_kw(method))
        register_frule((tp, name), _zero_frule_kw(method))


def given_out(f: Callable, args: tuple, kwargs: dict) -> list:
    """The arrays a call of ``f`` writes its result into (``out=``, by keyword or position; a
    ufunc's ``out=(array,)`` too), as the arguments given (coduals, duals or values)."""
    out = kwargs.get("out")
    if out is None:
        position = _out_position(f)
        out = args[position] if position is not None and position < len(args) else None
    if out is None or primal(out) is None:
        return []
    if isinstance(primal(out), tuple):  # a ufunc's out=(array,): its elements and their tangents
        fdata = out.fdata if isinstance(out, CoDual) else getattr(out, "tangent", NoFData)
        parts = fdata if isinstance(fdata, tuple) else (NoFData,) * len(primal(out))
        return [CoDual(p, d) for p, d in zip(primal(out), parts) if p is not None]
    return [out]


_OUT_POSITIONS: dict = {}


def _out_position(f: Callable) -> int | None:
    """Where ``out`` stands among ``f``'s parameters (cached: zero-derivative calls are hot; not
    for a method bound to an object, new at every access, which the cache would keep alive)."""
    owner = getattr(f, "__self__", None)
    if owner is not None and not isinstance(owner, (types.ModuleType, type)):
        return _signature_out_position(f)
    try:
        return _OUT_POSITIONS[f]
    except KeyError:
        pass
    except TypeError:  # an unhashable callable
        return _signature_out_position(f)
    position = _OUT_POSITIONS[f] = _signature_out_position(f)
    return position


def _signature_out_position(f: Callable) -> int | None:
    try:
        names = list(inspect.signature(f).parameters)
    except (TypeError, ValueError):  # no signature: out= only by keyword
        return None
    return names.index("out") if "out" in names else None


def _written(out: Any, kwargs: dict) -> tuple[Any, Any]:
    """The derivative data (fdata or tangent) of an ``out=`` array, and the elements written
    (``where=``'s mask broadcast to it, or None for all)."""
    data = out.fdata if isinstance(out, CoDual) else getattr(out, "tangent", NoTangent)
    return data, written_mask(primal(kwargs["where"]), np.shape(primal(out))) if "where" in kwargs else None


def written_mask(where: Any, shape: tuple) -> Any:
    """The elements a ufunc's ``where=`` writes, broadcast to ``shape`` (None: all of them)."""
    return None if where is True or where is None else np.broadcast_to(where, shape)


def zero_written(data: Any, mask: Any) -> None:
    """A constant was written there: its derivative is 0 (the unselected elements of a where=
    call keep theirs)."""
    if isinstance(data, np.ndarray):
        np.copyto(data, 0, where=True if mask is None else mask)


def _zero_rrule_kw(f: Callable) -> Callable:
    name = describe_callable(f)

    def rrule(*args: Any, **kwargs: Any) -> tuple[CoDual, Callable]:
        outs = given_out(f, args, kwargs)
        saved = [primal(o).copy() for o in outs]  # out= is overwritten: restored by the pullback
        y = call_on_primals(f, args, kwargs)
        for o in outs:
            aliasing_views.note_write(primal(o))
        if type(y) in float_text.CONCERNS:  # text made of float data, numbers parsed from text, a view
            float_text.after_zero_call(name, tuple(map(primal, args)), {k: primal(v) for k, v in kwargs.items()}, y,
                                       [primal(o) for o in outs])
        result = next((CoDual(y, o.fdata) for o in outs if primal(o) is y), None) or output(y)
        n = len(args) + len(kwargs) + 1

        def pullback(dy: Any) -> tuple:
            for o, old in zip(outs, saved):  # the old contents were overwritten: cotangent 0
                zero_written(*_written(o, kwargs))
                primal(o)[...] = old
            return (NoRData,) * n

        if not outs:
            pullback.changes_nothing = True  # type: ignore[attr-defined] - no state to restore (exceptions.py)
        return result, pullback

    rrule.__qualname__ = f"rrule[{describe_callable(f)}] (zero derivative)"
    return rrule


def _zero_frule_kw(f: Callable) -> Callable:
    name = describe_callable(f)

    def frule(*args: Any, **kwargs: Any) -> Dual:
        outs = given_out(f, args, kwargs)
        y = call_on_primals(f, args, kwargs)
        if type(y) in float_text.CONCERNS:  # text made of float data, numbers parsed from text, a view
            float_text.after_zero_call(name, tuple(map(primal, args)), {k: primal(v) for k, v in kwargs.items()}, y,
                                       [primal(o) for o in outs])
        for o in outs:
            zero_written(*_written(o, kwargs))
        written = [_written(o, kwargs)[0] for o in outs if primal(o) is y]
        if written and isinstance(written[0], np.ndarray):
            return Dual(y, written[0])  # the out= array itself: its tangent, now zero
        return Dual(y, zero_tangent(y))

    frule.__qualname__ = f"frule[{describe_callable(f)}] (zero derivative)"
    return frule
