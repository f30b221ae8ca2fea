"""Random draws: ``np.random.Generator`` methods, legacy ``np.random.RandomState`` methods and
the legacy module functions (``np.random.normal``, ``rand``, ``seed``, ... which are methods of
NumPy's global ``RandomState``).

Generator state. The forward pass draws exactly once, as the primal call does; pullbacks never
draw from the caller's generator. Like every mutation (DESIGN.md §2), the draw is undone by the
reverse pass: a pullback restores the generator's state to what it was before the call, so after a
whole gradient call the caller's generators (and the global legacy state) are as they were.
Forward mode leaves the generator advanced exactly as the primal call does.

Derivatives with respect to distribution parameters:

* pathwise, exact: ``normal``/``laplace``/``logistic``/``gumbel`` (``loc + scale * X``:
  1 in ``loc``, ``X`` in ``scale``), ``uniform`` (``low + (high - low) U``: ``1 - U``, ``U``),
  ``exponential``/``rayleigh`` (``scale * X``), ``gamma`` in ``scale`` (``scale * G``),
  ``lognormal`` (``exp(mean + sigma Z)``: ``out``, ``out * Z``), ``multivariate_normal`` in
  ``mean`` (1), ``weibull``/``power`` (``N^(1/a)``: ``-out log(out) / a``) and ``pareto``
  (``expm1(E / a)``: ``-(1 + out) log1p(out) / a``). The standard variate is recovered from the
  output, e.g. ``X = (out - loc) / scale``; where the divisor is 0 it is replayed on a copy of the
  generator in its pre-call state.
* gamma draws at their fixed quantile, ``dz/da = -(dF(z; a)/da) / pdf(z; a)`` (``random_shapes.py``):
  ``gamma``/``standard_gamma``, ``chisquare``, and, from the gamma draws NumPy makes them of,
  ``dirichlet``, ``beta``, ``standard_t``, ``f`` (not ``dirichlet``'s stick-breaking nor ``beta``'s
  Johnk method); ``triangular`` exactly (NumPy's inverse CDF of one uniform draw, held).
* selections, exact: ``choice(a, ...)``, ``permutation(x)`` and ``shuffle(x)`` (in place) move
  elements of their array argument; the cotangent is moved back along the same indices, which
  are recovered by replaying the draw on ``np.arange(n)`` with a copy of the pre-call generator
  (and checked against the primal result).
* not differentiated (docs/semantics.md, "Random draws"): the other shape parameters --
  ``noncentral_*``, ``vonmises``, ``wald``,
  ``multivariate_normal`` in ``cov``. Reverse mode gives them a NaN cotangent wherever the
  draw's cotangent is nonzero (it cannot tell a differentiated float from a constant: a constant
  discards it, a differentiated parameter gets a NaN gradient, never a silent zero); forward mode
  and second order, which see tangents, raise naming the parameter when its tangent is nonzero. ``choice`` in ``p`` has zero derivative (the indices drawn are piecewise constant
  in ``p``). Discrete draws (``integers``, ``poisson``, ``binomial``, ...) have integer results:
  no derivative.

``Generator.permuted`` (an independent permutation per slice) has no rule: calling it under
differentiation raises ``MissingRuleError`` rather than returning a wrong zero derivative.
"""
from __future__ import annotations

import copy
import inspect
from typing import Any, Callable

import numpy as np

from ..tangents import NoFData, NoRData, NoTangent, zero_tangent
from .cases import Case, randn, randpos
from .core import CoDual, Dual, RuleArgumentError, register_frule, register_rrule, primal
from .declare import ZERO_DERIVATIVE
from .numpy_creation import deliver, deliver_broadcast, dense
from . import random_shapes as shapes
from ._ufunc_calls import Params
from .core import frule as registered_frule, rrule
from .second_order import _error as second_order_error
from .second_order import _register as _so_register, defined_by, zero
from .util import fit_tangent, out_cotangent, output

Generator = np.random.Generator
RandomState = np.random.RandomState
_GLOBAL = np.random.mtrand._rand  # the legacy module functions are its bound methods

# np.random.default_rng: declared in nondifferentiable.py


# --------------------------------------------------------------------------------------------
# Generator state
# --------------------------------------------------------------------------------------------


def _state(gen: Any) -> Any:
    if isinstance(gen, RandomState):
        return gen.get_state(legacy=False)
    if isinstance(gen, Generator):
        return gen.bit_generator.state
    raise RuleArgumentError(f"expected a numpy Generator or RandomState, got {type(gen).__qualname__}")


def _restore(gen: Any, state: Any) -> None:
    if isinstance(gen, RandomState):
        gen.set_state(state)
    else:
        gen.bit_generator.state = state


def _replica(gen: Any, state: Any) -> Any:
    """A separate generator of the same kind, in ``state`` (replays never touch ``gen``)."""
    twin = copy.deepcopy(gen)
    _restore(twin, state)
    return twin


