"""JAX bridge: ``wrap(f)`` makes a NumPy function, differentiated by yuebing, a JAX function usable
under ``jax.jit``, ``jax.vmap`` and JAX's differentiation.

The value is a ``jax.pure_callback`` (JAX cannot look inside NumPy code), so its derivatives must
be given to JAX, and JAX takes only one of ``custom_vjp``/``custom_jvp`` per function:

* ``mode="vjp"`` (the default): ``jax.custom_vjp`` whose backward pass is ``yb.vjp`` in a
  callback. Reverse mode: ``jax.grad``, ``jax.vjp``, ``jax.jacrev``, ``jax.value_and_grad``. The
  backward pass is itself a ``custom_vjp`` function, whose own backward pass is one
  ``yb.hvp`` of ``<ybar, f>`` (along the inputs) and one ``yb.jvp`` of ``f`` (along ``ybar``),
  so reverse over reverse works: ``jax.jacrev(jax.grad(f))``, ``jax.grad`` of a gradient. Forward
  mode (``jax.jvp``, ``jax.jacfwd``, hence ``jax.hessian``) is refused by JAX itself ("can't apply
  forward-mode autodiff (jvp) to a custom_vjp function").
* ``mode="jvp"``: ``jax.custom_jvp`` whose tangent is ``yb.jvp`` in a callback. Forward mode:
  ``jax.jvp``, ``jax.jacfwd``, ``jax.linearize``. Reverse mode needs JAX to transpose the
  tangent, which a callback cannot be, so ``jax.grad`` fails in JAX ("Pure callbacks do not
  support transpose"); second-order forward mode raises a ``NotImplementedError`` (yuebing has
  no forward over forward).
* ``mode="jacobian"``: ``jax.custom_jvp`` whose tangent is ``J t`` written in JAX, with the dense
  Jacobian ``J`` from a callback (``yb.vjp`` per output element, or ``yb.jvp`` per input element
  when there are fewer). The tangent being linear in JAX's eyes, JAX transposes it: every
  transform works, ``jax.grad`` and ``jax.jvp`` alike. ``J`` has its own ``custom_jvp``, whose
  tangent contracts the dense second derivative (``yb.hessian`` of ``<e_i, f>`` per output
  element ``i``), so ``jax.hessian``, ``jacfwd(jacrev)``, ``jacrev(jacrev)`` work too. For scalar
  functions (losses) ``J`` is one gradient; for large inputs and outputs it is expensive.

Third order raises ``NotImplementedError``. Callbacks run with ``vmap_method="sequential"``. Uses yuebing's public API
only; JAX is imported here, never by ``import yuebing``.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

try:
    import jax
    import jax.numpy as jnp
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "yuebing.interop.jax needs JAX, which is not installed: pip install -e '.[interop]' "
        "(or pip install jax)"
    ) from error

import numpy as np

from .. import api as yb

from ._numpy import bound, check_output, contracted, like

__all__ = ["wrap"]

_WHERE = "yuebing.interop.jax.wrap"


def _is_array(x: Any) -> bool:
    """An argument JAX sees: a JAX or NumPy array, a NumPy number or a Python float."""
    if isinstance(x, np.generic):
        return x.dtype.kind in "iufc"
    return isinstance(x, (jax.Array, np.ndarray, float))


def _holds_array(x: Any) -> bool:
    if isinstance(x, (jax.Array, np.ndarray)):
        return True
    if isinstance(x, (list, tuple)):
        return any(_holds_array(v) for v in x)
    if isinstance(x, dict):
        return any(_holds_array(v) for v in x.values())
    return False


class _Call:
    """One call of a wrapped function: its array arguments (JAX arrays, NumPy arrays, floats;
    the floating ones are the variables), the rest held fixed, and the output's shapes."""

    def __init__(self, f: Callable, args: tuple, kwargs: dict, out_shape: Any, shapes: dict) -> None:
        self.f, self.kwargs, self.name = f, kwargs, getattr(f, "__name__", repr(f))
        self.positions = tuple(i for i, a in enumerate(args) if _is_array(a))
        self.template = [None if _is_array(a) else a for a in args]
        self.arrays = tuple(jnp.asarray(args[i]) for i in self.positions)
        self.variable = tuple(bool(jnp.issubdtype(a.dtype, jnp.floating)) for a in self.arrays)
        _check_arguments(self, args, kwargs)
        key = self._key()
        if key is None or key not in shapes:
            found = self._output_shapes(out_shape)
            if key is None:
                self.multi, self.out = found
                return
            if len(shapes) > 64:
                shapes.clear()
            shapes[key] = found
        self.multi, self.out = shapes[key]

    def _key(self) -> Any:
        """What the output's shape may depend on (``None`` if it cannot be a dict key)."""
        key = (tuple((a.shape, a.dtype) for a in self.arrays), self.positions, tuple(self.template),
               tuple(sorted(self.kwargs.items())))
        try:
            hash(key)
        except TypeError:
            return None
        return key

    def numpy_function(self, arrays: tuple) -> tuple[Callable, tuple]:
        """``(g, xs)``: ``g(*xs)`` is ``f`` with ``arrays`` in the array arguments' places, the
        floating ones (``xs``, NumPy copies) the variables and the others held fixed."""
        template, places, xs = list(self.template), [], []
        for position, array, variable in zip(self.positions, arrays, self.variable):
            array = np.array(array)  # a writable copy: f may mutate its arguments
            if variable:
                places.append(position)
                xs.append(array)
            else:
                template[position] = array
        return bound(self.f, template, tuple(places), self.kwargs), tuple(xs)

    def _output_shapes(self, out_shape: Any) -> tuple[bool, tuple]:
        """``(multi, shapes)``: from ``out_shape`` if given, else from one call of ``f`` on the
        arguments (on ones of their shapes and dtypes when they are traced, under ``jit``)."""
        if out_shape is not None:
            multi = isinstance(out_shape, tuple)
            shapes = out_shape if multi else (out_shape,)
            return multi, tuple(jax.ShapeDtypeStruct(s.shape, s.dtype) for s in shapes)
        concrete = not any(isinstance(a, jax.core.Tracer) for a in self.arrays)
        probes = tuple(np.asarray(a) if concrete else np.ones(a.shape, a.dtype) for a in self.arrays)
        g, xs = self.numpy_function(probes)
        try:
            with np.errstate(all="ignore"):
                value = g(*xs)
        except Exception as error:
            message = (f"{_WHERE}({self.name}): f failed when called on "
                       f"{'its arguments' if concrete else 'arrays of ones'} to find its output's shape ({error}); "
                       "pass out_shape=jax.ShapeDtypeStruct(shape, dtype) (a tuple of them for a tuple output)")
            try:
                replacement = type(error)(message)
            except Exception:  # an exception type that takes other arguments
                replacement = ValueError(message)
            raise replacement from error
        multi, parts = check_output(value, self.name, _WHERE)
        # as JAX would: outputs in the floating inputs' promoted dtype (float32 stays float32
        # even where NumPy promotes, e.g. float32 times an int64 array)
        floats = self.variables(self.arrays)
        dtype = jnp.result_type(*floats) if floats else None
        return multi, tuple(jax.ShapeDtypeStruct(np.shape(p), jax.dtypes.canonicalize_dtype(dtype or np.asarray(p).dtype))
                            for p in parts)

    def variables(self, values: tuple) -> tuple:
        return tuple(v for v, variable in zip(values, self.variable) if variable)

    def per_array(self, values: tuple) -> tuple:
        """``values`` (one per variable) spread over the array arguments, ``None`` (zero) for
        the fixed ones."""
        found = iter(values)
        return tuple(next(found) if variable else None for variable in self.variable)


