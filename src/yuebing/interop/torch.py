"""PyTorch bridge: ``wrap(f)`` makes a NumPy function, differentiated by yuebing, an operation of
PyTorch's autograd, usable in a ``torch.nn.Module`` and under ``torch.func``.

Three ``torch.autograd.Function`` classes, all in the ``setup_context`` style that ``torch.func``
requires:

* ``_Op`` runs ``f`` on NumPy copies of the tensors. Its ``backward`` is ``_Pullback`` (so that the
  backward pass is itself differentiable), its ``jvp`` (forward mode: ``torch.func.jvp``,
  ``jacfwd``, ``torch.autograd.forward_ad``) is ``yb.jvp``.
* ``_Pullback`` computes ``J^T ybar`` by ``yb.vjp``. Its own ``backward`` -- the second order:
  ``create_graph=True`` then a gradient of the gradient, ``gradgradcheck``,
  ``torch.func.grad(torch.func.grad(...))``, ``jacrev(grad(...))`` -- is one forward-over-reverse
  ``yb.hvp`` of ``h(x) = <ybar, f(x)>`` (the part along ``x``) and one ``yb.jvp`` of ``f`` (the
  part along ``ybar``); its ``jvp`` (``torch.func.hessian``, forward over reverse) is ``yb.hvp``
  plus ``yb.vjp``.
* ``_Derivative`` runs those JVPs and second-order pullbacks as a Function of their own, so that
  batched tangents (``jacfwd``, ``jacrev``, ``hessian`` vmap over them) meet a ``vmap`` rule, and
  so that differentiating them again (third order) raises a ``RuntimeError`` instead of silently
  treating them as constants.

Each ``Function`` has a ``vmap`` rule that loops over the batch (``torch.func.vmap``, per-example
gradients with ``vmap(grad(...))``): correct, not fast. The NumPy side sees only the floating
tensors as variables; every other argument (ints, strings, arrays, integer tensors) is held fixed.
This module uses yuebing's public API only; PyTorch is imported here, never by ``import yuebing``.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

try:
    import torch
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "yuebing.interop.torch needs PyTorch, which is not installed: pip install -e '.[interop]' "
        "(or pip install torch)"
    ) from error

import numpy as np

from .. import api as yb

from ._numpy import bound, check_output, contracted

__all__ = ["wrap"]

_NUMPY_DTYPES = {torch.float16: np.float16, torch.bfloat16: np.float32, torch.float32: np.float32,
                 torch.float64: np.float64}


# --------------------------------------------------------------------------------------------
# One call of a wrapped function: where its tensors are, and the NumPy function of its variables
# --------------------------------------------------------------------------------------------


class _Call:
    """What ``op(*args, **kwargs)`` was called with, apart from its tensors (which go through
    ``Function.apply`` so that autograd sees them): ``f``, the other arguments, the tensors'
    positions, and the output's structure once ``f`` has run."""

    def __init__(self, f: Callable, args: tuple, kwargs: dict) -> None:
        self.f, self.kwargs, self.name = f, kwargs, getattr(f, "__name__", repr(f))
        self.positions = tuple(i for i, a in enumerate(args) if isinstance(a, torch.Tensor))
        self.template = [None if isinstance(a, torch.Tensor) else a for a in args]
        tensors = [args[i] for i in self.positions]
        self.variable = tuple(t.is_floating_point() for t in tensors)
        floats = [t.dtype for t in tensors if t.is_floating_point()]
        self.dtype = functools.reduce(torch.promote_types, floats) if floats else None
        self.device = tensors[0].device if tensors else torch.device("cpu")
        self.multi = False
        _check_arguments(self, args, kwargs)

    def numpy_function(self, arrays: list[np.ndarray]) -> tuple[Callable, tuple]:
        """``(g, xs)``: ``g(*xs)`` is ``f`` called with ``arrays`` in the tensors' places, where
        ``xs`` are the arrays of floating tensors (the variables); the rest are held fixed."""
        template = list(self.template)
        places = []
        for position, array, variable in zip(self.positions, arrays, self.variable):
            if variable:
                places.append(position)
            else:
                template[position] = array
        xs = tuple(a for a, v in zip(arrays, self.variable) if v)
        return bound(self.f, template, tuple(places), self.kwargs), xs