def _register(fn: Callable, rrule: Callable, frule: Callable, owner_type: type) -> None:
    """Register rules (``self`` first) for the unbound method ``fn``, for ``(type, name)``, and,
    for legacy methods, for the module function bound to the global RandomState."""
    for target in (fn, (owner_type, fn.__name__)):
        register_rrule(target, rrule)
        register_frule(target, frule)
    module_fn = getattr(np.random, fn.__name__, None) if owner_type is RandomState else None
    if module_fn is None or getattr(module_fn, "__self__", None) is not _GLOBAL:
        return

    def module_rrule(*args: Any, **kwargs: Any) -> tuple:
        out, pullback = rrule(CoDual(_GLOBAL), *args, **kwargs)
        return out, lambda dy: (NoRData,) + tuple(pullback(dy)[2:])

    def module_frule(*args: Any, **kwargs: Any) -> Dual:
        return frule(Dual(_GLOBAL, NoTangent), *args, **kwargs)

    signature = getattr(rrule, "__signature__", None)
    if signature is not None:  # bind keywords like the module function (no self)
        params = list(signature.parameters.values())[1:]
        module_rrule.__signature__ = module_frule.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    register_rrule(module_fn, module_rrule)
    register_frule(module_fn, module_frule)


# --------------------------------------------------------------------------------------------
# Shape parameters: not differentiated, refused when they move (forward mode, second order)
# --------------------------------------------------------------------------------------------

_NOT_PARAMETERS = ("self", "size", "dtype", "out", "method", "check_valid", "tol")


def moving_parameter(names: list, values: list, tangents: list, kw_values: dict, kw_tangents: dict,
                     only: tuple | None = None) -> str | None:
    """The name of the first distribution parameter (all of them, or those in ``only``) whose
    tangent is nonzero, or None. ``names`` are the draw's parameters, ``self`` first."""
    pairs = [(names[k] if k < len(names) else f"argument {k}", v, t) for k, (v, t) in enumerate(zip(values, tangents))]
    pairs += [(k, kw_values[k], kw_tangents[k]) for k in kw_values]
    for name, value, t in pairs:
        if name in _NOT_PARAMETERS or only is not None and name not in only or t is NoTangent:
            continue
        try:
            moving = bool(np.any(dense(Dual(value, t)) != 0))
        except (TypeError, ValueError):  # not numeric data: nothing to differentiate
            continue
        if moving:
            return name
    return None


def shape_parameter_message(fn: Callable, name: str) -> str:
    return (f"numpy.random.{fn.__qualname__}: yuebing does not differentiate random draws with respect to their "
            f"shape parameters, and {name}= has a nonzero tangent here (its derivative would be dropped). Make "
            f"{name}= a constant: compute it outside the function from values that are not differentiated and "
            "pass it in; see docs/semantics.md, \"Random draws\"")


def _names(sig: inspect.Signature | None) -> list:
    return list(sig.parameters) if sig is not None else []


def _is_float_result(y: Any) -> bool:
    return isinstance(y, (float, np.floating)) or isinstance(y, np.ndarray) and y.dtype.kind in "fc"


def _refuse_moving_forward(fn: Callable, names: list, args: tuple, kwargs: dict, only: tuple | None = None) -> None:
    moving = moving_parameter(names, [primal(a) for a in args], [_tangent_of(a) for a in args],
                              {k: primal(v) for k, v in kwargs.items()}, {k: _tangent_of(v) for k, v in kwargs.items()},
                              only)
    if moving is not None:
        raise RuleArgumentError(shape_parameter_message(fn, moving))


def _undifferentiated_parameters(rdatas: list, names: list, args: tuple, kwargs: dict, g: Any,
                                 only: tuple | None = None) -> None:
    """The cotangent of the float parameters a draw is not differentiated in (shape parameters):
    NaN in every element when the draw's cotangent is nonzero anywhere. Reverse mode cannot tell a differentiated float
    from a constant: a constant's NaN is discarded, while a differentiated parameter makes the
    gradient NaN -- never a silent zero (forward mode and second order raise instead)."""
    if not np.any(np.asarray(g) != 0):
        return
    slots = [(i + 1, names[i] if i < len(names) else None, a) for i, a in enumerate(args)]
    slots += [(len(args) + 1 + k, name, v) for k, (name, v) in enumerate(kwargs.items())]
    for slot, name, a in slots:
        if slot == 1 or name in ("size", "out", "dtype", "method", "axis") or (only is not None and name not in only):
            continue
        if isinstance(a, CoDual) and _is_float_result(a.primal):  # every element: draws mix them (dirichlet)
            rdatas[slot] = deliver_broadcast(a, np.full(np.shape(a.primal), np.nan))


def _tangent_of(a: Any) -> Any:
    return a.tangent if isinstance(a, Dual) else NoTangent


def _refuse_moving_second_order(fn: Callable, names: list, args: tuple, kwargs: dict, only: tuple | None = None) -> None:
    moving = moving_parameter(names, [a[0] for a in args], [a[2] for a in args],
                              {k: v[0] for k, v in kwargs.items()}, {k: v[2] for k, v in kwargs.items()}, only)
    if moving is not None:
        raise second_order_error("yb.hvp/yb.hessian: " + shape_parameter_message(fn, moving))


