"""Derivatives the user defines or changes, in JAX's shape: ``custom_vjp``, ``custom_jvp``,
``stop_gradient``, ``checkpoint`` and ``linearize`` (``docs/custom-derivatives.md``).

A ``custom_vjp``/``custom_jvp`` function is a callable object; defining its rule registers rules
for that object in every mode's table, so the transforms treat it as a primitive:

* ``custom_vjp``: reverse mode runs ``fwd`` then ``bwd``; second order is the forward transform of
  ``fwd`` (the output tangent) and of ``bwd`` (the cotangents' tangents), as JAX's ``jacfwd(jacrev)``;
  first-order forward mode is refused, as in JAX (a custom reverse rule says nothing of the
  forward one).
* ``custom_jvp``: forward mode runs the jvp rule; reverse mode transposes it by the reverse
  transform of the jvp rule with respect to the tangents (the rule must be linear in them, as
  JAX requires); second order is forward over that reverse rule (the second-order transform of
  the jvp rule).
"""
from __future__ import annotations

import copy
import functools
import inspect
import threading
from typing import Any, Callable, Sequence

import numpy as np

from ..rules.core import CoDual, Dual, register_frule, register_rrule
from ..rules.declare import nondifferentiable
from ..rules.differentiated import custom_jvp_pair, custom_vjp_cotangents, custom_vjp_value
from ..rules.second_order import SecondOrder, _register
from ..rules.util import accumulate, fit_tangent, out_cotangent, output, zero_fdata
from ..tangents import NoFData, NoRData, NoTangent, fdata, increment, join, rdata, zero_rdata, zero_tangent
from ..transform.forward_runtime import call_frule
from ..transform.lifting import lift
from ..transform.runtime import call_rrule
from ..transform.second_order import SecondOrderError, call_rrule2
from .common import user_facing
from .forward import jvp
from .reverse import seed_output


def _nondiff(argnums: Sequence[int] | int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in nums):
        raise TypeError(f"nondiff_argnums must be non-negative ints, got {argnums!r}")
    return tuple(sorted(set(nums)))


def _positional(signature: inspect.Signature | None, name: str, args: tuple, kwargs: dict) -> tuple:
    """The call's arguments as a positional tuple (keywords bound by the function's signature)."""
    if not kwargs:
        return args
    if signature is None:
        raise TypeError(f"{name}: keyword arguments need a function with a signature")
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(f"{name}: keyword-only or **kwargs parameters are not supported by custom rules; "
                        "make them positional")
    return bound.args


def _deliver(arg: CoDual, cotangent: Any) -> Any:
    """Add a full cotangent (the tangent type of the argument's primal) to the argument: in
    place in its fdata, and returned as its rdata."""
    if cotangent is None or cotangent is NoTangent:
        return NoRData
    x = arg.primal
    if isinstance(x, np.ndarray) and x.dtype.kind in "fc":
        cotangent = np.asarray(cotangent)
        if cotangent.shape != x.shape:
            raise ValueError(f"a custom rule returned a cotangent of shape {cotangent.shape} for an argument of "
                             f"shape {x.shape}")
        if arg.fdata is not NoFData:
            arg.fdata += cotangent.real if x.dtype.kind == "f" else cotangent
        return NoRData
    if isinstance(x, (float, np.floating)):
        return float(np.real(cotangent))
    if isinstance(x, (complex, np.complexfloating)):
        return complex(cotangent)
    if isinstance(x, (int, bool, np.integer, np.bool_, str)) or x is None:
        return NoRData
    total = increment(join(arg.fdata, rdata(zero_tangent(x))), cotangent)
    return rdata(total)