def _holds_tensor(x: Any) -> bool:
    if isinstance(x, torch.Tensor):
        return True
    if isinstance(x, (list, tuple)):
        return any(_holds_tensor(v) for v in x)
    if isinstance(x, dict):
        return any(_holds_tensor(v) for v in x.values())
    return False


def _check_arguments(call: _Call, args: tuple, kwargs: dict) -> None:
    """Refuse what would lose a derivative: tensors inside containers or keyword arguments (they
    would reach NumPy without autograd seeing them), complex tensors (not supported here)."""
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor):
            if a.is_complex():
                raise TypeError(f"yuebing.interop.torch.wrap({call.name}): argument {i} is a complex tensor; "
                                "only real floating tensors are differentiated (pass real and imaginary parts)")
        elif _holds_tensor(a):
            raise TypeError(f"yuebing.interop.torch.wrap({call.name}): argument {i} is a {type(a).__name__} "
                            "holding tensors; autograd would not see them. Pass each tensor as its own "
                            "positional argument")
    for key, value in kwargs.items():
        if _holds_tensor(value):
            raise TypeError(f"yuebing.interop.torch.wrap({call.name}): keyword argument {key!r} holds a "
                            "tensor; keyword arguments are not differentiated. Pass it positionally")


# --------------------------------------------------------------------------------------------
# Conversions between tensors and NumPy values
# --------------------------------------------------------------------------------------------


def _view(t: torch.Tensor) -> np.ndarray:
    """The tensor's data as a NumPy array (sharing memory where the dtype allows)."""
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return t.to("cpu", torch.float32).numpy()
    return t.cpu().resolve_conj().resolve_neg().numpy()


def _arrays(call: _Call, tensors: tuple) -> list[np.ndarray]:
    """The tensors as NumPy arrays, the views kept on ``call`` for ``setup_context`` (which
    hands them to ``jvp``: under ``torch.func`` the tensors it saves have no data to read)."""
    views = [_view(t) for t in tensors]
    call.last_views = views
    return views


def _copies(views: list) -> list[np.ndarray]:
    """Copies for ``f``, which may mutate its arguments; the tensors must not change."""
    return [np.array(v) for v in views]


def _to_torch(x: Any, dtype: torch.dtype | None, device: torch.device) -> torch.Tensor:
    array = np.asarray(x)
    tensor = torch.from_numpy(np.array(array, dtype=array.dtype if dtype is None else _NUMPY_DTYPES[dtype]))
    return tensor.to(device=device, dtype=dtype or tensor.dtype)


def _outputs(call: _Call, value: Any) -> tuple | torch.Tensor:
    """``f``'s value as a tensor, or a tuple of tensors for a tuple output (in the promoted
    floating dtype of the input tensors, on their device). Records each part's kind and dtype,
    which the cotangents yuebing is given must have."""
    multi, parts = check_output(value, call.name, "yuebing.interop.torch.wrap")
    call.multi = multi
    call.specs = tuple((isinstance(p, np.ndarray), np.asarray(p).dtype) for p in parts)
    tensors = tuple(_to_torch(p, call.dtype, call.device) for p in parts)
    return tensors if multi else tensors[0]


