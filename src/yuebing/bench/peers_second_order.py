"""Adapters for the second-order columns (``--mode hvp``): one Hessian-vector product, and the
dense Hessian of the small cases, for yuebing and each peer.

yuebing: ``yb.hvp`` and ``yb.prepare_hvp``; ``yb.hessian`` and ``yb.prepare_hessian``. Peers:
autograd's ``hessian_tensor_product`` and ``hessian``; JAX eager and jit ``jvp(grad)`` and
``jax.hessian``; ``torch.func.jvp(torch.func.grad)`` and ``torch.func.hessian``. autograd
differentiates one argument, so a case with several is given to it as a function of one flat
vector (``_flat_function``).

Each adapter returns a ``PreparedSecondOrder``: the timed ``call``, the library's own
``gradient`` (flat, at NumPy arguments) and ``product`` (flat H v along a NumPy direction; for a
dense Hessian, the Hessian times v), which ``check.check_hvp`` compares with central differences
of that gradient before anything is timed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .cases import Case
from .check import check_hvp, flat
from .peers import (all_argnums, as_tangents, autograd_framework, blocking, jax_framework, jax_module, require,
                    timed_direction, torch_framework, torch_func)


@dataclass
class PreparedSecondOrder:
    """A second-order column's prepared call for one case."""

    call: Callable[[], Any]
    gradient: Callable[[tuple], np.ndarray]  # NumPy arguments -> the flat gradient
    product: Callable[[tuple], np.ndarray]  # a NumPy direction (one array per argument) -> flat H v

    def problem(self, f: Callable, args: tuple) -> str | None:
        """``None`` if the gradient agrees with finite differences of ``f`` and the product with
        central differences of the gradient."""
        return check_hvp(f, args, self.gradient, self.product)


def _dense(blocks: Any, args: tuple, to_numpy: Callable = np.asarray) -> np.ndarray:
    """A nested tuple of Hessian blocks ``H[i][j]`` (JAX's layout) as one dense matrix."""
    sizes = [int(np.size(a)) for a in args]
    return np.block([[np.reshape(to_numpy(blocks[i][j]), (sizes[i], sizes[j])) for j in range(len(args))]
                     for i in range(len(args))])


def _hessian_prepared(hessian: Callable[[], Any], gradient: Callable[[tuple], np.ndarray], args: tuple,
                      dense: Callable[[Any], np.ndarray]) -> PreparedSecondOrder:
    """A Prepared whose product is the dense Hessian (computed once, on first use) times v."""
    matrix: list[np.ndarray] = []

    def product(direction: tuple) -> np.ndarray:
        if not matrix:
            matrix.append(dense(hessian()))
        return matrix[0] @ flat(direction)

    return PreparedSecondOrder(hessian, gradient, product)


# ----------------------------------------------------------------------------------------------
# yuebing
# ----------------------------------------------------------------------------------------------


def _yuebing_gradient(case: Case) -> Callable[[tuple], np.ndarray]:
    from .. import api as yuebing

    args = case.args()
    grad = yuebing.grad(case.function, argnums=all_argnums(args))
    return lambda xs: flat(grad(*xs))


def yuebing_hvp(case: Case) -> PreparedSecondOrder:
    """``yb.hvp(f, args, v)`` (value, gradient and Hessian-vector product)."""
    from .. import api as yuebing

    args = case.args()
    direction = timed_direction(args)
    hvp = yuebing.hvp
    return PreparedSecondOrder(lambda: hvp(case.function, args, direction), _yuebing_gradient(case),
                               lambda v: flat(hvp(case.function, args, as_tangents(args, v))[2]))


def yuebing_prepared_hvp(case: Case) -> PreparedSecondOrder:
    """``yb.prepare_hvp(f, *args)``, called with the case's arguments."""
    from .. import api as yuebing

    args = case.args()
    direction = timed_direction(args)
    hvp = yuebing.prepare_hvp(case.function, *args)
    return PreparedSecondOrder(lambda: hvp(args, direction), _yuebing_gradient(case),
                               lambda v: flat(hvp(args, as_tangents(args, v))[2]))