class _Custom:
    """What ``custom_vjp`` and ``custom_jvp`` share: the wrapped function and its call."""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] | int) -> None:
        if not callable(fun):
            raise TypeError(f"{type(self).__name__} needs a callable, got {type(fun).__name__}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _nondiff(nondiff_argnums)
        try:
            self._signature = inspect.signature(fun)
        except (TypeError, ValueError):
            self._signature = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fun(*args, **kwargs)  # outside differentiation: the function itself

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {getattr(self.fun, '__qualname__', self.fun)!r}>"

    def _bind(self, args: tuple, kwargs: dict) -> tuple:
        values = _positional(self._signature, repr(self), args, kwargs)
        if self.nondiff_argnums and self.nondiff_argnums[-1] >= len(values):
            raise TypeError(f"{self!r}: nondiff_argnums {self.nondiff_argnums} out of range for {len(values)} arguments")
        return values

    def _check_nondiff(self, values: tuple, has_tangent: Callable[[Any], bool]) -> None:
        for i in self.nondiff_argnums:
            if has_tangent(values[i]):
                raise TypeError(f"{self!r}: argument {i} is in nondiff_argnums but carries a derivative; "
                                "remove it from nondiff_argnums, or pass a constant")


class custom_vjp(_Custom):
    """A function with a reverse-mode rule of the user's (JAX's ``jax.custom_vjp``):

    ```python
    @yb.custom_vjp
    def f(x, y): ...
    def f_fwd(x, y): return f(x, y), residuals
    def f_bwd(residuals, g): return (x_bar, y_bar)
    f.defvjp(f_fwd, f_bwd)
    ```

    ``bwd`` returns one cotangent per argument not in ``nondiff_argnums`` (``None`` for zero); the
    arguments in ``nondiff_argnums`` are passed to ``bwd`` first. Reverse mode and second order
    (``yb.hvp``, ``yb.hessian``: the forward transform of ``fwd`` and ``bwd``) use the rule;
    forward mode (``yb.jvp``) is refused, as in JAX: use ``custom_jvp`` for that.
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] | int = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        """Set the rule: ``fwd(*args) -> (output, residuals)``, ``bwd(*nondiff, residuals, g) -> tuple``."""
        if not callable(fwd) or not callable(bwd):
            raise TypeError("defvjp(fwd, bwd) needs two callables")
        self.fwd, self.bwd = fwd, bwd
        register_rrule(self, self._rrule)
        register_frule(self, self._frule)
        cotangents = functools.partial(custom_vjp_cotangents, fwd, bwd, self.nondiff_argnums)
        value = functools.partial(custom_vjp_value, fwd)
        _register((self,), _inside_rule(self, lift(SecondOrder("vjp", function=self, vjp=cotangents, definition=value))))

    def _rrule(self, *args: CoDual, **kwargs: CoDual) -> tuple[CoDual, Callable]:
        coduals = self._bind(args, kwargs)
        values = tuple(a.primal if isinstance(a, CoDual) else a for a in coduals)
        self._check_nondiff(coduals, lambda a: isinstance(a, CoDual) and a.fdata is not NoFData
                            and isinstance(a.primal, np.ndarray))
        y, residuals = _pair(self.fwd(*values), "fwd", self)
        out = output(y)
        n_call = len(args) + len(kwargs)

        def pullback(dy: Any) -> tuple:
            g = out_cotangent(out, dy)
            given = self.bwd(*(values[i] for i in self.nondiff_argnums), residuals, g)
            rdatas = _spread(given, coduals, self.nondiff_argnums, self)
            return (NoRData, *_call_order(rdatas, len(args), kwargs, self._signature, n_call))

        return out, pullback

    def _frule(self, *args: Dual, **kwargs: Dual) -> Dual:
        if _inside(self):  # fwd and bwd calling the function, in its second order
            return call_frule(Dual(self.fun, NoTangent), *args, **kwargs)
        raise TypeError(f"{self!r} has a custom reverse rule (custom_vjp) and cannot be differentiated in forward "
                        "mode (yb.jvp, jacobian(mode='fwd')); use yb.jacobian(f) in reverse mode, or define the "
                        "function with yb.custom_jvp")


class custom_jvp(_Custom):
    """A function with a forward-mode rule of the user's (JAX's ``jax.custom_jvp``):

    ```python
    @yb.custom_jvp
    def f(x, y): ...
    @f.defjvp
    def f_jvp(primals, tangents):
        x, y = primals; x_dot, y_dot = tangents
        return f(x, y), out_tangent
    ```

    Tangents of arguments without a derivative arrive as zeros (``None`` for non-float
    arguments). Forward mode uses the rule; reverse mode transposes it (the reverse transform of
    the rule with respect to the tangents, so it must be ordinary differentiable code, linear in
    the tangents, as JAX requires). Second order (``yb.hvp``, ``yb.hessian``) is forward mode over
    that reverse rule, for float and array arguments.
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] | int = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp_rule: Callable) -> Callable:
        """Set the rule ``jvp(*nondiff, primals, tangents) -> (output, output_tangent)``; usable as a decorator."""
        if not callable(jvp_rule):
            raise TypeError("defjvp needs a callable")
        self.jvp = jvp_rule
        register_frule(self, self._frule)
        register_rrule(self, self._rrule)
        _register((self,), self._second_order)
        return jvp_rule

    def _split(self, values: tuple) -> tuple[tuple, tuple]:
        fixed = tuple(values[i] for i in self.nondiff_argnums)
        rest = tuple(v for i, v in enumerate(values) if i not in self.nondiff_argnums)
        return fixed, rest

    def _frule(self, *args: Dual, **kwargs: Dual) -> Dual:
        duals = self._bind(args, kwargs)
        self._check_nondiff(duals, lambda d: isinstance(d, Dual) and _nonzero(d.tangent))
        values = tuple(d.primal if isinstance(d, Dual) else d for d in duals)
        tangents = tuple(_dense(d.primal, d.tangent) if isinstance(d, Dual) else _dense(d, NoTangent) for d in duals)
        fixed, primals = self._split(values)
        _, directions = self._split(tangents)
        y, y_dot = _pair(self.jvp(*fixed, primals, directions), "jvp rule", self)
        return Dual(y, _output_tangent(y, y_dot))

    def _rrule(self, *args: CoDual, **kwargs: CoDual) -> tuple[CoDual, Callable]:
        if _inside(self):  # the jvp rule calling the function on the primals, constants while it is transposed
            return _constant_call(self.fun, args, kwargs)
        coduals = self._bind(args, kwargs)
        self._check_nondiff(coduals, lambda a: isinstance(a, CoDual) and isinstance(a.primal, np.ndarray)
                            and a.fdata is not NoFData)
        values = tuple(a.primal if isinstance(a, CoDual) else a for a in coduals)
        fixed, primals = self._split(values)
        zero = tuple(_tangent_codual(v) for v in primals)
        pair, pair_pullback = _run_inside(self, call_rrule, CoDual(custom_jvp_pair, NoFData), CoDual(self.jvp, NoFData),
                                          _constant(fixed), _constant(primals), *zero)
        y = _pair(pair.primal, "jvp rule", self)[0]
        out = output(y)
        n_call = len(args) + len(kwargs)

        def pullback(dy: Any) -> tuple:
            g = out_cotangent(out, dy)
            seed = (zero_tangent(y), g)
            pair_rdata = seed_output(pair, seed)
            transposed = _run_inside(self, pair_pullback, pair_rdata)[4:]
            given = [join(t.fdata, r) if isinstance(t, CoDual) else None for t, r in zip(zero, transposed)]
            rdatas = _spread(given, coduals, self.nondiff_argnums, self)
            return (NoRData, *_call_order(rdatas, len(args), kwargs, self._signature, n_call))

        return out, pullback

    def _second_order(self, f4: tuple, args: tuple, kwargs: dict) -> tuple:
        """Forward over this function's reverse rule: the second-order transform of the jvp rule,
        at tangents 0 whose own tangent is the direction, so that the output tangent's cotangent
        (with its tangent) pulled back to the tangents is ``J^T g`` (with its tangent)."""
        if _inside(self):
            return call_rrule2((self.fun, NoFData, NoTangent, NoFData), *args, **kwargs)
        args4 = self._bind(args, kwargs)
        fixed4, primals4 = self._split(args4)
        for a in primals4:
            if not _is_number_or_array(a[0]):
                raise SecondOrderError(f"yb.hvp/yb.hessian: {self!r} with an argument of type {type(a[0]).__name__}; "
                                       "second order of a custom_jvp function takes floats and arrays")
        zeros4 = [_zero_tangent4(a) for a in primals4]
        constant = _constant4(tuple(a[0] for a in fixed4))
        pair4, pair_pullback = _run_inside(self, call_rrule2, _constant4(custom_jvp_pair), _constant4(self.jvp),
                                           constant, _tuple4([_scratch4(a) for a in primals4]), *zeros4)
        y = pair4[0][0]
        y_dot = pair4[2][1] if isinstance(pair4[2], tuple) else zero_tangent(y)
        out = (y, zero_fdata(y), y_dot, zero_fdata(y))
        n_call = len(args) + len(kwargs)

        def pullback(dy: Any, dy_d: Any) -> tuple:
            g = out_cotangent(CoDual(y, out[1]), dy)
            g_d = out_cotangent(CoDual(y, out[3]), dy_d)
            seed = seed_output(CoDual(pair4[0], pair4[1]), (zero_tangent(y), g))
            seed_d = seed_output(CoDual(pair4[0], pair4[3]), (zero_tangent(y), g_d))
            rs, rsd = _run_inside(self, pair_pullback, seed, seed_d)
            rdatas, rdatas_d, k = [], [], 0
            for i, a in enumerate(args4):
                if i in self.nondiff_argnums:
                    rdatas.append(zero_rdata(a[0]))
                    rdatas_d.append(zero_rdata(a[0]))
                    continue
                z = zeros4[k]
                rdatas.append(accumulate(CoDual(a[0], a[1]), _dense_cotangent(z[0], join(z[1], rs[4 + k]))))
                rdatas_d.append(accumulate(CoDual(a[0], a[3]), _dense_cotangent(z[0], join(z[3], rsd[4 + k]))))
                k += 1
            return ((NoRData, *_call_order(rdatas, len(args), kwargs, self._signature, n_call)),
                    (NoRData, *_call_order(rdatas_d, len(args), kwargs, self._signature, n_call)))

        return out, pullback


