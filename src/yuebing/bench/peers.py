"""Adapters for the first-order columns: how yuebing and each peer (autograd, JAX eager, JAX jit,
PyTorch) compute a case's value and gradient (``--mode grad``) or one JVP (``--mode jvp``).

An adapter turns a case into a ``Prepared``: ``call()``, the call that is timed, and
``directional(directions)``, the directional derivatives used to check it against finite
differences. It raises ``Unavailable`` when the column cannot run at all (a framework that is not
installed) and ``NoSuchMode`` when the library has no such operation; any other exception while
preparing or making the first call is the library failing on the case.

Each peer runs the *natural code in its own framework*: the case's own source, with the module's
``np`` bound to ``autograd.numpy``, ``jax.numpy`` or ``torch`` (and ``solve_triangular`` to the
framework's), and its inputs and module-level data converted to the framework's arrays
(``Framework``). JAX runs with ``jax_enable_x64`` and PyTorch with float64 as its default dtype
(``torch.eye`` would otherwise make float32), so that both compute in float64, as NumPy does.
The second-order adapters (HVP, dense Hessian) are in ``peers_second_order``.
"""
from __future__ import annotations

import importlib
import importlib.util
import types
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from .cases import Case
from .check import check_gradient, random_directions


class Unavailable(Exception):
    """The column cannot run in this environment (shown as ``n/a`` with the reason)."""


class NoSuchMode(Unavailable):
    """The library has no operation for this mode (shown as ``—`` with the reason)."""


@dataclass
class Prepared:
    """A first-order column's prepared call for one case (a gradient or a JVP)."""

    call: Callable[[], Any]
    directional: Callable[[Sequence[tuple]], list[float]]

    def problem(self, f: Callable, args: tuple) -> str | None:
        """``None`` if the directional derivatives agree with finite differences of ``f``."""
        return check_gradient(f, args, self.directional)


def all_argnums(args: tuple) -> tuple[int, ...]:
    return tuple(range(len(args)))


def timed_direction(args: tuple) -> tuple:
    """The direction a JVP or HVP column is timed along: the first of the checked directions,
    as tangents of ``args`` (a float for a float)."""
    return as_tangents(args, random_directions(args)[0])


def as_tangents(args: tuple, direction: tuple) -> tuple:
    """``direction`` as tangents of ``args``: a Python float where the argument is one."""
    return tuple(float(d) if isinstance(a, float) else d for a, d in zip(args, direction))


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