# --------------------------------------------------------------------------------------------
# Zero derivative (also handles out=, e.g. Generator.random(out=a))
# --------------------------------------------------------------------------------------------


def _out_argument(sig: inspect.Signature | None, args: tuple, kwargs: dict) -> Any:
    if "out" in kwargs:
        return kwargs["out"]
    if sig is not None and "out" in sig.parameters:
        index = list(sig.parameters).index("out")
        if len(args) > index:
            return args[index]
    return None


def _zero_rules(fn: Callable, owner_type: type) -> None:
    _register(fn, *_zero_rule_pair(fn), owner_type)


def _zero_rule_pair(fn: Callable) -> tuple:
    """``(rrule, frule)`` of a draw with zero derivative (its parameters refused when they move)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None

    def rrule(*args: Any, **kwargs: Any) -> tuple:
        gen = primal(args[0])
        state = _state(gen)
        out = _out_argument(sig, args, kwargs)
        into = isinstance(out, CoDual) and isinstance(out.primal, np.ndarray)
        saved = out.primal.copy() if into else None
        y = fn(*(primal(a) for a in args), **{k: primal(v) for k, v in kwargs.items()})
        result = CoDual(out.primal, out.fdata) if into else output(y)

        def pullback(dy: Any) -> tuple:
            rdatas = [NoRData] * (len(args) + len(kwargs) + 1)
            if _is_float_result(y):  # read before out='s cotangent is zeroed below
                _undifferentiated_parameters(rdatas, _names(sig), args, kwargs, out_cotangent(result, dy))
            if into:  # the old contents of out= were overwritten: cotangent 0
                if isinstance(out.fdata, np.ndarray):
                    out.fdata[...] = 0
                out.primal[...] = saved
            _restore(gen, state)
            return tuple(rdatas)

        return result, pullback

    def frule(*args: Any, **kwargs: Any) -> Dual:
        out = _out_argument(sig, args, kwargs)
        y = fn(*(primal(a) for a in args), **{k: primal(v) for k, v in kwargs.items()})
        if _is_float_result(y):  # an integer draw has no derivative to drop
            _refuse_moving_forward(fn, _names(sig), args, kwargs)
        if isinstance(out, Dual) and isinstance(out.tangent, np.ndarray):
            out.tangent[...] = 0
            return Dual(out.primal, out.tangent)
        return Dual(y, zero_tangent(y))

    return rrule, frule


_ZERO_GENERATOR = (
    "random", "standard_normal", "standard_exponential", "integers", "bytes",
    "binomial", "geometric", "hypergeometric", "logseries",
    "multinomial", "multivariate_hypergeometric", "negative_binomial", "noncentral_chisquare",
    "noncentral_f", "poisson", "standard_cauchy",
    "vonmises", "wald", "zipf",
)
_ZERO_LEGACY = (
    "rand", "randn", "random", "random_sample", "randint", "random_integers", "tomaxint",
    "standard_normal", "standard_exponential", "bytes", "binomial", "geometric", "hypergeometric", "logseries", "multinomial",
    "negative_binomial", "noncentral_chisquare", "noncentral_f", "poisson",
    "standard_cauchy", "vonmises", "wald", "zipf",
    "get_state", "seed", "set_state",
)
for _name in _ZERO_GENERATOR:
    _zero_rules(getattr(Generator, _name), Generator)
for _name in _ZERO_LEGACY:
    _zero_rules(getattr(RandomState, _name), RandomState)


def _global_rules(fn: Callable, generator: Callable[[tuple], Any] = lambda args: _GLOBAL) -> None:
    """Module functions that use the global RandomState without being its methods (``seed``,
    ``ranf``, ``sample``), and draws made only for their noise (``generator(args)`` the one they
    advance): zero derivative, the generator's state restored by the pullback."""

    def rrule(*args: Any, **kwargs: Any) -> tuple:
        gen = generator(args)
        state = _state(gen)
        result = output(fn(*(primal(a) for a in args), **{k: primal(v) for k, v in kwargs.items()}))

        def pullback(dy: Any) -> tuple:
            _restore(gen, state)
            return (NoRData,) * (len(args) + len(kwargs) + 1)

        return result, pullback

    def frule(*args: Any, **kwargs: Any) -> Dual:
        y = fn(*(primal(a) for a in args), **{k: primal(v) for k, v in kwargs.items()})
        return Dual(y, zero_tangent(y))

    register_rrule(fn, rrule)
    register_frule(fn, frule)


for _fn in (np.random.seed, np.random.ranf, np.random.sample):
    _global_rules(_fn)
_NOISE = (shapes.standard_gamma_noise, shapes.element_draws, shapes.uniform_noise)  # the definitions' draws
for _noise in _NOISE:
    _global_rules(_noise, lambda args: primal(args[0]))
    ZERO_DERIVATIVE.add(_noise)