#: The custom functions whose rule is being differentiated (per thread): a custom_vjp's ``fwd``
#: (in second order) and a custom_jvp's jvp rule (transposed in reverse mode) usually call the
#: function itself (``return f(x), ...``), which is then differentiated as its undecorated code.
_INSIDE = threading.local()


def _inside(owner: Any) -> bool:
    return id(owner) in getattr(_INSIDE, "ids", ())


def _run_inside(owner: Any, call: Callable, *args: Any) -> Any:
    ids = _INSIDE.__dict__.setdefault("ids", [])
    ids.append(id(owner))
    try:
        return call(*args)
    finally:
        ids.pop()


def _inside_rule(owner: Any, rule: Callable) -> Callable:
    """``rule`` (a second-order rule) and its dual pullback, run inside ``owner``'s rule."""

    def second_order(f4: tuple, args: tuple, kwargs: dict) -> tuple:
        out, pullback = _run_inside(owner, rule, f4, args, kwargs)
        return out, lambda dy, dy_d: _run_inside(owner, pullback, dy, dy_d)

    second_order.second_order_kind = "custom_vjp"  # type: ignore[attr-defined] - third order refuses it
    return second_order


def _constant_call(fun: Callable, args: tuple, kwargs: dict) -> tuple[CoDual, Callable]:
    """``fun`` called on constants: its value, and a pullback of explicit zeros."""
    y = fun(*(a.primal for a in args), **{k: v.primal for k, v in kwargs.items()})
    zeros = (NoRData, *(zero_rdata(a.primal) for a in (*args, *kwargs.values())))
    return output(y), lambda dy: zeros