def _numpy_of(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().to(torch.float64 if t.dtype == torch.bfloat16 else t.dtype).numpy()


def _like(spec: tuple, t: torch.Tensor | None, shape: tuple) -> Any:
    """Tensor ``t`` (``None``: zero) as the cotangent or tangent yuebing expects for an output
    part or argument of kind ``spec`` = ``(is an array, dtype)``."""
    is_array, dtype = spec
    array = np.zeros(shape, dtype) if t is None else np.array(_numpy_of(t), dtype=dtype).reshape(shape)
    return array if is_array else float(array)


def _cotangent(call: _Call, grads: tuple) -> Any:
    """The cotangent of ``f``'s output from the output gradients (one per part)."""
    parts = tuple(_like(spec, g, tuple(g.shape)) for spec, g in zip(call.specs, grads))
    return parts if call.multi else parts[0]


def _parts(call: _Call, x: Any) -> tuple:
    return x if call.multi else (x,)


def _tangents_of(xs: tuple, ts: Any) -> tuple:
    """Tangents (or cotangents) from autograd as arrays like ``xs`` (``None`` is zero)."""
    return tuple(np.zeros_like(x) if t is None else np.array(_numpy_of(t), x.dtype).reshape(x.shape)
                 for x, t in zip(xs, ts))


def _variables_only(call: _Call, items: Any) -> list:
    return [item for item, variable in zip(items, call.variable) if variable]


def _per_tensor(call: _Call, values: Any) -> list:
    """``values`` (one per variable) spread over all tensors, ``None`` for the fixed ones."""
    found = iter(values)
    return [next(found) if variable else None for variable in call.variable]


# --------------------------------------------------------------------------------------------
# The autograd Functions
# --------------------------------------------------------------------------------------------


def _batched(function: type, info: Any, in_dims: tuple, *args: Any) -> tuple:
    """A ``vmap`` rule for ``function``: call it on each slice of the batch and stack."""
    results = []
    for i in range(info.batch_size):
        sliced = [a if d is None else a.select(d, i) for a, d in zip(args, in_dims)]
        results.append(function.apply(*sliced))
    if isinstance(results[0], tuple):
        stacked = tuple(torch.stack(parts) for parts in zip(*results))
        return stacked, (0,) * len(stacked)
    return torch.stack(results), 0


class _Op(torch.autograd.Function):
    """``f`` on NumPy copies of the tensors; autograd's rules from yuebing."""

    @staticmethod
    def forward(call: _Call, *tensors: torch.Tensor) -> Any:
        g, xs = call.numpy_function(_copies(_arrays(call, tensors)))
        return _outputs(call, g(*xs))

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        ctx.call, ctx.views = inputs[0], inputs[0].last_views
        ctx.save_for_backward(*inputs[1:])

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor) -> tuple:
        call, tensors = ctx.call, ctx.saved_tensors
        if torch.is_grad_enabled() or _transforms_active():
            # the backward pass may be differentiated (create_graph=True, torch.func): a Function
            pulled = _Pullback.apply(call, len(tensors), *tensors, *grads)
        else:  # a plain backward(): the pullback itself, without a second Function's overhead
            pulled = _pulled(call, tensors, grads)
        return (None, *_per_tensor(call, pulled))

    @staticmethod
    def jvp(ctx: Any, _call_tangent: Any, *tangents: torch.Tensor) -> Any:
        primals = [torch.from_numpy(v) for v in ctx.views]
        return _Derivative.apply(ctx.call, "f", len(primals), *primals, *_filled(primals, tangents))

    @staticmethod
    def vmap(info: Any, in_dims: tuple, *args: Any) -> tuple:
        return _batched(_Op, info, in_dims, *args)


# torch's own Function.apply asks this; if a later torch drops it, always take the Function path
_transforms_active = getattr(torch._C, "_are_functorch_transforms_active", lambda: True)


def _pulled(call: _Call, tensors: tuple, cts: tuple, views: list | None = None) -> tuple:
    """``J^T ybar`` by ``yb.vjp``: one gradient per variable, in its dtype, on its device."""
    g, xs = call.numpy_function(_copies(views if views is not None else [_view(t) for t in tensors]))
    _, pullback = yb.vjp(g, *xs)
    grads = pullback(_cotangent(call, cts))
    return tuple(_to_torch(gr, t.dtype, t.device) for gr, t in zip(grads, _variables_only(call, tensors)))


