"""Adapters: one per benchmark column that differentiates (yuebing reverse and forward, autograd,
JAX eager, JAX jit, PyTorch eager).

An adapter turns a case into a ``Prepared``: ``call()``, the value-and-gradient call that is timed,
and ``directional(directions)``, the directional derivatives used to check the gradient against
finite differences. It raises ``Unavailable`` when the column cannot run at all (a framework that
is not installed, forward mode not written yet); any other exception while preparing or making
the first call is the framework failing on the case.

Each peer runs the *natural code in its own framework*: the case's own source, with the module's
``np`` bound to ``autograd.numpy``, ``jax.numpy`` or ``torch`` (and ``solve_triangular`` to the
framework's), and its inputs and module-level data converted to the framework's arrays. JAX runs
with ``jax_enable_x64`` so that it computes in float64, as NumPy does.
"""
from __future__ import annotations

import importlib
import importlib.util
import types
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from .cases import Case


class Unavailable(Exception):
    """The column cannot run in this environment (shown as ``n/a`` with the reason)."""


@dataclass
class Prepared:
    """A column's prepared gradient for one case."""

    call: Callable[[], Any]
    directional: Callable[[Sequence[tuple]], list[float]]


def _require(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise Unavailable(f"{module} is not installed ({error})") from None


def _reverse_prepared(vg: Callable, args: tuple, to_numpy: Callable = np.asarray) -> Prepared:
    """A Prepared from a value-and-gradient function returning (value, one gradient per arg)."""

    def directional(directions: Sequence[tuple]) -> list[float]:
        grads = [np.asarray(to_numpy(g), dtype=float) for g in vg(*args)[1]]
        return [sum(float(np.sum(g * d)) for g, d in zip(grads, ds)) for ds in directions]

    return Prepared(lambda: vg(*args), directional)


# ----------------------------------------------------------------------------------------------
# Running a case's source in another framework
# ----------------------------------------------------------------------------------------------


def rebind(fn: types.FunctionType, names: dict, convert: Callable) -> types.FunctionType:
    """``fn`` with its module's globals swapped: ``names`` replaced, module-level arrays passed
    through ``convert``, and every function of the module rebound to those globals too."""
    module = fn.__module__
    scope = dict(fn.__globals__)
    scope.update(names)
    for name, value in list(scope.items()):
        if isinstance(value, np.ndarray):
            scope[name] = convert(value)
        elif isinstance(value, types.FunctionType) and value.__module__ == module and name not in names:
            scope[name] = types.FunctionType(value.__code__, scope, value.__name__, value.__defaults__, value.__closure__)
    return scope[fn.__name__]


# ----------------------------------------------------------------------------------------------
# yuebing
# ----------------------------------------------------------------------------------------------


def yuebing_reverse(case: Case) -> Prepared:
    """``yuebing.prepare_gradient`` with respect to every argument."""
    from .. import api as yuebing

    args = case.args()
    vg = yuebing.prepare_gradient(case.function, *args, argnums=tuple(range(len(args))))
    return _reverse_prepared(vg, args)


def _forward_jvp() -> Callable:
    try:
        module = importlib.import_module("yuebing.api.forward")
    except ModuleNotFoundError as error:
        if error.name != "yuebing.api.forward":
            raise
        raise Unavailable("forward mode is not available yet (yuebing.api.forward does not exist)") from None
    if not hasattr(module, "jvp"):
        raise Unavailable("forward mode is not available yet (yuebing.api.forward has no jvp)")
    return module.jvp


def yuebing_forward(case: Case) -> Prepared:
    """One JVP, ``yuebing.api.forward.jvp(f, args, tangents)``, along a fixed random direction."""
    jvp = _forward_jvp()
    args = case.args()
    rng = np.random.default_rng(1)
    tangents = tuple(_like(a, rng.standard_normal(np.shape(a))) for a in args)

    def directional(directions: Sequence[tuple]) -> list[float]:
        return [float(jvp(case.function, args, tuple(_like(a, d) for a, d in zip(args, ds)))[1]) for ds in directions]

    return Prepared(lambda: jvp(case.function, args, tangents), directional)


def _like(primal: Any, direction: np.ndarray) -> Any:
    """``direction`` as a tangent of ``primal`` (a float for a float)."""
    return float(direction) if isinstance(primal, float) else direction


# ----------------------------------------------------------------------------------------------
# Peers
# ----------------------------------------------------------------------------------------------


def autograd_eager(case: Case) -> Prepared:
    _require("autograd")
    import autograd
    import autograd.numpy as anp
    import autograd.scipy.linalg as asla

    f = rebind(case.function, {"np": anp, "solve_triangular": asla.solve_triangular}, lambda a: a)
    args = case.args()
    return _reverse_prepared(autograd.value_and_grad(f, argnum=tuple(range(len(args)))), args)


def _jax() -> Any:
    jax = _require("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def _jax_function(case: Case) -> tuple[Callable, tuple]:
    jax = _jax()
    import jax.numpy as jnp
    import jax.scipy.linalg as jsla

    f = rebind(case.function, {"np": jnp, "solve_triangular": jsla.solve_triangular}, jnp.asarray)
    args = tuple(a if isinstance(a, float) else jnp.asarray(a) for a in case.args())
    return jax.value_and_grad(f, argnums=tuple(range(len(args)))), args


def _blocking(vg: Callable) -> Callable:
    """JAX dispatches asynchronously: wait for the result so the timing covers the work."""
    import jax

    return lambda *args: jax.block_until_ready(vg(*args))


def jax_eager(case: Case) -> Prepared:
    vg, args = _jax_function(case)
    return _reverse_prepared(_blocking(vg), args)


def jax_jit(case: Case) -> Prepared:
    vg, args = _jax_function(case)
    return _reverse_prepared(_blocking(_jax().jit(vg)), args)


def _torch_solve_triangular(torch: Any) -> Callable:
    """SciPy's signature on ``torch.linalg.solve_triangular`` (which wants a 2-D right side)."""

    def solve_triangular(a, b, lower=False):
        return torch.linalg.solve_triangular(a, b[:, None], upper=not lower)[:, 0]

    return solve_triangular


def torch_eager(case: Case) -> Prepared:
    torch = _require("torch")
    f = rebind(case.function, {"np": torch, "solve_triangular": _torch_solve_triangular(torch)}, torch.as_tensor)
    args = tuple(torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in case.args())

    def value_and_grad(*xs: Any) -> tuple:
        value = f(*xs)
        return value.detach(), torch.autograd.grad(value, xs)

    return _reverse_prepared(value_and_grad, args, lambda g: g.numpy())


# Column name -> adapter. yuebing's own failures are errors; a peer's are ``missing``.
YUEBING_COLUMNS: dict[str, Callable[[Case], Prepared]] = {
    "yuebing reverse": yuebing_reverse,
    "yuebing forward": yuebing_forward,
}
# Peer column name -> (the module it needs, adapter).
PEERS: dict[str, tuple[str, Callable[[Case], Prepared]]] = {
    "autograd": ("autograd", autograd_eager),
    "jax": ("jax", jax_eager),
    "jax-jit": ("jax", jax_jit),
    "torch": ("torch", torch_eager),
}


def installed_peers() -> list[str]:
    """The peers whose framework imports here."""
    return [name for name, (module, _) in PEERS.items() if importlib.util.find_spec(module) is not None]