def _pair(result: Any, what: str, owner: Any) -> tuple:
    if not isinstance(result, tuple) or len(result) != 2:
        raise TypeError(f"{owner!r}: {what} must return a pair (output, {'residuals' if what == 'fwd' else 'tangent'}), "
                        f"got {type(result).__name__}")
    return result


def _spread(given: Any, coduals: tuple, nondiff: tuple, owner: Any) -> list:
    """Deliver the rule's cotangents (one per argument outside ``nondiff``) to the arguments."""
    given = list(given) if isinstance(given, (tuple, list)) else [given]
    n_diff = len(coduals) - len(nondiff)
    if len(given) != n_diff:
        raise TypeError(f"{owner!r}: the reverse rule returned {len(given)} cotangents for {n_diff} differentiable "
                        "arguments (one per argument not in nondiff_argnums, None for zero)")
    rdatas, k = [], 0
    for i, a in enumerate(coduals):
        if i in nondiff:  # declared without derivative: an explicit zero
            rdatas.append(zero_rdata(a.primal) if isinstance(a, CoDual) else NoRData)
            continue
        c = given[k]
        k += 1
        rdatas.append(_deliver(a, c) if isinstance(a, CoDual) else NoRData)
    return rdatas


def _call_order(rdatas: list, n_args: int, kwargs: dict, signature: inspect.Signature | None, n_call: int) -> list:
    """Rdata in the call's order: the positional arguments, then each keyword as passed."""
    if not kwargs:
        return rdatas[:n_call]
    names = list(signature.parameters)
    return rdatas[:n_args] + [rdatas[names.index(k)] for k in kwargs]