# --------------------------------------------------------------------------------------------
# Pathwise derivatives in the parameters
# --------------------------------------------------------------------------------------------


def _standard(num: Any, den: Any, replay: Callable[[], Any]) -> Any:
    """``num / den``, replayed from the pre-call state where ``den == 0``."""
    den = np.asarray(den)
    zero = den == 0
    x = num / np.where(zero, 1, den)
    if np.any(zero):
        x = np.where(zero, replay(), x)
    return x


def _loc_scale(loc: str, scale: str) -> Callable:
    def partials(p: dict, y: Any, replay: Callable) -> dict:
        x = _standard(y - p[loc], p[scale], lambda: replay(**{loc: 0.0, scale: 1.0}))
        return {loc: 1.0, scale: x}

    return partials


def _scale_only(p: dict, y: Any, replay: Callable) -> dict:
    return {"scale": _standard(y, p["scale"], lambda: replay(scale=1.0))}


def _uniform(p: dict, y: Any, replay: Callable) -> dict:
    u = _standard(y - p["low"], np.subtract(p["high"], p["low"]), lambda: replay(low=0.0, high=1.0))
    return {"low": 1.0 - u, "high": u}


def _lognormal(p: dict, y: Any, replay: Callable) -> dict:
    z = _standard(np.log(y) - p["mean"], p["sigma"], lambda: np.log(replay(mean=0.0, sigma=1.0)))
    return {"mean": y, "sigma": y * z}


def _mean_only(p: dict, y: Any, replay: Callable) -> dict:
    return {"mean": 1.0}


def _root_of_noise(p: dict, y: Any, replay: Callable) -> dict:
    """``weibull``/``power``: ``y = N^(1/a)`` for noise ``N`` (an exponential draw for weibull, a
    uniform one for power): ``dy/da = -y log(y) / a`` (0 where ``y = 0``)."""
    y = np.asarray(y, dtype=float)
    log_y = np.log(np.where(y > 0, y, 1.0))
    return {"a": -y * log_y / np.asarray(p["a"])}


def _pareto(p: dict, y: Any, replay: Callable) -> dict:
    """``y = expm1(E / a)`` for an exponential draw ``E``: ``dy/da = -(1 + y) log1p(y) / a``."""
    y = np.asarray(y, dtype=float)
    return {"a": -(1.0 + y) * np.log1p(y) / np.asarray(p["a"])}


#: parameters of pathwise draws that are not differentiated (shape parameters)
_UNDIFFERENTIATED = {"multivariate_normal": ("cov",)}

_PATHWISE = {
    "normal": _loc_scale("loc", "scale"), "laplace": _loc_scale("loc", "scale"),
    "logistic": _loc_scale("loc", "scale"), "gumbel": _loc_scale("loc", "scale"),
    "exponential": _scale_only, "rayleigh": _scale_only, "uniform": _uniform,
    # gamma draws in their shape: at the draw's fixed quantile (random_shapes.py)
    "gamma": shapes.gamma_partials(_standard), "standard_gamma": shapes.standard_gamma_partials,
    "chisquare": shapes.chisquare_partials, "beta": shapes.beta_partials,
    "standard_t": shapes.standard_t_partials, "f": shapes.f_partials, "triangular": shapes.triangular_partials,
    "lognormal": _lognormal, "multivariate_normal": _mean_only,
    "weibull": _root_of_noise, "power": _root_of_noise, "pareto": _pareto,
}


def _replayer(fn: Callable, gen: Any, state: Any, values: dict, y: Any) -> Callable:
    """``replay(**parameters)``: the draw ``y`` made again from the pre-call state with some
    parameters replaced; ``replay.generator()``: a copy of the generator in that state."""
    def replay(**standard: Any) -> Any:
        keep = {k: v for k, v in values.items() if k not in ("self", "size") and k not in standard}
        return getattr(_replica(gen, state), fn.__name__)(**standard, **keep, size=np.shape(y))

    replay.generator = lambda: _replica(gen, state)  # type: ignore[attr-defined]
    return replay