class _Pullback(torch.autograd.Function):
    """``(tensors, ybar) -> J^T ybar`` (one gradient per variable), differentiable once more."""

    @staticmethod
    def forward(call: _Call, n: int, *args: torch.Tensor) -> tuple:
        tensors, cts = args[:n], args[n:]
        views = _arrays(call, tensors)
        call.last_views = views + [_view(c) for c in cts]
        return _pulled(call, tensors, cts, views)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        ctx.call, ctx.n, ctx.views = inputs[0], inputs[1], inputs[0].last_views
        ctx.save_for_backward(*inputs[2:])

    @staticmethod
    def backward(ctx: Any, *grad_grads: torch.Tensor) -> tuple:
        call, n, args = ctx.call, ctx.n, ctx.saved_tensors
        want_x, want_ct = any(ctx.needs_input_grad[2:2 + n]), any(ctx.needs_input_grad[2 + n:])
        if not (want_x or want_ct):
            return (None,) * (len(args) + 2)
        filled = _filled([t for t, v in zip(args, call.variable) if v], grad_grads)
        kind = "second" + ("x" if want_x else "") + ("y" if want_ct else "")
        parts = _Derivative.apply(call, kind, n, *args, *filled)
        along_x, along_ct = parts[:len(filled)], parts[len(filled):]
        return (None, None, *_per_tensor(call, along_x if want_x else (None,) * len(filled)),
                *(along_ct if want_ct else (None,) * (len(args) - n)))

    @staticmethod
    def jvp(ctx: Any, _call_tangent: Any, _n_tangent: Any, *tangents: torch.Tensor) -> tuple:
        primals = [torch.from_numpy(v) for v in ctx.views]
        return _Derivative.apply(ctx.call, "pullback", ctx.n, *primals, *_filled(primals, tangents))

    @staticmethod
    def vmap(info: Any, in_dims: tuple, *args: Any) -> tuple:
        return _batched(_Pullback, info, in_dims, *args)


def _filled(primals: list, tangents: tuple) -> list:
    return [torch.zeros_like(p) if t is None else t for p, t in zip(primals, tangents)]


class _Derivative(torch.autograd.Function):
    """A derivative computed in NumPy, as its own Function so that a batch of tangents or
    cotangents (``jacfwd``, ``jacrev``, ``hessian``) meets its ``vmap`` rule: the JVP of ``f``
    (``kind`` ``"f"``), of its pullback (``"pullback"``), or the pullback's own pullback
    (``"second"`` + ``"x"`` and/or ``"y"``: the parts along the variables and the cotangents).
    Differentiating it again (third order) raises."""

    @staticmethod
    def forward(call: _Call, kind: str, n: int, *args: torch.Tensor) -> Any:
        if kind == "f":
            g, xs = call.numpy_function(_copies([_view(t) for t in args[:n]]))
            _, tangent = yb.jvp(g, xs, _tangents_of(xs, _variables_only(call, args[n:])))
            return _outputs(call, tangent)
        if kind == "pullback":
            return _pullback_tangent(call, n, args)
        return _second_order(call, n, args, "x" in kind, "y" in kind)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        ctx.name = inputs[0].name

    @staticmethod
    def backward(ctx: Any, *_grads: torch.Tensor) -> tuple:
        raise RuntimeError(_third_order(ctx.name))

    @staticmethod
    def jvp(ctx: Any, *_tangents: Any) -> Any:
        raise RuntimeError(_third_order(ctx.name))

    @staticmethod
    def vmap(info: Any, in_dims: tuple, *args: Any) -> tuple:
        return _batched(_Derivative, info, in_dims, *args)