def yuebing_hessian(case: Case) -> PreparedSecondOrder:
    """``yb.hessian(f, argnums=every argument)``."""
    from .. import api as yuebing

    args = case.args()
    hessian = yuebing.hessian(case.function, argnums=all_argnums(args))
    return _hessian_prepared(lambda: hessian(*args), _yuebing_gradient(case), args, lambda h: _dense(h, args))


def yuebing_prepared_hessian(case: Case) -> PreparedSecondOrder:
    """``yb.prepare_hessian(f, *args, argnums=every argument)``."""
    from .. import api as yuebing

    args = case.args()
    hessian = yuebing.prepare_hessian(case.function, *args, argnums=all_argnums(args))
    return _hessian_prepared(lambda: hessian(*args), _yuebing_gradient(case), args, lambda h: _dense(h, args))


# ----------------------------------------------------------------------------------------------
# autograd
# ----------------------------------------------------------------------------------------------


def _flat_function(f: Callable, args: tuple) -> Callable:
    """``f`` as a function of one flat vector holding every argument (autograd takes one)."""
    shapes = [np.shape(a) for a in args]
    ends = np.cumsum([int(np.size(a)) for a in args])

    def on_flat(v: Any) -> Any:
        parts = [v[end - int(np.prod(shape, dtype=int)):end] for shape, end in zip(shapes, ends)]
        return f(*(p[0] if isinstance(a, float) else p.reshape(shape) for p, a, shape in zip(parts, args, shapes)))

    return on_flat


def _autograd_parts(case: Case) -> tuple[Any, Callable, np.ndarray]:
    autograd = require("autograd")
    args = case.args()
    return autograd, _flat_function(autograd_framework(case).function, args), flat(args)


def autograd_hvp(case: Case) -> PreparedSecondOrder:
    """``autograd.hessian_tensor_product`` of the flat function."""
    autograd, f, x = _autograd_parts(case)
    htp, grad = autograd.hessian_tensor_product(f), autograd.grad(f)
    direction = flat(timed_direction(case.args()))
    return PreparedSecondOrder(lambda: htp(x, direction), lambda xs: flat((grad(flat(xs)),)),
                               lambda v: np.asarray(htp(x, flat(v))))


def autograd_hessian(case: Case) -> PreparedSecondOrder:
    """``autograd.hessian`` of the flat function."""
    autograd, f, x = _autograd_parts(case)
    hessian, grad = autograd.hessian(f), autograd.grad(f)
    return _hessian_prepared(lambda: hessian(x), lambda xs: flat((grad(flat(xs)),)), case.args(), np.asarray)


# ----------------------------------------------------------------------------------------------
# JAX and PyTorch
# ----------------------------------------------------------------------------------------------


def _jax_hvp(case: Case, jit: bool) -> PreparedSecondOrder:
    jax = jax_module()
    framework = jax_framework(case)
    args = case.args()
    primals = framework.inputs(args)
    grad = jax.grad(framework.function, argnums=all_argnums(args))

    def hvp(primals: tuple, tangents: tuple) -> Any:
        return jax.jvp(grad, primals, tangents)  # (gradient, Hessian-vector product)

    run, gradient = (blocking(jax.jit(hvp)), blocking(jax.jit(grad))) if jit else (blocking(hvp), blocking(grad))
    direction = framework.inputs(timed_direction(args))
    return PreparedSecondOrder(lambda: run(primals, direction),
                               lambda xs: flat(gradient(*framework.inputs(xs))),
                               lambda v: flat(run(primals, framework.inputs(as_tangents(args, v)))[1]))