def _nonzero(t: Any) -> bool:
    if t is NoTangent or t is None:
        return False
    if isinstance(t, np.ndarray):
        return bool(np.any(t))
    if isinstance(t, (float, complex, int, np.number)):
        return t != 0
    return True


def _dense(x: Any, t: Any) -> Any:
    """A tangent as the jvp rule receives it: zeros for a float argument without one."""
    if t is not NoTangent:
        return t
    if isinstance(x, np.ndarray):
        return np.zeros_like(x) if x.dtype.kind in "fc" else None
    if isinstance(x, (float, complex, np.floating, np.complexfloating)):
        return type(x)(0)
    if isinstance(x, (int, bool, np.integer, np.bool_, str)) or x is None:
        return None
    return zero_tangent(x)


def _output_tangent(y: Any, y_dot: Any) -> Any:
    if y_dot is None:
        return zero_tangent(y)
    if isinstance(y, (np.ndarray, float, complex, np.number)):
        return fit_tangent(y_dot, y)
    return y_dot


def _is_number_or_array(x: Any) -> bool:
    return isinstance(x, (np.ndarray, float, complex, int, np.number))


def _constant4(value: Any) -> tuple:
    return value, NoFData, NoTangent, NoFData


def _tuple4(items: Sequence[tuple]) -> tuple:
    """The 4-tuple of a tuple of 4-tuples (a part with no fdata or tangent collapses, as in the
    tangent model)."""
    def part(k: int, empty: Any) -> Any:
        values = tuple(a[k] for a in items)
        return empty if all(v is empty for v in values) else values

    return tuple(a[0] for a in items), part(1, NoFData), part(2, NoTangent), part(3, NoFData)


def _scratch4(a: tuple) -> tuple:
    """An argument with fresh fdata: what the transposition gathers there is not a cotangent of
    the argument (the argument's own comes back through the zero tangents)."""
    return a[0], zero_fdata(a[0]), a[2], zero_fdata(a[0])


def _zero_tangent4(a: tuple) -> tuple:
    """A zero tangent argument whose own tangent is the argument's direction ``a[2]``."""
    x = a[0]
    if isinstance(x, np.ndarray) and x.dtype.kind in "fc":
        direction = np.zeros_like(x) if a[2] is NoTangent else a[2]
        return np.zeros_like(x), np.zeros_like(x), direction, np.zeros_like(x)
    if isinstance(x, (float, complex, np.floating, np.complexfloating)):
        return type(x)(0), NoFData, (type(x)(0) if a[2] is NoTangent else a[2]), NoFData
    return _constant4(None)


def _dense_cotangent(zero: Any, c: Any) -> Any:
    return 0.0 * zero if c is NoTangent or c is None else c


def _constant(value: Any) -> CoDual:
    return CoDual(value, NoFData)


def _tangent_codual(x: Any) -> Any:
    """A zero tangent argument for the transposition: a codual whose fdata gathers ``J^T g``."""
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "fc":
            return _constant(None)
        return CoDual(np.zeros_like(x), np.zeros_like(x))
    if isinstance(x, (float, complex, np.floating, np.complexfloating)):
        return CoDual(type(x)(0), NoFData)
    if isinstance(x, (int, bool, np.integer, np.bool_, str)) or x is None:
        return _constant(None)
    t = zero_tangent(x)
    return CoDual(t, fdata(zero_tangent(t)))


# --------------------------------------------------------------------------------------------
# stop_gradient, checkpoint, linearize
# --------------------------------------------------------------------------------------------


def stop_gradient(x: Any) -> Any:
    """``x`` as a constant: its value, with zero derivative in every mode (``jax.lax.stop_gradient``).
    Arrays and mutable containers come back as copies, so writing into the result never changes
    ``x``."""
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, (float, complex, int, bool, np.number, np.bool_, str)) or x is None:
        return x
    return copy.deepcopy(x)


nondifferentiable(stop_gradient)