def _check_arguments(call: _Call, args: tuple, kwargs: dict) -> None:
    """Refuse what would lose a derivative or cannot be traced: arrays inside containers or in
    keyword arguments (JAX would not see them), complex arrays (not supported here)."""
    for i, a in enumerate(args):
        if not _is_array(a) and _holds_array(a):
            raise TypeError(f"{_WHERE}({call.name}): argument {i} is a {type(a).__name__} holding arrays; "
                            "JAX would not see them. Pass each array as its own positional argument")
    for i, a in zip(call.positions, call.arrays):
        if jnp.issubdtype(a.dtype, jnp.complexfloating):
            raise TypeError(f"{_WHERE}({call.name}): argument {i} is complex; only real floating arrays are "
                            "differentiated (pass real and imaginary parts)")
    for key, value in kwargs.items():
        if _holds_array(value):
            raise TypeError(f"{_WHERE}({call.name}): keyword argument {key!r} holds an array; keyword "
                            "arguments are held fixed and must be static. Pass it positionally")


def _callback(host: Callable, shapes: Any, *args: Any) -> Any:
    return jax.pure_callback(host, shapes, *args, vmap_method="sequential")


def _cast(values: tuple, shapes: tuple) -> tuple:
    return tuple(np.asarray(v, dtype=s.dtype).reshape(s.shape) for v, s in zip(values, shapes))