def _pullback_tangent(call: _Call, n: int, args: tuple) -> tuple:
    """``d(J^T ybar) = H_ybar xdot + J^T ybardot``: the Hessian part by ``yb.hvp`` of
    ``<ybar, f>``, the other by ``yb.vjp``. ``args``: tensors, cotangents and their tangents."""
    m = (len(args) - 2 * n) // 2
    tensors, cts, xdots_t, ct_dots = args[:n], args[n:n + m], args[n + m:2 * n + m], args[2 * n + m:]
    g, xs = call.numpy_function(_copies([_view(t) for t in tensors]))
    xdots = _tangents_of(xs, _variables_only(call, xdots_t))
    _, _, hessian_part = yb.hvp(contracted(g, _parts(call, _cotangent(call, cts)), call.multi), xs, xdots)
    _, pullback = yb.vjp(g, *xs)
    linear_part = pullback(_cotangent(call, ct_dots))
    return tuple(_to_torch(a + b, t.dtype, t.device)
                 for a, b, t in zip(hessian_part, linear_part, _variables_only(call, tensors)))


def _second_order(call: _Call, n: int, args: tuple, want_x: bool, want_ct: bool) -> tuple:
    """The pullback of ``J^T ybar`` along ``gbar``: the part along the variables (``H_ybar gbar``,
    by ``yb.hvp`` of ``h = <ybar, f>``) and along ``ybar`` (``J gbar``, by ``yb.jvp`` of ``f``);
    zeros for a part not wanted. ``args``: tensors, cotangents, ``gbar`` (one per variable)."""
    m = len(call.specs)
    tensors, cts, gbars_t = args[:n], args[n:n + m], args[n + m:]
    g, xs = call.numpy_function(_copies([_view(t) for t in tensors]))
    gbars = _tangents_of(xs, gbars_t)
    variables = _variables_only(call, tensors)
    along_x = tuple(torch.zeros_like(t) for t in variables)
    along_ct = tuple(torch.zeros_like(c) for c in cts)
    if want_ct:
        _, tangent = yb.jvp(g, xs, gbars)
        along_ct = tuple(_to_torch(p, c.dtype, c.device) for p, c in zip(_parts(call, tangent), cts))
    if want_x:
        h = contracted(g, _parts(call, _cotangent(call, cts)), call.multi)
        _, _, hessian_part = yb.hvp(h, xs, gbars)
        along_x = tuple(_to_torch(p, t.dtype, t.device) for p, t in zip(hessian_part, variables))
    return along_x + along_ct


def _third_order(name: str) -> str:
    return (f"yuebing.interop.torch.wrap({name}): third-order derivatives (and derivatives of a "
            "JVP: forward over forward, reverse over forward) are not supported; the second-order "
            "ones come from yb.hvp and yb.jvp and are not differentiable again. Use yb.hessian or "
            "yb.hvp on the NumPy function itself")


# --------------------------------------------------------------------------------------------
# The public function
# --------------------------------------------------------------------------------------------


def wrap(f: Callable) -> Callable:
    """PyTorch operation computing NumPy function ``f``, differentiated by yuebing.

    ``op = wrap(f)``; ``op(*args, **kwargs)`` converts each floating tensor among the positional
    arguments to a NumPy array (a copy, in the tensor's dtype; ``bfloat16`` as float32), calls
    ``f``, and returns its value as a tensor (a tuple of tensors if ``f`` returns a tuple) in
    the input tensors' promoted floating dtype, on their device. Non-tensor arguments and keyword
    arguments are passed through and not differentiated; integer tensors are passed as arrays and
    not differentiated. Gradients: first and second order by ``backward``/``torch.autograd.grad``
    (``create_graph=True``), ``torch.func.grad``/``vjp``/``jvp``/``jacrev``/``jacfwd``/``hessian``,
    and ``torch.func.vmap`` (by a loop over the batch). Third order raises ``RuntimeError``.
    """
    if not callable(f):
        raise TypeError(f"yuebing.interop.torch.wrap: expected a function, got {type(f).__name__}")

    @functools.wraps(f)
    def op(*args: Any, **kwargs: Any) -> Any:
        call = _Call(f, args, kwargs)
        tensors = [args[i] for i in call.positions]
        return _Op.apply(call, *tensors)

    return op