def jax_hvp(case: Case) -> PreparedSecondOrder:
    """``jax.jvp(jax.grad(f), ...)``, eager."""
    return _jax_hvp(case, jit=False)


def jax_jit_hvp(case: Case) -> PreparedSecondOrder:
    """``jax.jit`` of ``jax.jvp(jax.grad(f), ...)``."""
    return _jax_hvp(case, jit=True)


def _jax_hessian(case: Case, jit: bool) -> PreparedSecondOrder:
    jax = jax_module()
    framework = jax_framework(case)
    args = case.args()
    primals = framework.inputs(args)
    hessian = jax.hessian(framework.function, argnums=all_argnums(args))
    grad = jax.grad(framework.function, argnums=all_argnums(args))
    if jit:
        hessian, grad = jax.jit(hessian), jax.jit(grad)
    hessian, grad = blocking(hessian), blocking(grad)
    return _hessian_prepared(lambda: hessian(*primals), lambda xs: flat(grad(*framework.inputs(xs))), args,
                             lambda h: _dense(h, args))


def jax_hessian(case: Case) -> PreparedSecondOrder:
    """``jax.hessian``, eager."""
    return _jax_hessian(case, jit=False)


def jax_jit_hessian(case: Case) -> PreparedSecondOrder:
    """``jax.jit(jax.hessian(f))``."""
    return _jax_hessian(case, jit=True)


def _torch_parts(case: Case) -> tuple[Any, Any, tuple, tuple, Callable, Callable]:
    """torch.func, the case in torch, its NumPy and torch arguments, ``torch.func.grad`` of it, and
    that gradient as a flat NumPy vector at NumPy arguments."""
    func = torch_func()
    framework = torch_framework(case)
    args = case.args()
    grad = func.grad(framework.function, argnums=all_argnums(args))
    gradient = lambda xs: flat(tuple(framework.to_numpy(g) for g in grad(*framework.inputs(xs))))  # noqa: E731
    return func, framework, args, framework.inputs(args), grad, gradient


def torch_hvp(case: Case) -> PreparedSecondOrder:
    """``torch.func.jvp(torch.func.grad(f), ...)``."""
    func, framework, args, primals, grad, gradient = _torch_parts(case)
    direction = framework.inputs(timed_direction(args))

    def product(v: tuple) -> np.ndarray:
        hv = func.jvp(grad, primals, framework.inputs(as_tangents(args, v)))[1]
        return flat(tuple(framework.to_numpy(h) for h in hv))

    return PreparedSecondOrder(lambda: func.jvp(grad, primals, direction), gradient, product)


def torch_hessian(case: Case) -> PreparedSecondOrder:
    """``torch.func.hessian``."""
    func, framework, args, primals, _, gradient = _torch_parts(case)
    hessian = func.hessian(framework.function, argnums=all_argnums(args))
    return _hessian_prepared(lambda: hessian(*primals), gradient, args,
                             lambda h: _dense(h, args, framework.to_numpy))


# Column name -> adapter, per table.
YUEBING_HVPS: dict[str, Callable[[Case], PreparedSecondOrder]] = {
    "yuebing hvp": yuebing_hvp,
    "yuebing prepared hvp": yuebing_prepared_hvp,
}
YUEBING_HESSIANS: dict[str, Callable[[Case], PreparedSecondOrder]] = {
    "yuebing hessian": yuebing_hessian,
    "yuebing prepared hessian": yuebing_prepared_hessian,
}
PEER_HVPS: dict[str, Callable[[Case], PreparedSecondOrder]] = {
    "autograd": autograd_hvp,
    "jax": jax_hvp,
    "jax-jit": jax_jit_hvp,
    "torch": torch_hvp,
}
PEER_HESSIANS: dict[str, Callable[[Case], PreparedSecondOrder]] = {
    "autograd": autograd_hessian,
    "jax": jax_hessian,
    "jax-jit": jax_jit_hessian,
    "torch": torch_hessian,
}