def _pathwise_rules(fn: Callable, partials_of: Callable, owner_type: type) -> None:
    params = Params.of(fn)
    names = list(params.signature.parameters)

    def draw(args: tuple) -> tuple:
        values = dict(zip(names, (primal(a) for a in params.fill(args))))
        return values, params.call(fn, args)

    @params
    def rrule(*args: Any) -> tuple:
        gen = primal(args[0])
        state = _state(gen)
        values, y = draw(args)
        result = output(y)

        replay = _replayer(fn, gen, state, values, y)

        def pullback(dy: Any) -> tuple:
            g = out_cotangent(result, dy)
            partials = partials_of(values, y, replay)
            rdatas = [NoRData] * (len(args) + 1)
            for i, name in enumerate(names[:len(args)]):
                if name in partials:
                    rdatas[i + 1] = deliver_broadcast(args[i], g * partials[name])
            if fn.__name__ in _UNDIFFERENTIATED:
                _undifferentiated_parameters(rdatas, names, args, {}, g, _UNDIFFERENTIATED[fn.__name__])
            _restore(gen, state)
            return tuple(rdatas)

        return result, pullback

    @params
    def frule(*args: Any) -> Dual:
        if fn.__name__ in _UNDIFFERENTIATED:
            _refuse_moving_forward(fn, names, args, {}, _UNDIFFERENTIATED[fn.__name__])
        gen = primal(args[0])
        state = _state(gen)
        values, y = draw(args)

        replay = _replayer(fn, gen, state, values, y)

        dy: Any = 0.0
        partials = partials_of(values, y, replay)
        for i, name in enumerate(names[:len(args)]):
            if name in partials:
                dy = dy + partials[name] * dense(args[i])
        return Dual(y, fit_tangent(dy, y))

    if fn.__name__ == "beta":  # a and b both at most 1 somewhere: Johnk's method, not differentiated
        rrule, frule = refused_when(lambda args: not shapes.beta_by_gammas(primal(args[1]), primal(args[2])),
                                    params, (rrule, frule), _zero_rule_pair(fn))
    if "out" in names:  # standard_gamma(out=a): drawn into an array, not differentiated
        index = names.index("out")
        rrule, frule = refused_when(lambda args: len(args) > index and primal(args[index]) is not None,
                                    params, (rrule, frule), _zero_rule_pair(fn))
    _register(fn, rrule, frule, owner_type)


def refused_when(condition: Callable[[tuple], bool], params: Params, rules: tuple, refused: tuple) -> tuple:
    """Rules that run ``refused`` (a zero-derivative pair) for calls whose arguments meet
    ``condition``, else ``rules``."""
    def pick(args: tuple) -> tuple:
        return refused if condition(args) else rules

    @params
    def rrule(*args: Any) -> tuple:
        return pick(args)[0](*args)

    @params
    def frule(*args: Any) -> Dual:
        return pick(args)[1](*args)

    return rrule, frule


for _owner in (Generator, RandomState):
    for _name, _partials in _PATHWISE.items():
        _pathwise_rules(getattr(_owner, _name), _partials, _owner)


# --------------------------------------------------------------------------------------------
# Selections: choice, permutation, shuffle (the derivative moves elements, it is not zero)
# --------------------------------------------------------------------------------------------


def _along(axis: int, index: Any) -> tuple:
    return (slice(None),) * axis + (index,)


_check_reproduced = shapes.check_reproduced