# --------------------------------------------------------------------------------------------
# The computations on the host (NumPy), each run by a callback
# --------------------------------------------------------------------------------------------


def _value_host(call: _Call, *arrays: Any) -> tuple:
    g, xs = call.numpy_function(arrays)
    multi, parts = check_output(g(*xs), call.name, _WHERE)
    return _cast(parts, call.out)


def _cotangent(call: _Call, value: Any, cts: tuple) -> Any:
    """The cotangents from JAX as the cotangent of ``f``'s value."""
    parts = tuple(like(v, c) for v, c in zip(value if call.multi else (value,), cts))
    return parts if call.multi else parts[0]


def _pullback_host(call: _Call, n: int, *args: Any) -> tuple:
    g, xs = call.numpy_function(args[:n])
    value, pullback = yb.vjp(g, *xs)
    grads = pullback(_cotangent(call, value, args[n:]))
    return _cast(grads, _variable_shapes(call))


def _second_host(call: _Call, n: int, *args: Any) -> tuple:
    """The pullback of ``J^T ybar`` along ``gbar``: ``H_ybar gbar`` (by ``yb.hvp`` of
    ``<ybar, f>``) for the variables, ``J gbar`` (by ``yb.jvp``) for ``ybar``."""
    m = len(call.out)
    g, xs = call.numpy_function(args[:n])
    cts, gbars = args[n:n + m], tuple(like(x, t) for x, t in zip(xs, args[n + m:]))
    value, tangent = yb.jvp(g, xs, gbars)
    _, _, along_x = yb.hvp(contracted(g, tuple(np.asarray(c) for c in cts), call.multi), xs, gbars)
    return _cast(along_x, _variable_shapes(call)) + _cast(tangent if call.multi else (tangent,), call.out)


def _jvp_host(call: _Call, n: int, *args: Any) -> tuple:
    g, xs = call.numpy_function(args[:n])
    _, tangent = yb.jvp(g, xs, tuple(like(x, t) for x, t in zip(xs, args[n:])))
    return _cast(tangent if call.multi else (tangent,), call.out)


def _variable_shapes(call: _Call) -> tuple:
    return tuple(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in call.variables(call.arrays))


def _value(call: _Call, arrays: tuple) -> Any:
    parts = _callback(functools.partial(_value_host, call), call.out, *arrays)
    return tuple(parts) if call.multi else parts[0]


# --------------------------------------------------------------------------------------------
# mode="vjp": custom_vjp, its backward pass a custom_vjp too (second order by reverse over reverse)
# --------------------------------------------------------------------------------------------


def _vjp_function(call: _Call) -> Callable:
    @jax.custom_vjp
    def op(*arrays):
        return _value(call, arrays)

    def fwd(*arrays):
        # op itself, not its callback: under an outer differentiation (reverse over reverse)
        # the value is differentiated by op's own rule
        return op(*arrays), arrays

    def bwd(arrays, ct):
        cts = tuple(ct) if call.multi else (ct,)
        return call.per_array(_pullback_function(call)(*arrays, *cts))

    op.defvjp(fwd, bwd)
    return op


def _pullback_function(call: _Call) -> Callable:
    n = len(call.arrays)

    @jax.custom_vjp
    def pullback(*args):
        return tuple(_callback(functools.partial(_pullback_host, call, n), _variable_shapes(call), *args))

    def fwd(*args):
        return pullback(*args), args

    def bwd(args, gbars):
        parts = _second_function(call, n)(*args, *gbars)
        k = len(gbars)
        return call.per_array(parts[:k]) + tuple(parts[k:])

    pullback.defvjp(fwd, bwd)
    return pullback


def _second_function(call: _Call, n: int) -> Callable:
    """The pullback's pullback (a callback), as a ``custom_vjp`` whose own backward raises."""
    @jax.custom_vjp
    def second(*args):
        return tuple(_callback(functools.partial(_second_host, call, n), _variable_shapes(call) + call.out, *args))

    def fwd(*args):
        return second(*args), None

    def bwd(_res, _cts):
        raise NotImplementedError(_refusal(call.name, "third-order derivatives"))

    second.defvjp(fwd, bwd)
    return second


def _refusal(name: str, what: str) -> str:
    return (f"{_WHERE}({name}): {what} are not supported (yuebing's second-order derivatives, yb.hvp "
            "and yb.jvp, run in a callback JAX cannot differentiate). Use yb.hessian or yb.hvp on the "
            "NumPy function itself")