def require(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise Unavailable(f"{module} is not installed ({error})") from None


@dataclass
class Framework:
    """A case's function in one framework, and the conversions of its inputs and outputs."""

    function: Callable
    inputs: Callable[[tuple], tuple]  # NumPy arguments (or directions) -> the framework's
    to_numpy: Callable[[Any], np.ndarray]


def autograd_framework(case: Case) -> Framework:
    require("autograd")
    import autograd.numpy as anp
    import autograd.scipy.linalg as asla

    f = rebind(case.function, {"np": anp, "solve_triangular": asla.solve_triangular}, lambda a: a)
    return Framework(f, tuple, np.asarray)


def jax_module() -> Any:
    jax = require("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def jax_framework(case: Case) -> Framework:
    jax_module()
    import jax.numpy as jnp
    import jax.scipy.linalg as jsla

    f = rebind(case.function, {"np": jnp, "solve_triangular": jsla.solve_triangular}, jnp.asarray)
    return Framework(f, lambda xs: tuple(x if isinstance(x, float) else jnp.asarray(x) for x in xs), np.asarray)


def blocking(fn: Callable) -> Callable:
    """JAX dispatches asynchronously: wait for the result so the timing covers the work."""
    import jax

    return lambda *args: jax.block_until_ready(fn(*args))


def _torch_solve_triangular(torch: Any) -> Callable:
    """SciPy's signature on ``torch.linalg.solve_triangular`` (which wants a 2-D right side)."""

    def solve_triangular(a, b, lower=False):
        return torch.linalg.solve_triangular(a, b[:, None], upper=not lower)[:, 0]

    return solve_triangular


def torch_framework(case: Case) -> Framework:
    torch = require("torch")
    # gp_lml's s * np.eye(n): a float32 torch.eye times a 0-d float64 tensor stays float32, and its
    # gradient with respect to s then carries float32 rounding (which the HVP check caught)
    torch.set_default_dtype(torch.float64)
    f = rebind(case.function, {"np": torch, "solve_triangular": _torch_solve_triangular(torch)}, torch.as_tensor)
    return Framework(f, lambda xs: tuple(torch.tensor(x, dtype=torch.float64) for x in xs),
                     lambda t: t.detach().numpy())


def torch_func() -> Any:
    require("torch")
    try:
        return importlib.import_module("torch.func")
    except ImportError:
        raise NoSuchMode("torch.func (jvp, grad, hessian) needs torch >= 2.0") from None


# ----------------------------------------------------------------------------------------------
# Gradient columns (--mode grad)
# ----------------------------------------------------------------------------------------------


def _reverse_prepared(vg: Callable, args: tuple, to_numpy: Callable = np.asarray) -> Prepared:
    """A Prepared from a value-and-gradient function returning (value, one gradient per arg)."""

    def directional(directions: Sequence[tuple]) -> list[float]:
        grads = [np.asarray(to_numpy(g), dtype=float) for g in vg(*args)[1]]
        return [sum(float(np.sum(g * d)) for g, d in zip(grads, ds)) for ds in directions]

    return Prepared(lambda: vg(*args), directional)


def yuebing_reverse(case: Case) -> Prepared:
    """``yuebing.prepare_gradient`` with respect to every argument."""
    from .. import api as yuebing

    args = case.args()
    return _reverse_prepared(yuebing.prepare_gradient(case.function, *args, argnums=all_argnums(args)), args)


def yuebing_plain(case: Case) -> Prepared:
    """``yuebing.value_and_grad(f, argnums=...)``, made once and called as users call it."""
    from .. import api as yuebing

    args = case.args()
    return _reverse_prepared(yuebing.value_and_grad(case.function, argnums=all_argnums(args)), args)


def autograd_eager(case: Case) -> Prepared:
    import autograd

    framework = autograd_framework(case)
    args = case.args()
    return _reverse_prepared(autograd.value_and_grad(framework.function, argnum=all_argnums(args)), args)


def _jax_value_and_grad(case: Case) -> tuple[Callable, tuple]:
    framework = jax_framework(case)
    args = framework.inputs(case.args())
    return jax_module().value_and_grad(framework.function, argnums=all_argnums(args)), args


def jax_eager(case: Case) -> Prepared:
    vg, args = _jax_value_and_grad(case)
    return _reverse_prepared(blocking(vg), args)


def jax_jit(case: Case) -> Prepared:
    vg, args = _jax_value_and_grad(case)
    return _reverse_prepared(blocking(jax_module().jit(vg)), args)


def torch_eager(case: Case) -> Prepared:
    torch = require("torch")
    framework = torch_framework(case)
    args = tuple(x.requires_grad_() for x in framework.inputs(case.args()))

    def value_and_grad(*xs: Any) -> tuple:
        value = framework.function(*xs)
        return value.detach(), torch.autograd.grad(value, xs)

    return _reverse_prepared(value_and_grad, args, framework.to_numpy)


# ----------------------------------------------------------------------------------------------
# JVP columns (--mode jvp, and 'yuebing forward' in --mode grad)
# ----------------------------------------------------------------------------------------------


def _forward_prepared(jvp: Callable[[tuple], Any], args: tuple, to_numpy: Callable = np.asarray) -> Prepared:
    """A Prepared from ``jvp(direction) -> tangent of the output``, ``direction`` a tuple of
    NumPy tangents; timed along ``timed_direction``."""
    direction = timed_direction(args)

    def directional(directions: Sequence[tuple]) -> list[float]:
        return [float(to_numpy(jvp(as_tangents(args, ds)))) for ds in directions]

    return Prepared(lambda: jvp(direction), directional)


def yuebing_forward(case: Case) -> Prepared:
    """One JVP, ``yuebing.jvp(f, args, tangents)``."""
    from .. import api as yuebing

    args = case.args()
    return _forward_prepared(lambda tangents: yuebing.jvp(case.function, args, tangents)[1], args)


def autograd_forward(case: Case) -> Prepared:
    """autograd's forward mode, ``make_jvp``, on the arguments packed in one tuple."""
    autograd = require("autograd")
    if not hasattr(autograd, "make_jvp"):
        raise NoSuchMode("this autograd has no forward mode (make_jvp needs autograd >= 1.2)")
    framework = autograd_framework(case)
    args = case.args()
    jvp_at = autograd.make_jvp(lambda packed: framework.function(*packed))(args)
    return _forward_prepared(lambda tangents: jvp_at(tangents)[1], args)


def _jax_jvp(case: Case, jit: bool) -> Prepared:
    jax = jax_module()
    framework = jax_framework(case)
    args = case.args()
    primals = framework.inputs(args)

    def jvp(primals: tuple, tangents: tuple) -> Any:
        return jax.jvp(framework.function, primals, tangents)[1]

    run = blocking(jax.jit(jvp) if jit else jvp)
    return _forward_prepared(lambda tangents: run(primals, framework.inputs(tangents)), args)


def jax_forward(case: Case) -> Prepared:
    """``jax.jvp``, eager."""
    return _jax_jvp(case, jit=False)


def jax_jit_forward(case: Case) -> Prepared:
    """``jax.jit`` of ``jax.jvp``."""
    return _jax_jvp(case, jit=True)


def torch_forward(case: Case) -> Prepared:
    """``torch.func.jvp``."""
    func = torch_func()
    framework = torch_framework(case)
    args = case.args()
    primals = framework.inputs(args)
    return _forward_prepared(lambda tangents: func.jvp(framework.function, primals, framework.inputs(tangents))[1],
                             args, framework.to_numpy)


# Column name -> adapter. yuebing's own failures are refusals; a peer's are ``missing``.
YUEBING_COLUMNS: dict[str, Callable[[Case], Prepared]] = {
    "yuebing reverse": yuebing_reverse,
    "yuebing forward": yuebing_forward,
}
# Peer column name -> (the module it needs, gradient adapter).
PEERS: dict[str, tuple[str, Callable[[Case], Prepared]]] = {
    "autograd": ("autograd", autograd_eager),
    "jax": ("jax", jax_eager),
    "jax-jit": ("jax", jax_jit),
    "torch": ("torch", torch_eager),
}
# Peer column name -> JVP adapter.
PEER_JVPS: dict[str, Callable[[Case], Prepared]] = {
    "autograd": autograd_forward,
    "jax": jax_forward,
    "jax-jit": jax_jit_forward,
    "torch": torch_forward,
}


def installed_peers() -> list[str]:
    """The peers whose framework imports here."""
    return [name for name, (module, _) in PEERS.items() if importlib.util.find_spec(module) is not None]