def _same(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


def _selection_rules(fn: Callable, owner_type: type, indices: Callable) -> None:
    """``choice``/``permutation``: ``y = asarray(a).take(idx, axis)``, with ``idx`` from
    ``indices(replica, n, values)``; an integer ``a`` draws indices (no derivative)."""
    params = Params.of(fn)
    names = list(params.signature.parameters)
    first = names[1]  # "a" or "x"

    def prepare(args: tuple) -> tuple:
        values = dict(zip(names, (primal(a) for a in params.fill(args))))
        state = _state(values["self"])
        y = params.call(fn, args)
        source = values[first]
        if isinstance(source, (int, np.integer)) or np.ndim(source) == 0 and not isinstance(source, np.ndarray):
            return y, None, None, values
        a = np.asarray(source)
        axis = int(values.get("axis", 0)) % max(a.ndim, 1)
        idx = indices(_replica(values["self"], state), a.shape[axis], values)
        _check_reproduced(fn.__qualname__, _same(y, a.take(idx, axis)))
        return y, idx, axis, values

    @params
    def rrule(*args: Any) -> tuple:
        gen = primal(args[0])
        state = _state(gen)
        y, idx, axis, values = prepare(args)
        result = output(y)

        def pullback(dy: Any) -> tuple:
            rdatas = [NoRData] * (len(args) + 1)
            if idx is not None and np.asarray(y).dtype.kind in "fc":
                g = np.asarray(out_cotangent(result, dy))
                a = np.asarray(values[first])
                ga = np.zeros(a.shape, dtype=np.result_type(g, float))
                k = np.ndim(idx)
                g_moved = np.moveaxis(g, list(range(axis, axis + k)), list(range(k)))
                np.add.at(np.moveaxis(ga, axis, 0), idx, g_moved)
                rdatas[2] = deliver(args[1], ga)
            _restore(gen, state)
            return tuple(rdatas)

        return result, pullback

    @params
    def frule(*args: Any) -> Dual:
        y, idx, axis, values = prepare(args)
        if idx is None:
            return Dual(y, zero_tangent(y))
        return Dual(y, fit_tangent(np.take(dense(args[1]), idx, axis), y))

    _register(fn, rrule, frule, owner_type)


def _choice_indices(replica: Any, n: int, values: dict) -> Any:
    options = {k: values[k] for k in ("size", "replace", "p", "shuffle") if k in values}
    return replica.choice(n, **options)


def _permutation_indices(replica: Any, n: int, values: dict) -> Any:
    return replica.permutation(n)


for _owner in (Generator, RandomState):
    _selection_rules(_owner.choice, _owner, _choice_indices)
    _selection_rules(_owner.permutation, _owner, _permutation_indices)


def _shuffle_rules(fn: Callable, owner_type: type) -> None:
    """``shuffle(x)`` permutes ``x`` in place: ``x_after = x_before.take(idx, axis)``."""
    params = Params.of(fn)
    names = list(params.signature.parameters)

    def run(args: tuple) -> tuple:
        values = dict(zip(names, (primal(a) for a in params.fill(args))))
        gen, x = values["self"], values["x"]
        state = _state(gen)
        axis = int(values.get("axis", 0))
        if isinstance(x, np.ndarray):
            axis %= max(x.ndim, 1)
            before: Any = x.copy()
        elif isinstance(x, list) and axis == 0:
            before = list(x)
        else:
            raise RuleArgumentError(f"{fn.__qualname__}: yuebing differentiates shuffling an ndarray "
                                    "or a list (axis 0)")
        params.call(fn, args)
        idx = np.arange(len(before) if isinstance(before, list) else x.shape[axis])
        _replica(gen, state).shuffle(idx)
        if isinstance(x, list):
            _check_reproduced(fn.__qualname__, all(x[j] is before[i] for j, i in enumerate(idx)))
        else:
            _check_reproduced(fn.__qualname__, _same(x, before.take(idx, axis)))
        return gen, state, x, before, idx, axis

    @params
    def rrule(*args: Any) -> tuple:
        gen, state, x, before, idx, axis = run(args)
        fd = args[1].fdata
        if isinstance(x, list) and isinstance(fd, list):  # element tangents move with the elements
            fd[:] = [fd[i] for i in idx]

        def pullback(dy: Any) -> tuple:
            if isinstance(x, list):
                x[:] = before
                if isinstance(fd, list):
                    pre = list(fd)
                    for j, i in enumerate(idx):
                        pre[i] = fd[j]
                    fd[:] = pre
            else:
                x[...] = before
                if isinstance(fd, np.ndarray):
                    post = fd.copy()
                    fd[_along(axis, idx)] = post
            _restore(gen, state)
            return (NoRData,) * (len(args) + 1)

        return output(None), pullback

    @params
    def frule(*args: Any) -> Dual:
        gen, state, x, before, idx, axis = run(args)
        t = args[1].tangent
        if isinstance(x, list) and isinstance(t, list):
            t[:] = [t[i] for i in idx]
        elif isinstance(t, np.ndarray):
            t[...] = t.take(idx, axis)
        return Dual(None, NoTangent)

    _register(fn, rrule, frule, owner_type)


for _owner in (Generator, RandomState):
    _shuffle_rules(_owner.shuffle, _owner)


# --------------------------------------------------------------------------------------------
# Second order: draws with zero derivative keep it (the first-order rule runs once, and its
# pullback restores the generator). Pathwise draws linear in their parameters given the noise
# (``loc + scale * z``, ``low + (high - low) * u``) replay it: their tangent and cotangent
# tangents must use the noise of the one primal draw; the others (``lognormal``, ``weibull``, the
# gamma draws...) are their definitions in ``random_shapes.py``; ``choice`` and ``permutation`` are linear given their indices, replayed the
# same way; ``shuffle`` (in place) permutes the array and its tangent from the same state.
# --------------------------------------------------------------------------------------------


def _replayed_draw(f4: tuple, args: tuple, kwargs: dict) -> tuple:
    """A draw linear in its parameters given its noise: the first-order rule runs twice from the
    generator's state -- with the fdata, then with the fdata tangents -- and the forward rule a
    third time, so all see the primal's noise (the parameters' second derivative is zero). The
    generator ends where the one primal draw leaves it; each pullback restores it."""
    fn, gen = f4[0], args[0][0]
    if fn.__name__ in _UNDIFFERENTIATED:
        _refuse_moving_second_order(fn, list(inspect.signature(fn).parameters), args, kwargs,
                                    _UNDIFFERENTIATED[fn.__name__])
    before = _state(gen)
    runs = []
    for part in (1, 3):  # fdata, fdata tangents
        _restore(gen, before)
        runs.append(rrule(CoDual(fn, NoFData), *(CoDual(a[0], a[part]) for a in args),
                          **{k: CoDual(v[0], v[part]) for k, v in kwargs.items()}))
    _restore(gen, before)
    y_dual = registered_frule(fn, *(Dual(a[0], a[2]) for a in args), **{k: Dual(v[0], v[2]) for k, v in kwargs.items()})
    (out1, pullback1), (out2, pullback2) = runs
    y = out1.primal
    _check_reproduced(fn.__name__, np.array_equal(y, y_dual.primal) and np.array_equal(y, out2.primal))
    tangent = y_dual.tangent if y_dual.tangent is not NoTangent else zero_tangent(y)

    def pullback(dy: Any, dy_d: Any) -> tuple:
        tangent_rdata = pullback2(dy_d)
        return pullback1(dy), tangent_rdata

    return (y, out1.fdata, tangent, out2.fdata), pullback


_replayed_draw.second_order_kind = "linear"  # type: ignore[attr-defined]
_NONLINEAR_DRAWS = tuple(shapes.GENERATOR_DEFINITIONS)  # second order: defined_by below
for _owner in (Generator, RandomState):
    for _name in [*_PATHWISE, "choice", "permutation"]:  # selections are linear given their indices
        if _name not in _NONLINEAR_DRAWS:
            _so_register((getattr(_owner, _name), (_owner, _name)), _replayed_draw)


def _replayed_shuffle(f4: tuple, args: tuple, kwargs: dict) -> tuple:
    """``gen.shuffle(x)`` in place: the first-order rule runs on the array (and its fdata), then,
    from the same generator state, on its tangent (and fdata tangent), so both take the same
    permutation; each pullback undoes its own."""
    fn, gen = f4[0], args[0][0]
    before = _state(gen)
    out, pullback1 = rrule(CoDual(fn, NoFData), *(CoDual(a[0], a[1]) for a in args),
                           **{k: CoDual(v[0], v[1]) for k, v in kwargs.items()})
    pullback2 = None
    array = args[1]
    if array[2] is not NoTangent:
        _restore(gen, before)  # the same state: the same permutation of the tangent
        _, pullback2 = rrule(CoDual(fn, NoFData), CoDual(gen, NoFData), CoDual(array[2], array[3]),
                             *(CoDual(a[0], a[1]) for a in args[2:]),  # the axis
                             **{k: CoDual(v[0], v[1]) for k, v in kwargs.items()})

    def pullback(dy: Any, dy_d: Any) -> tuple:
        tangent_rdata = pullback2(NoRData) if pullback2 is not None else (NoRData,) * (len(args) + 1)
        return pullback1(NoRData), tangent_rdata

    return (None, NoFData, NoTangent, NoFData), pullback


for _owner in (Generator, RandomState):
    _so_register((_owner.shuffle, (_owner, "shuffle")), _replayed_shuffle)


for _owner, _definitions in ((Generator, shapes.GENERATOR_DEFINITIONS), (RandomState, shapes.LEGACY_DEFINITIONS)):
    for _name, _definition in _definitions.items():
        defined_by((_owner, _name), _definition)
        defined_by(getattr(_owner, _name), _definition)


def _refuse_moving_parameters(fn: Callable) -> Callable:
    """The check of a draw not differentiated in its parameters, whose second order is zero: a
    float draw whose parameters move is refused (the second-order rule undoes the draw first)."""
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        names = []

    def check(out: tuple, args: tuple, kwargs: dict) -> None:
        if _is_float_result(out[0]):
            _refuse_moving_second_order(fn, names, args, kwargs)

    return check


for _owner, _names_list in ((Generator, _ZERO_GENERATOR), (RandomState, _ZERO_LEGACY)):
    for _name in _names_list:
        zero(getattr(_owner, _name), (_owner, _name), check=_refuse_moving_parameters(getattr(_owner, _name)))
zero(np.random.seed, np.random.ranf, np.random.sample, *_NOISE)


# --------------------------------------------------------------------------------------------
# Cases: generators are arguments, so check_rule compares their states after the forward pass
# (against the primal call) and after the pullback (against the state before the call).
# --------------------------------------------------------------------------------------------


def _g(seed: int = 0) -> Generator:
    return np.random.default_rng(seed)


def _rs(seed: int = 0) -> RandomState:
    return RandomState(seed)


G, RS = Generator, RandomState
CASES = [
    # zero derivative, Generator
    Case(G.random, _g(), 3), Case(G.standard_normal, _g(), (2, 3)), Case(G.standard_normal, _g()),
    Case(G.integers, _g(), 0, 10, 5), Case(G.standard_exponential, _g(), 4),
    # parameters with a zero derivative, or one at the draw's fixed quantile (not what redrawing at
    # a perturbed shape gives: test_random_shape_gradients.py), go in kwargs: check_rule does not perturb those
    Case(G.standard_gamma, _g(), kwargs={"shape": 2.5, "size": 3}),
    Case(G.beta, _g(), kwargs={"a": 2.0, "b": 3.0, "size": 4}), Case(G.poisson, _g(), 3.0, 5),
    Case(G.binomial, _g(), 10, 0.3, 4), Case(G.standard_normal, _g(), 3, np.float32),
    Case(G.random, _g(), 3, np.float64, np.zeros(3), name="Generator.random(out=)"),
    Case(G.standard_normal, _g(), kwargs={"size": 3, "dtype": np.float32}),
    Case(G.standard_normal, np.random.Generator(np.random.MT19937(3)), 4, name="standard_normal(MT19937)"),
    # zero derivative, RandomState
    Case(RS.rand, _rs(), 2, 3), Case(RS.randn, _rs(), 4), Case(RS.randn, _rs()), Case(RS.random_sample, _rs(), 3),
    Case(RS.randint, _rs(), 0, 5, 4), Case(RS.standard_normal, _rs(), 3),
    Case(RS.seed, _rs(), 5), Case(RS.beta, _rs(), 2, 3, 4),
    # pathwise: normal, laplace, logistic, gumbel (loc, scale), scalars, arrays, broadcasting, size
    *[Case(getattr(owner, name), gen, 0.5, 1.5)
      for owner, gen in ((G, _g()), (RS, _rs())) for name in ("normal", "laplace", "logistic", "gumbel")],
    *[Case(getattr(owner, name), gen, randn(3), randpos(2, 1))
      for owner, gen in ((G, _g(1)), (RS, _rs(1))) for name in ("normal", "laplace", "logistic", "gumbel")],
    Case(G.normal, _g(), randn(3), 2.0, (4, 3)), Case(RS.normal, _rs(), 0.3, randpos(3), (2, 3)),
    Case(G.normal, _g(), randn(3, dtype=np.float32), 1.5), Case(G.normal, _g(), [0.5, 1.0], 2.0),
    Case(G.normal, _g(), kwargs={"size": 3}), Case(G.normal, _g(), 1.0, kwargs={"size": (2,)}),
    # uniform (low, high), exponential and rayleigh (scale), gamma (scale), lognormal
    Case(G.uniform, _g(), -1.0, 2.0, 5), Case(RS.uniform, _rs(), randn(3), 3.0),
    Case(G.exponential, _g(), 1.5, 4), Case(RS.exponential, _rs(), randpos(3)),
    Case(G.rayleigh, _g(), randpos(2, 2)), Case(RS.rayleigh, _rs(), 2.0, 3),
    Case(G.gamma, _g(), 2, 1.5, 4), Case(RS.gamma, _rs(), np.array([1, 2, 3]), 0.7),  # int shape: not perturbed
    Case(G.lognormal, _g(), 0.2, 0.5, 4), Case(RS.lognormal, _rs(), randn(3), randpos(3)),
    # weibull, power, pareto: pathwise in a (a transformation of one exponential draw)
    *[Case(getattr(owner, name), gen, a, *size)
      for owner, gen in ((G, _g(2)), (RS, _rs(2))) for name in ("weibull", "power", "pareto")
      for a, size in ((1.7, ()), (randpos(3) + 0.5, ()), (2.5, ((2, 3),)))],
    # cov has a zero derivative (documented): an int array, so check_rule does not perturb it
    Case(G.multivariate_normal, _g(), randn(3), np.eye(3, dtype=int), 4),
    Case(RS.multivariate_normal, _rs(), [0.5, -1.0], np.array([[2, 1], [1, 1]])),
    # choice, permutation, shuffle: the derivative is the selection
    Case(G.choice, _g(), randn(6), 4), Case(G.choice, _g(), randn(6), (2, 3), False),
    Case(G.choice, _g(), randn(5)), Case(G.choice, _g(), randn(4, 3), 5, kwargs={"axis": 0}),
    Case(G.choice, _g(), randn(3, 4), 2, True, None, 1, name="choice(axis=1)"),
    Case(G.choice, _g(), randn(5), 3, kwargs={"p": np.array([0.1, 0.2, 0.3, 0.2, 0.2])}),
    Case(G.choice, _g(), 7, 3), Case(G.choice, _g(), [1.0, 2.0, 3.0], 4),
    Case(RS.choice, _rs(), randn(6), 4), Case(RS.choice, _rs(), randn(6), 3, False),
    Case(RS.choice, _rs(), 5, 2),
    Case(G.permutation, _g(), randn(6)), Case(G.permutation, _g(), randn(3, 4), 1),
    Case(G.permutation, _g(), 5), Case(RS.permutation, _rs(), randn(3, 2)),
    Case(RS.permutation, _rs(), randn(5)),
    Case(G.shuffle, _g(), randn(6)), Case(G.shuffle, _g(), randn(3, 4), 1), Case(G.shuffle, _g(), randn(4, 2)),
    Case(RS.shuffle, _rs(), randn(5)),
    # lists: the element tangents move with the elements (fdata permuted in the forward pass)
    Case(G.shuffle, _g(), [1.0, 2.0, 3.0, 4.0]),
    Case(G.shuffle, _g(), [randn(2), 1.0, randn(2)]),
    Case(RS.shuffle, _rs(), [0.5, 1.5, 2.5]),
    Case(G.shuffle, _g(), randn(5, dtype=np.float32)),
    # legacy module functions (the global RandomState): check_rule cannot control global state,
    # so these draw nothing (size 0) and exercise dispatch and keyword binding only
    Case(np.random.normal, 1.0, 2.0, 0, name="np.random.normal(size=0)"),
    Case(np.random.normal, 1.0, kwargs={"size": (0, 2)}), Case(np.random.randn, 0), Case(np.random.rand, 0, 2),
    Case(np.random.uniform, randn(0), 1.0), Case(np.random.choice, randn(4), 0),
]