class checkpoint:
    """``f`` whose reverse rule keeps no tape (``jax.checkpoint``): the forward pass runs ``f`` as a
    plain call, keeping only its arguments, and the pullback runs ``f``'s forward pass again,
    taped, then its pullback. Memory falls from every intermediate of ``f`` to its arguments, for
    the price of running ``f`` twice: checkpoint the body of a long loop (``docs/custom-derivatives.md``).

    ``f`` must not mutate its arguments (checked: a ``ValueError``) and must compute the same thing
    when run again: NumPy's global random state is restored for the second run; a
    ``np.random.Generator`` argument is an argument ``f`` mutates, and refused. Forward mode and second
    order run ``f`` itself (no tape to save there).
    """

    def __init__(self, fun: Callable) -> None:
        if not callable(fun):
            raise TypeError(f"checkpoint needs a callable, got {type(fun).__name__}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        register_rrule(self, self._rrule)
        register_frule(self, lambda *args, **kwargs: call_frule(Dual(self.fun, NoTangent), *args, **kwargs))
        _register((self,), lambda f4, args, kwargs: call_rrule2(_constant4(self.fun), *args, **kwargs))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fun(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<checkpoint {getattr(self.fun, '__qualname__', self.fun)!r}>"

    def _rrule(self, *args: CoDual, **kwargs: CoDual) -> tuple[CoDual, Callable]:
        values = [a.primal if isinstance(a, CoDual) else a for a in args]
        keywords = {k: v.primal if isinstance(v, CoDual) else v for k, v in kwargs.items()}
        before = copy.deepcopy((values, keywords))
        random_state = np.random.get_state()
        y = self.fun(*values, **keywords)
        _check_unchanged(self, before, (values, keywords))
        out = output(y)

        def pullback(dy: Any) -> tuple:
            cotangent = join(out.fdata, dy)
            current = np.random.get_state()
            np.random.set_state(random_state)
            try:
                again, taped_pullback = call_rrule(CoDual(self.fun, NoFData), *args, **kwargs)
            finally:
                np.random.set_state(current)
            return (NoRData, *taped_pullback(seed_output(again, cotangent))[1:])

        return out, pullback


def _check_unchanged(owner: Any, before: Any, after: Any) -> None:
    if not _equal(before, after):
        _restore(after, before)
        raise ValueError(f"{owner!r} mutated its arguments; a checkpointed function runs twice and must leave "
                         "its arguments as they were: copy what it writes into (x = x.copy())")


def _restore(current: Any, saved: Any) -> None:
    """Put the saved values back into the caller's arrays, lists, dicts and objects (in place)."""
    if isinstance(current, np.ndarray) and isinstance(saved, np.ndarray) and current.shape == saved.shape:
        np.copyto(current, saved)
    elif isinstance(current, tuple) and isinstance(saved, tuple):
        for c, k in zip(current, saved):
            _restore(c, k)
    elif isinstance(current, list) and isinstance(saved, list):
        if len(current) == len(saved):
            for c, k in zip(current, saved):
                _restore(c, k)
        if not _equal(current, saved):
            current[:] = saved
    elif isinstance(current, dict) and isinstance(saved, dict):
        for k in current.keys() & saved.keys():
            _restore(current[k], saved[k])
        if not _equal(current, saved):
            current.clear()
            current.update(saved)
    elif hasattr(current, "__dict__") and hasattr(saved, "__dict__") and not isinstance(current, type):
        _restore(vars(current), vars(saved))


def _equal(a: Any, b: Any) -> bool:
    """Whether two snapshots of arguments hold the same values (arrays compared exactly, NaN
    equal to NaN)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if hasattr(a, "__dict__") and not isinstance(a, type):
        return _equal(vars(a), vars(b))
    try:
        return bool(a == b) or a != a and b != b
    except Exception:  # noqa: BLE001 - incomparable values: treat as changed only if not identical
        return a is b


@user_facing
def linearize(f: Callable, *primals: Any) -> tuple[Any, Callable]:
    """``(f(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is the JVP of ``f`` at ``primals``
    (``jax.linearize``). Each ``f_jvp`` call runs forward mode at the saved primals (copied, so
    later changes to the caller's arrays do not move the point)."""
    if not callable(f):
        raise TypeError(f"linearize needs a callable, got {type(f).__name__}")
    point = copy.deepcopy(primals)
    value = f(*copy.deepcopy(point))

    def f_jvp(*tangents: Any) -> Any:
        if len(tangents) != len(point):
            raise TypeError(f"the linearized function takes {len(point)} tangents (one per primal), got {len(tangents)}")
        return jvp(f, copy.deepcopy(point), tangents)[1]

    return value, f_jvp
