"""NumPy array creation: ``np.array``/``asarray``/``asanyarray``/``ascontiguousarray``/
``asfortranarray``/``copy``, ``zeros``/``ones``/``empty``/``full`` and their ``*_like``,
``eye``/``identity``/``tri``, ``diag``, ``diagflat``, ``tril``/``triu`` and ``meshgrid``
(``arange``, ``linspace`` and ``logspace``: ``numpy_ranges.py``).

Inputs may be numbers, arrays, or (nested) lists and tuples of them (``np.array([x, 2.0])``).
Cotangents go back into that structure: an array's fdata is incremented, a float inside a list
is incremented in the list's fdata, a top-level float or a float in a top-level tuple is returned
as rdata. An input array reached twice (``np.array([a, a])``) receives both cotangents.

Aliasing (docs/writing-rules.md): when NumPy returns the input itself (``np.asarray(a)``,
``np.array(a, copy=False)``) the output codual *is* the input's; when it returns a view
(``np.array(a, copy=None, ndmin=2)``, ``np.asarray`` of a subclass, ``np.diag`` of a 2-D array,
which is a read-only view) the output's fdata is the same view of the input's fdata (writable, so
that cotangents flow through the shared memory). Everything else is a fresh array.

Zero derivative: ``zeros``, ``ones``, ``empty``, ``eye``, ``identity``, ``tri`` and
``zeros_like``/``ones_like``/``empty_like`` (with respect to the prototype). ``full`` and
``full_like`` are differentiable in ``fill_value``.
``meshgrid(copy=False)`` returns broadcast views that cannot carry tangents: refused.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tangents import MutableTangent, NoFData, NoRData, NoTangent
from .. import tangents as T
from . import array_like
from .cases import Case, randc, randn
from .containers.deques import TrackedDeque
from .core import CoDual, Dual, RuleArgumentError, frule_for, primal, rrule_for
from .flat_iterators import FlatIterator
from .numpy_arguments import deliver
from .numpy_arguments import dense_tangent as dense_array_tangent
from ._ufunc_calls import Params
from .second_order import linear
from . import structured_values as structured
from .util import accumulate, fit_tangent, out_cotangent, output, tangent, unbroadcast

# zeros/ones/empty/eye/identity/tri and *_like: declared in nondifferentiable.py


# --------------------------------------------------------------------------------------------
# Cotangents into (nested) sequences, and forward tangents out of them
# --------------------------------------------------------------------------------------------


def _has_tangent(y: Any) -> bool:
    return isinstance(y, np.ndarray) and y.dtype.kind in "fc" or isinstance(y, (float, complex, np.inexact))


def _real_if(x: Any, g: Any) -> Any:
    return np.real(g) if not np.iscomplexobj(x) else g


def _add_into_tangent(x: Any, t: Any, g: Any) -> Any:
    """``t + g`` for the full tangent ``t`` of ``x`` (an element of a list's fdata); arrays and
    lists are incremented in place, numbers and tuples are returned anew."""
    if isinstance(x, np.ndarray):
        if isinstance(t, np.ndarray):
            t += _real_if(x, np.reshape(g, x.shape))
        return t
    if isinstance(x, (float, np.floating)):
        return t + float(np.real(g))
    if isinstance(x, (complex, np.complexfloating)):
        return t + complex(g)
    if isinstance(x, np.void) and type(t) is np.void:  # a record: its tangent is a view (structured_values.py)
        structured.add_cotangent(t, x, g)
        return t
    if isinstance(x, list):
        for i, xi in enumerate(x):
            t[i] = _add_into_tangent(xi, t[i], g[i])
        return t
    if isinstance(x, tuple):
        if t is NoTangent:
            return t
        return type(t)(_add_into_tangent(xi, ti, g[i]) for i, (xi, ti) in enumerate(zip(x, t)))
    return t  # ints, bools: no tangent


def _deliver_to(x: Any, fd: Any, g: Any) -> Any:
    """Deliver array cotangent ``g`` (shaped like ``np.asarray(x)``) to primal ``x`` with fdata
    ``fd``: increment what has fdata, return the rdata of the rest."""
    if isinstance(x, np.ndarray):
        if isinstance(fd, np.ndarray):
            fd += _real_if(x, np.reshape(g, x.shape))
        return NoRData
    if isinstance(x, (float, np.floating)):
        return float(np.real(g))
    if isinstance(x, (complex, np.complexfloating)):
        return complex(g)
    if isinstance(x, list):
        if isinstance(fd, list):
            _add_into_tangent(x, fd, g)
        return NoRData
    if isinstance(x, tuple):
        fds = fd if isinstance(fd, tuple) else (NoFData,) * len(x)
        rdatas = tuple(_deliver_to(xi, fi, g[i]) for i, (xi, fi) in enumerate(zip(x, fds)))
        return NoRData if all(r is NoRData for r in rdatas) else rdatas
    if isinstance(x, FlatIterator):  # its array's elements in C order (rules/flat_iterators.py)
        base_fd = fd.fields["base"] if isinstance(fd, MutableTangent) else NoFData
        return _deliver_to(x.base, base_fd, np.reshape(g, x.base.shape))
    _refuse_opaque_array_source(x)
    return NoRData


def _refuse_array_object(x: Any) -> None:
    """Refuse an object read through ``__array__`` before the call (second order runs the rule
    on its tangent too, which is no array: an unclear TypeError later)."""
    if (array_like._array_object(x) or array_like.takes_part_in_numpy(x)) and not isinstance(x, FlatIterator):
        _refuse_opaque_array_source(x)


def _refuse_opaque_array_source(x: Any) -> None:
    """An object NumPy reads through ``__array__`` (a ``np.poly1d``, a user class): its derivative
    cannot be followed back into it, so one that carries float data is refused, not dropped."""
    if T.zero_tangent(x) is not NoTangent:
        raise RuleArgumentError(
            f"yuebing cannot follow derivatives from an array back into a {type(x).__qualname__} that NumPy "
            "converted (through __array__, or into an object array for a ufunc): pass its array data instead "
            "(for a np.poly1d, p.coeffs), or use its own methods (abs(A), A.multiply(B) for a sparse matrix)")


def deliver(arg: Any, g: Any) -> Any:
    """Deliver cotangent ``g`` to an argument that may be a number, an array or a nested
    list/tuple of them; ``g`` is shaped like ``np.asarray(primal(arg))``. Returns the rdata."""
    if not isinstance(arg, CoDual):
        return NoRData
    x = arg.primal
    if isinstance(x, np.ndarray) and x.dtype.kind not in "fc":
        return NoRData
    return _deliver_to(x, arg.fdata, np.asarray(g))


def deliver_broadcast(arg: Any, g: Any) -> Any:
    """``deliver`` for an argument that was broadcast to ``g``'s shape."""
    if not isinstance(arg, CoDual):
        return NoRData
    return deliver(arg, unbroadcast(g, np.shape(arg.primal)))


def _dense(x: Any, t: Any) -> Any:
    """The tangent ``t`` of ``x`` as nested lists/arrays, with zeros where it has none."""
    if isinstance(x, np.ndarray):
        return t if isinstance(t, np.ndarray) else np.zeros(x.shape)
    if isinstance(x, (list, tuple)):
        ts = t if isinstance(t, (list, tuple)) else [NoTangent] * len(x)
        return [_dense(xi, ti) for xi, ti in zip(x, ts)]
    if isinstance(x, (float, complex, np.inexact)) and t is not NoTangent:
        return t
    if isinstance(x, FlatIterator):  # its array's elements in C order (rules/flat_iterators.py)
        return np.ravel(_dense(x.base, t.fields["base"] if isinstance(t, MutableTangent) else NoTangent))
    if not isinstance(x, (int, float, complex, bool, np.number, np.bool_)):
        _refuse_opaque_array_source(x)
    return np.zeros(np.shape(x))


def dense(arg: Any) -> np.ndarray:
    """The forward tangent of an argument as an array shaped like ``np.asarray(primal(arg))``."""
    x = primal(arg)
    d = _dense(x, tangent(arg))
    return np.asarray(d) if not isinstance(x, np.ndarray) else d


def _vjp_pullback(vjp: Any, result: CoDual, args: tuple, params: Params) -> Any:
    """The pullback of a primitive declared ``with_vjp(f, vjp)``, for a rule written as
    ``rule(*args)`` with ``params``: the cotangents ``vjp(g, y, *primals)`` gives (defaults
    filled in), each summed back to its argument's shape (so the formula is written once, in the
    map that second order differentiates). One rdata per argument received."""

    def pullback(dy: Any) -> tuple:
        if not _has_tangent(result.primal):
            return (NoRData,) * (len(args) + 1)
        cotangents = vjp(out_cotangent(result, dy), result.primal, *(primal(a) for a in params.fill(args)))
        return (NoRData, *(NoRData if c is None else deliver_broadcast(a, c) for a, c in zip(args, cotangents)))

    return pullback


# --------------------------------------------------------------------------------------------
# np.array and friends: the result is the input, a view of it, or a fresh array
# --------------------------------------------------------------------------------------------


def _view_tangent(y: np.ndarray, x: np.ndarray, fd: np.ndarray, redo: Any) -> np.ndarray:
    """The tangent of ``y``, a view of ``x``: the same call applied to ``x``'s tangent ``fd``."""
    t = redo(fd)
    if t is fd:
        t = fd[...]
    if t.shape != y.shape or not np.shares_memory(t, fd) or t.strides != y.strides:
        raise RuleArgumentError(
            "yuebing cannot mirror this view in the tangent; pass copy=True to get a fresh array"
        )
    return t


def _deque_items(args: tuple) -> tuple:
    """``args`` with a deque made in the function (``containers/deques.py``), or in second order
    its tangent, replaced by its list of items, whose derivatives the conversion follows."""
    src = args[0]
    x = primal(src)
    if isinstance(x, TrackedDeque):
        items = x.items
    elif isinstance(x, MutableTangent) and x.primal_type is TrackedDeque:
        items = x.fields["items"]
    else:
        return args
    if isinstance(src, CoDual):
        fd = src.fdata
        src = CoDual(items, fd.fields["items"] if isinstance(fd, MutableTangent) else NoFData)
    elif isinstance(src, Dual):
        t = src.tangent
        src = Dual(items, t.fields["items"] if isinstance(t, MutableTangent) else NoTangent)
    else:
        src = items
    return (src, *args[1:])


def _structured_result(src: Any, y: np.ndarray, n: int, redo: Any) -> tuple:
    """``np.array(x, dtype=[...])``: a structured array made of records, numbers or another
    structured array; its cotangent goes back to ``x`` as NumPy read it (structured_values.py)."""
    x = primal(src)
    if isinstance(x, np.ndarray) and np.shares_memory(x, y) and isinstance(src.fdata, np.ndarray):
        return CoDual(y, _view_tangent(y, x, src.fdata, redo)), lambda dy: (NoRData,) * (n + 1)
    result = output(y)

    def pullback(dy: Any) -> tuple:
        g = out_cotangent(result, dy)
        if not isinstance(src, CoDual):
            r = NoRData
        elif structured.carries(x):
            r = accumulate(src, g)
        else:
            r = _deliver_to(x, src.fdata, structured.cotangent_as_value(g, x))
        return (NoRData, r) + (NoRData,) * (n - 1)

    return result, pullback


def _structured_tangent(src: Any, y: np.ndarray, redo: Any) -> Any:
    x, t = primal(src), tangent(src)
    if isinstance(x, np.ndarray) and np.shares_memory(x, y) and isinstance(t, np.ndarray):
        return _view_tangent(y, x, t, redo)
    return structured.region_tangent(y, x, t)


def _array_rules(f: Any) -> None:
    params = Params.of(f)
    name = f"numpy.{f.__name__}"

    def check(args: tuple) -> None:
        values = dict(zip(params.signature.parameters, (primal(a) for a in args)))
        if values.get("like") is not None:
            raise RuleArgumentError(f"{name}: yuebing does not support like=")

    def redo(args: tuple, value: Any) -> Any:
        return params.call(f, (value,) + tuple(args[1:]))

    @params
    def rrule(*args: Any) -> tuple:
        check(args)
        args = _deque_items(args)
        src = args[0]
        x = primal(src)
        _refuse_array_object(x)
        y = params.call(f, args)
        n = len(args)
        if structured.carries(y) and y is not x:
            return _structured_result(src, y, n, lambda v: redo(args, v))
        if y is x:
            return CoDual(y, src.fdata), lambda dy: (NoRData,) * (n + 1)
        if isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and _has_tangent(y) and np.shares_memory(x, y):
            return CoDual(y, _view_tangent(y, x, src.fdata, lambda v: redo(args, v))), lambda dy: (NoRData,) * (n + 1)
        result = output(y)

        def pullback(dy: Any) -> tuple:
            if not _has_tangent(y):
                return (NoRData,) * (n + 1)
            g = np.reshape(out_cotangent(result, dy), np.shape(x))  # ndmin added leading axes
            return (NoRData, deliver(src, g)) + (NoRData,) * (n - 1)

        return result, pullback

    @params
    def frule(*args: Any) -> Dual:
        check(args)
        args = _deque_items(args)
        src = args[0]
        x = primal(src)
        _refuse_array_object(x)
        y = params.call(f, args)
        if structured.carries(y) and y is not x:
            return Dual(y, _structured_tangent(src, y, lambda v: redo(args, v)))
        if y is x:
            return Dual(y, src.tangent)
        if isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and _has_tangent(y) and np.shares_memory(x, y):
            return Dual(y, _view_tangent(y, x, src.tangent, lambda v: redo(args, v)))
        if not _has_tangent(y):
            return Dual(y, fit_tangent(NoTangent, y))
        return Dual(y, fit_tangent(np.reshape(dense(src), np.shape(y)), y))

    rrule.__qualname__, frule.__qualname__ = f"rrule[{name}]", f"frule[{name}]"
    rrule_for(f)(rrule)
    frule_for(f)(frule)


for _f in (np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray, np.copy):
    _array_rules(_f)


# --------------------------------------------------------------------------------------------
# full(shape, fill_value, ...), full_like(a, fill_value, ...)
# --------------------------------------------------------------------------------------------


def _fill_rules(f: Any) -> None:
    params = Params.of(f)

    @params
    def rrule(*args: Any) -> tuple:
        y = params.call(f, args)
        result = output(y)
        fill = args[1]

        def pullback(dy: Any) -> tuple:
            r = deliver_broadcast(fill, out_cotangent(result, dy)) if _has_tangent(y) else NoRData
            return (NoRData, NoRData, r) + (NoRData,) * (len(args) - 2)

        return result, pullback

    @params
    def frule(*args: Any) -> Dual:
        y = params.call(f, args)
        if not _has_tangent(y):
            return Dual(y, fit_tangent(NoTangent, y))
        return Dual(y, fit_tangent(np.broadcast_to(dense(args[1]), np.shape(y)), y))

    rrule_for(f)(rrule)
    frule_for(f)(frule)


_fill_rules(np.full)
_fill_rules(np.full_like)


# --------------------------------------------------------------------------------------------
# diag, diagflat, tril, triu
# --------------------------------------------------------------------------------------------

_DIAG = Params(lambda v, k=0: None)


def _writable_diagonal(a: np.ndarray, k: int) -> np.ndarray:
    """The diagonal of tangent array ``a`` as a writable view (NumPy's is read-only)."""
    d = np.diagonal(a, k)
    d.flags.writeable = True
    return d


@rrule_for(np.diag)
@_DIAG
def _diag_rrule(*args: Any) -> tuple:
    v, k = _DIAG.fill(args)
    x, k = primal(v), primal(k)
    y = np.diag(x, k)
    n = len(args) + 1
    if np.ndim(x) == 2 and isinstance(x, np.ndarray) and isinstance(v.fdata, np.ndarray):
        return CoDual(y, _writable_diagonal(v.fdata, k)), lambda dy: (NoRData,) * n  # a view of v
    result = output(y)

    def pullback(dy: Any) -> tuple:
        g = out_cotangent(result, dy)
        if np.ndim(x) == 2:  # a 2-D list: y was read off a temporary array
            gx = np.zeros(np.shape(x), dtype=np.result_type(g, float))
            _writable_diagonal(gx, k)[...] = g
        else:
            gx = np.diagonal(g, k)
        return (NoRData, deliver(v, gx)) + (NoRData,) * (n - 2)

    return result, pullback


@frule_for(np.diag)
@_DIAG
def _diag_frule(*args: Any) -> Dual:
    v, k = _DIAG.fill(args)
    x, k = primal(v), primal(k)
    y = np.diag(x, k)
    if np.ndim(x) == 2 and isinstance(x, np.ndarray) and isinstance(tangent(v), np.ndarray):
        return Dual(y, _writable_diagonal(v.tangent, k))
    return Dual(y, fit_tangent(np.diag(dense(v), k), y))


def _linear_rules(f: Any, adjoint: Any) -> None:
    """Rules for ``f(v, k=0)``, linear in ``v`` with adjoint ``adjoint(g, x, k)``."""

    @rrule_for(f)
    @_DIAG
    def rrule(*args: Any) -> tuple:
        v, k = _DIAG.fill(args)
        x, k = primal(v), primal(k)
        result = output(f(x, k))

        def pullback(dy: Any) -> tuple:
            g = adjoint(out_cotangent(result, dy), x, k)
            return (NoRData, deliver(v, g)) + (NoRData,) * (len(args) - 1)

        return result, pullback

    @frule_for(f)
    @_DIAG
    def frule(*args: Any) -> Dual:
        v, k = _DIAG.fill(args)
        y = f(primal(v), primal(k))
        return Dual(y, fit_tangent(f(dense(v), primal(k)), y))


_linear_rules(np.diagflat, lambda g, x, k: np.reshape(np.diagonal(g, k), np.shape(x)))
_linear_rules(np.tril, lambda g, x, k: np.tril(g, k))
_linear_rules(np.triu, lambda g, x, k: np.triu(g, k))


# --------------------------------------------------------------------------------------------
# meshgrid(*xi, copy=True, sparse=False, indexing="xy")
# --------------------------------------------------------------------------------------------


def _meshgrid_options(kwargs: dict) -> dict:
    options = {k: primal(v) for k, v in kwargs.items()}
    unknown = set(options) - {"copy", "sparse", "indexing"}
    if unknown:
        raise RuleArgumentError(f"numpy.meshgrid got unexpected keyword arguments {sorted(unknown)}")
    if not options.get("copy", True):
        raise RuleArgumentError("numpy.meshgrid: yuebing does not differentiate copy=False (broadcast "
                                "views); use the default copy=True")
    return options


def _meshgrid_axis(i: int, n: int, indexing: str) -> int:
    if indexing == "xy" and n > 1 and i < 2:
        return 1 - i
    return i


@rrule_for(np.meshgrid)
def _meshgrid_rrule(*xi: Any, **kwargs: Any) -> tuple:
    options = _meshgrid_options(kwargs)
    ys = np.meshgrid(*(primal(x) for x in xi), **options)
    result = output(tuple(ys))
    indexing = options.get("indexing", "xy")

    def pullback(dy: Any) -> tuple:
        rdatas = [NoRData]
        for i, (x, g) in enumerate(zip(xi, result.fdata if isinstance(result.fdata, tuple) else ())):
            if not isinstance(g, np.ndarray):
                rdatas.append(NoRData)
                continue
            axis = _meshgrid_axis(i, len(xi), indexing)
            flat = np.sum(g, axis=tuple(a for a in range(g.ndim) if a != axis))
            rdatas.append(deliver(x, np.reshape(flat, np.shape(primal(x)))))
        rdatas += [NoRData] * (len(xi) + 1 - len(rdatas))
        return tuple(rdatas) + (NoRData,) * len(kwargs)

    return result, pullback


@frule_for(np.meshgrid)
def _meshgrid_frule(*xi: Any, **kwargs: Any) -> Dual:
    options = _meshgrid_options(kwargs)
    ys = tuple(np.meshgrid(*(primal(x) for x in xi), **options))
    dys = tuple(fit_tangent(d, y) for d, y in zip(np.meshgrid(*(dense(x) for x in xi), **options), ys))
    # grids of ints only carry nothing: the tuple's tangent is NoTangent, as output() makes it
    return Dual(ys, NoTangent if all(d is NoTangent for d in dys) else dys)


# --------------------------------------------------------------------------------------------
# NumPy scalar constructors: np.float64(x) is float(x) with NumPy's type (a cast, derivative 1);
# of an array or a list, NumPy makes an array of that dtype (np.asarray(x, dtype=np.float32))
# --------------------------------------------------------------------------------------------

_SCALAR_TYPES = (np.float64, np.float32, np.float16, np.longdouble, np.complex128, np.complex64, np.clongdouble)


def _makes_array(v: Any) -> bool:
    return isinstance(v, (list, tuple)) or isinstance(v, np.ndarray) and v.ndim > 0


def _scalar_rules(cls: type) -> None:
    complex_out = issubclass(cls, np.complexfloating)

    def rrule(x: Any = 0.0) -> tuple:
        v = primal(x)
        y = cls(v)
        if y is v:  # an array of that dtype already: NumPy returns it itself
            return CoDual(v, x.fdata if isinstance(x, CoDual) else NoFData), lambda dy: (NoRData, NoRData)
        result = output(y)
        array = _makes_array(v)

        def pullback(dy: Any) -> tuple:
            g = out_cotangent(result, dy)
            if g is NoRData or not isinstance(x, CoDual):
                return NoRData, NoRData
            if not complex_out and np.iscomplexobj(g):
                g = np.real(g)
            if array:  # the elements of a list, or an array (its own dtype): deliver them their cotangent
                return NoRData, deliver(x, g)
            return NoRData, accumulate(x, g)

        return result, pullback

    def frule(x: Any = 0.0) -> Dual:
        v = primal(x)
        y = cls(v)
        t = tangent(x)
        if y is v:
            return Dual(v, t)
        if t is NoTangent or not isinstance(v, (float, complex, np.inexact, np.ndarray, list, tuple)):
            return Dual(y, fit_tangent(NoTangent, y))
        if _makes_array(v):
            t = dense_array_tangent(v, t)
            return Dual(y, fit_tangent(NoTangent if t is None else np.asarray(t).astype(y.dtype, copy=False), y))
        return Dual(y, fit_tangent(np.reshape(t, ()) if isinstance(t, np.ndarray) else t, y))

    rrule.__qualname__, frule.__qualname__ = f"rrule[numpy.{cls.__name__}]", f"frule[numpy.{cls.__name__}]"
    rrule_for(cls)(rrule)
    frule_for(cls)(frule)


for _cls in _SCALAR_TYPES:
    _scalar_rules(_cls)


# --------------------------------------------------------------------------------------------
# Second order of the linear ones
# --------------------------------------------------------------------------------------------

linear(*_SCALAR_TYPES, data=(0, "x"))  # a cast: linear in its argument
# the result is the input, a view of it or a copy of its values (ints in a list are values)
linear(np.asanyarray, np.ascontiguousarray, np.asfortranarray, np.diagflat, data=(0, "a", "v"))
linear(np.full, np.full_like, data=(1, "fill_value"))  # the prototype gives only a shape
linear(np.meshgrid)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------

_a = randn(3)
_m = randn(3, 3)
# float32 results from float64 inputs
_F32_OUT = {"steps": (3e-2, 1e-2), "rtol": 1e-4, "atol": 1e-5}
CASES = [
    # np.array from floats, lists, nested lists, lists of arrays, arrays; dtype=, ndmin=, copy=
    Case(np.array, 1.5), Case(np.array, [1.0, 2.5, -0.5]), Case(np.array, [[1.0, 2.0], [3.0, 4.0]]),
    Case(np.array, [randn(3), randn(3)], name="array(list of arrays)"),
    Case(np.array, (1.0, randn(), 2), name="array(tuple of float, float, int)"),
    Case(np.array, [(1.0, 2.0), [3.0, 4.0]], name="array(list of tuple and list)"),
    Case(np.array, [_a, _a], name="array([a, a]): both cotangents reach a"),
    Case(np.array, [[randn(2), randn(2)], [randn(2), randn(2)]], name="array(nested lists of arrays)"),
    # float64 inputs with a float32 output: finite differences carry float32 rounding, so these
    # (linear) cases use large steps and a tolerance above float32's resolution
    Case(np.array, [1.0, 2], kwargs={"dtype": np.float32}, **_F32_OUT),
    Case(np.array, randn(2, 3)), Case(np.array, randn(3), kwargs={"dtype": np.float32}, **_F32_OUT),
    Case(np.array, randn(3, dtype=np.float32), kwargs={"dtype": np.float64}),
    Case(np.array, randc(3)), Case(np.array, randc()), Case(np.array, [randc(), 1.0]),
    Case(np.array, randn(3), kwargs={"ndmin": 3}), Case(np.array, randn(0)),
    Case(np.array, randn(4), kwargs={"copy": False}, name="array(a, copy=False): a itself"),
    Case(np.array, randn(4), kwargs={"copy": None, "ndmin": 2}, name="array(a, copy=None, ndmin=2): a view"),
    Case(np.array, randn(2, 3)[:, 1], kwargs={"copy": None}, name="array(view, copy=None): itself"),
    Case(np.array, [1, 2, 3], name="array(ints)"),
    # asarray (returns the same array), asanyarray, ascontiguousarray, asfortranarray, copy
    Case(np.asarray, randn(3)), Case(np.asarray, 2.5), Case(np.asarray, [1.0, randn()]),
    Case(np.asarray, randn(3), kwargs={"dtype": np.float32}, **_F32_OUT), Case(np.asarray, randn(2, 2), np.float64),
    Case(np.asarray, randn(3), kwargs={"copy": True}), Case(np.asarray, randc(2, 2)),
    Case(np.asanyarray, randn(3)), Case(np.asanyarray, [[1.0], [2.0]]),
    Case(np.ascontiguousarray, randn(3, 4)[:, ::2], name="ascontiguousarray(strided view): a copy"),
    Case(np.ascontiguousarray, randn(3, 4)), Case(np.ascontiguousarray, 2.0),
    Case(np.asfortranarray, randn(3, 4)), Case(np.copy, randn(2, 3)), Case(np.copy, [1.0, 2.0]),
    Case(np.copy, randn(3, dtype=np.float32)),
    # zero derivative
    Case(np.zeros, (2, 3)), Case(np.ones, 3, kwargs={"dtype": np.float32}), Case(np.empty, (0,)),
    Case(np.eye, 3, 4, 1), Case(np.identity, 3), Case(np.tri, 3, 4, -1),
    Case(np.zeros_like, randn(2, 3)), Case(np.ones_like, randc(3)), Case(np.empty_like, randn(0, 2)),
    # full, full_like: differentiable in fill_value (float, array broadcast, list, complex)
    Case(np.full, (2, 3), 1.5), Case(np.full, (2, 3), randn(3)), Case(np.full, 3, [1.0, 2.0, 3.0]),
    Case(np.full, (2, 2), 1.5, np.float32, **_F32_OUT), Case(np.full, 3, randc()),
    Case(np.full, (2, 2), 3, name="full(int)"),
    Case(np.full_like, randn(2, 3), 0.5), Case(np.full_like, randn(2, 3), randn(2, 1)),
    Case(np.full_like, randn(3), 1.5, kwargs={"dtype": np.float32}, **_F32_OUT),
    # diag (both directions; 2-D gives a read-only view), diagflat, tril, triu
    Case(np.diag, randn(3)), Case(np.diag, randn(3), 1), Case(np.diag, randn(2), -2), Case(np.diag, [1.0, 2.0]),
    Case(np.diag, randn(3, 3), name="diag(matrix): a view"), Case(np.diag, randn(3, 4), 1),
    Case(np.diag, randn(4, 3), -1), Case(np.diag, randn(3, 4)[:, ::2], name="diag(strided view)"),
    Case(np.diag, [[1.0, 2.0], [3.0, 4.0]], name="diag(2-D list)"), Case(np.diag, randc(3, 3)),
    Case(np.diag, randn(3, dtype=np.float32)),
    Case(np.diagflat, randn(2, 2)), Case(np.diagflat, randn(3), -1), Case(np.diagflat, [1.0, 2.0], 1),
    Case(np.tril, randn(3, 3)), Case(np.tril, randn(2, 3, 4), -1), Case(np.triu, randn(3, 4), 1),
    Case(np.triu, [[1.0, 2.0], [3.0, 4.0]]), Case(np.tril, randn(3, 3, dtype=np.float32)),
    Case(np.triu, randc(3, 3)),
    # meshgrid
    Case(np.meshgrid, randn(3), randn(4)), Case(np.meshgrid, randn(3), randn(4), kwargs={"indexing": "ij"}),
    Case(np.meshgrid, randn(2), randn(3), randn(4)), Case(np.meshgrid, randn(2), randn(3), kwargs={"sparse": True}),
    Case(np.meshgrid, randn(3)), Case(np.meshgrid, randn(2, 2), [1.0, 2.0, 3.0]),
    Case(np.meshgrid, randn(3), np.arange(2)), Case(np.meshgrid, randn(2, dtype=np.float32), randn(3)),
]
# the same array twice: diag of a matrix and the matrix itself (output fdata aliases the input's)
CASES += [Case(np.diag, _m, name="diag(m) view of m")]
CASES += [Case(np.float64, 1.5), Case(np.float64, np.float64(-0.5)), Case(np.float64, np.array(0.25)),
          Case(np.float64, 3), Case(np.float32, 1.5, **_F32_OUT), Case(np.complex128, 0.5 - 1.5j),
          Case(np.float16, 0.75, steps=(3e-2, 1e-2), rtol=1e-2, atol=1e-2), Case(np.complex64, 0.5, **_F32_OUT),
          Case(np.longdouble, 0.5), Case(np.clongdouble, 0.5 + 0.25j), Case(np.float64, np.float32(0.5)),
          Case(np.float32, randn(2, 3, dtype=np.float32), name="numpy.float32(float32 array) is the array"),
          Case(np.float16, randn(2, 3, dtype=np.float32), steps=(3e-2, 1e-2), rtol=1e-2, atol=1e-2,
               name="numpy.float16(array) makes an array"),
          Case(np.float64, [randn(), 2.0, randn()], name="numpy.float64(list) makes an array"),
          Case(np.complex128, randn(3), name="numpy.complex128(array)")]