# --------------------------------------------------------------------------------------------
# mode="jvp": custom_jvp (forward mode only)
# --------------------------------------------------------------------------------------------


def _jvp_function(call: _Call) -> Callable:
    n = len(call.arrays)

    @jax.custom_jvp
    def op(*arrays):
        return _value(call, arrays)

    @op.defjvp
    def op_jvp(primals, tangents):
        tangent = _tangent_function(call, n)(*primals, *call.variables(tangents))
        return op(*primals), tuple(tangent) if call.multi else tangent[0]

    return op


def _tangent_function(call: _Call, n: int) -> Callable:
    @jax.custom_jvp
    def tangent(*args):
        return tuple(_callback(functools.partial(_jvp_host, call, n), call.out, *args))

    @tangent.defjvp
    def tangent_jvp(_primals, _tangents):
        raise NotImplementedError(_refusal(call.name, "second-order derivatives in mode='jvp' (forward over forward)"))

    return tangent


# --------------------------------------------------------------------------------------------
# mode="jacobian": custom_jvp whose tangent is J t, J a callback with its own custom_jvp (every
# transform JAX has, second order included, for the price of dense Jacobians and Hessians)
# --------------------------------------------------------------------------------------------


def _basis(call: _Call, value: Any, part: int, index: int) -> Any:
    """The cotangent of ``f``'s value that is 1 at element ``index`` of output ``part``."""
    parts = []
    for p, v in enumerate(value if call.multi else (value,)):
        e = np.zeros(np.shape(v))
        if p == part:
            e.flat[index] = 1.0
        parts.append(like(v, e))
    return tuple(parts) if call.multi else parts[0]


def _jacobian_host(call: _Call, n: int, *arrays: Any) -> tuple:
    """Blocks ``J[p][j]`` (``out_p.shape + x_j.shape``), flattened in that order: one ``yb.vjp``
    per output element, or one ``yb.jvp`` per input element when there are fewer of those."""
    g, xs = call.numpy_function(arrays)
    m, k = len(call.out), len(xs)
    blocks = [[np.zeros(o.shape + x.shape) for x in xs] for o in call.out]
    if sum(int(np.size(o)) for o in call.out) <= sum(x.size for x in xs):
        value = g(*xs)
        for p in range(m):
            for i in range(int(np.prod(call.out[p].shape))):
                _, pullback = yb.vjp(g, *xs)
                for j, gj in enumerate(pullback(_basis(call, value, p, i))):
                    blocks[p][j].reshape((-1,) + xs[j].shape)[i] = gj
    else:
        for j in range(k):
            for i in range(xs[j].size):
                ts = [np.zeros_like(x) for x in xs]
                ts[j].flat[i] = 1.0
                _, tangent = yb.jvp(g, xs, tuple(ts))
                for p, tp in enumerate(tangent if call.multi else (tangent,)):
                    blocks[p][j].reshape(call.out[p].shape + (-1,))[..., i] = tp
    return _cast([b for row in blocks for b in row], _block_shapes(call, 1))


def _hessian_host(call: _Call, n: int, *arrays: Any) -> tuple:
    """Blocks ``D2[p][j][l]`` (``out_p.shape + x_j.shape + x_l.shape``), flattened: the Hessian
    of ``<e_i, f>`` (``yb.hessian``) for every output element ``i``."""
    g, xs = call.numpy_function(arrays)
    # in float64: yb.hessian refuses float32 arguments (it builds float64 directions for them)
    xs = tuple(x.astype(np.float64) for x in xs)
    value, k = g(*xs), len(xs)
    blocks = [[[np.zeros(o.shape + xs[j].shape + xs[l].shape) for l in range(k)] for j in range(k)] for o in call.out]
    for p, o in enumerate(call.out):
        for i in range(int(np.prod(o.shape))):
            cts = _basis(call, value, p, i)
            h = contracted(g, cts if call.multi else (cts,), call.multi)
            hessian = yb.hessian(h, argnums=tuple(range(k)))(*xs)
            for j in range(k):
                for l in range(k):
                    blocks[p][j][l].reshape((-1,) + xs[j].shape + xs[l].shape)[i] = hessian[j][l]
    return _cast([b for row in blocks for col in row for b in col], _block_shapes(call, 2))


def _block_shapes(call: _Call, order: int) -> tuple:
    xs = _variable_shapes(call)
    if order == 1:
        return tuple(jax.ShapeDtypeStruct(o.shape + x.shape, o.dtype) for o in call.out for x in xs)
    return tuple(jax.ShapeDtypeStruct(o.shape + a.shape + b.shape, o.dtype) for o in call.out for a in xs for b in xs)


def _contract(block: Any, t: Any) -> Any:
    return jnp.tensordot(block, t, axes=t.ndim)


def _jacobian_function(call: _Call) -> Callable:
    n = len(call.arrays)
    jacobian = _jacobian_op(call, n)

    @jax.custom_jvp
    def op(*arrays):
        return _value(call, arrays)

    @op.defjvp
    def op_jvp(primals, tangents):
        blocks, ts, k = jacobian(*primals), call.variables(tangents), len(_variable_shapes(call))
        parts = tuple(sum(_contract(blocks[p * k + j], ts[j]) for j in range(k)) if k else jnp.zeros(o.shape, o.dtype)
                      for p, o in enumerate(call.out))
        return op(*primals), parts if call.multi else parts[0]

    return op


def _jacobian_op(call: _Call, n: int) -> Callable:
    @jax.custom_jvp
    def jacobian(*arrays):
        return tuple(_callback(functools.partial(_jacobian_host, call, n), _block_shapes(call, 1), *arrays))

    @jacobian.defjvp
    def jacobian_jvp(primals, tangents):
        blocks, ts, k = _hessian_op(call, n)(*primals), call.variables(tangents), len(_variable_shapes(call))
        parts = tuple(sum(_contract(blocks[(p * k + j) * k + l], ts[l]) for l in range(k))
                      for p in range(len(call.out)) for j in range(k))
        return jacobian(*primals), parts

    return jacobian


def _hessian_op(call: _Call, n: int) -> Callable:
    @jax.custom_jvp
    def hessian(*arrays):
        return tuple(_callback(functools.partial(_hessian_host, call, n), _block_shapes(call, 2), *arrays))

    @hessian.defjvp
    def hessian_jvp(_primals, _tangents):
        raise NotImplementedError(_refusal(call.name, "third-order derivatives"))

    return hessian


# --------------------------------------------------------------------------------------------
# The public function
# --------------------------------------------------------------------------------------------


def wrap(f: Callable, mode: str = "vjp", out_shape: Any = None) -> Callable:
    """JAX function computing NumPy function ``f``, differentiated by yuebing.

    ``op = wrap(f)``; ``op(*args, **kwargs)`` passes each array argument (JAX or NumPy array,
    Python float) to ``f`` as a NumPy array (through ``jax.pure_callback``, so ``op`` works under
    ``jax.jit`` and ``jax.vmap``) and returns ``f``'s value as a JAX array (a tuple for a tuple
    output). The floating arrays are differentiated; integer arrays, other positional arguments
    and keyword arguments are held fixed (keyword arguments must not be arrays).

    ``mode="vjp"`` (default) gives reverse mode and reverse over reverse (``jax.grad``,
    ``jax.jacrev``, ``jax.jacrev(jax.grad(op))`` for a Hessian) at the cost of one ``yb.vjp``
    per pullback; ``mode="jvp"`` gives forward mode (``jax.jvp``, ``jax.jacfwd``) at one
    ``yb.jvp`` per tangent, but not ``jax.grad``; ``mode="jacobian"`` gives every transform and
    ``jax.hessian``, through dense Jacobians and second derivatives (cheap for scalar outputs
    and small inputs). See the module docstring.

    ``out_shape``: a ``jax.ShapeDtypeStruct`` (a tuple of them for a tuple output). Without it
    ``f`` is called once more on the first call with given argument shapes and fixed arguments,
    to find its output's shape (on arrays of ones under ``jit``, where the arguments are traced).
    """
    if not callable(f):
        raise TypeError(f"{_WHERE}: expected a function, got {type(f).__name__}")
    makers = {"vjp": _vjp_function, "jvp": _jvp_function, "jacobian": _jacobian_function}
    if mode not in makers:
        raise ValueError(f"{_WHERE}: mode must be 'vjp' (reverse mode, the default), 'jvp' (forward mode) or "
                         f"'jacobian' (every transform, by dense Jacobians), got {mode!r}")
    make = makers[mode]
    shapes: dict = {}  # output shapes by argument shapes and fixed arguments: f is probed once

    @functools.wraps(f)
    def op(*args: Any, **kwargs: Any) -> Any:
        call = _Call(f, args, kwargs, out_shape, shapes)
        return make(call)(*call.arrays)

    return op
