"""``np.vectorize(pyfunc)``: the object carries ``pyfunc``'s derivative data.

A function given to ``np.vectorize`` is often a lambda over the function's own variables
(``np.vectorize(lambda v: np.sin(v * a))``). Its derivative data -- a closure's fdata holds one
box per captured variable, where cotangents accumulate; its tangent, the captured values'
tangents -- becomes the vectorize object's, in every mode. Calling the object is each runtime's
``vectorized`` handler (``transform/runtime.py``, ``forward_runtime.py``, ``second_order.py``): it
reads ``pyfunc``'s data back with ``pyfunc_fdata`` / ``pyfunc_tangent``, so the captured
variables get their derivatives through the closure, as for any call of ``pyfunc``.

An object made outside the differentiated function (passed in, or a global) has the structural
tangent of a ``vectorize`` instance instead: its ``pyfunc`` is then a constant, as it was made.

An object with a ``signature`` (``"(n),(n)->()"``) is called as ``signature_call_of``: NumPy's
loop over the dimensions before each argument's core dimensions, written in covered code, so that
every mode differentiates ``pyfunc`` on each position's core sub-arrays like user code.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from numpy.lib._function_base_impl import _parse_gufunc_signature, _parse_input_dimensions

from ..tangents import NoFData, NoRData, NoTangent
from ..tangents.types import MutableTangent, Tangent
from .core import CoDual, Dual, primal, register_frule, register_rrule
from .declare import nondifferentiable
from .differentiated import vectorized_call_of
from .second_order import _register as _second_order_rule


def _made_elsewhere(data: Any) -> bool:
    """Whether ``data`` is a vectorize instance's own structural tangent (the object was not
    made by the rules below, so it holds no ``pyfunc`` data)."""
    return isinstance(data, (Tangent, MutableTangent)) and getattr(data, "primal_type", None) is np.vectorize


def pyfunc_fdata(vec_fdata: Any) -> Any:
    """The fdata of the ``pyfunc`` of a vectorize object whose fdata is ``vec_fdata``."""
    return NoFData if _made_elsewhere(vec_fdata) else vec_fdata


def pyfunc_tangent(vec_tangent: Any) -> Any:
    """The tangent of the ``pyfunc`` of a vectorize object whose tangent is ``vec_tangent``."""
    return NoTangent if _made_elsewhere(vec_tangent) else vec_tangent


def _make(pyfunc: Any, rest: tuple, kwargs: dict) -> np.vectorize:
    return np.vectorize(pyfunc, *(primal(r) for r in rest), **{k: primal(v) for k, v in kwargs.items()})


def _vectorize_rrule(pyfunc: CoDual, *rest: Any, **kwargs: Any) -> tuple[CoDual, Callable]:
    """The object's fdata is ``pyfunc``'s (shared: a closure's boxes collect the cotangents of
    what it captures when the object is called), so nothing comes back through this pullback."""
    n = 1 + len(rest) + len(kwargs)
    return CoDual(_make(pyfunc.primal, rest, kwargs), pyfunc.fdata), lambda dy: (NoRData,) * (n + 1)


def _vectorize_frule(pyfunc: Dual, *rest: Any, **kwargs: Any) -> Dual:
    return Dual(_make(pyfunc.primal, rest, kwargs), pyfunc.tangent)


def _vectorize_second_order(f4: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """``(object, fdata, tangent, fdata tangent)``: ``pyfunc``'s own three."""
    pyfunc = args[0]
    vec = np.vectorize(pyfunc[0], *(a[0] for a in args[1:]), **{k: v[0] for k, v in kwargs.items()})
    none = (NoRData,) * (1 + len(args) + len(kwargs))
    return (vec, pyfunc[1], pyfunc[2], pyfunc[3]), lambda dy, dy_d: (none, none)


register_rrule(np.vectorize, _vectorize_rrule)
register_frule(np.vectorize, _vectorize_frule)
_second_order_rule((np.vectorize,), _vectorize_second_order)



# --------------------------------------------------------------------------------------------
# Calls of an object with a signature
# --------------------------------------------------------------------------------------------


def _loop_layout(signature: str, shapes: list) -> tuple:
    """``(loop shape, size, core shape of each input, core dimension names of each output, core
    dimension sizes)`` of a call with a signature on arguments of ``shapes``, with NumPy's errors
    (wrong number of arguments, too few dimensions, mismatched core sizes)."""
    input_dims, output_dims = _parse_gufunc_signature(signature.replace(" ", ""))
    if len(shapes) != len(input_dims):
        raise TypeError(f"wrong number of positional arguments: expected {len(input_dims)}, got {len(shapes)}")
    loop_shape, dim_sizes = _parse_input_dimensions([np.broadcast_to(0.0, s) for s in shapes], input_dims)
    cores = [tuple(dim_sizes[d] for d in dims) for dims in input_dims]
    return loop_shape, int(np.prod(loop_shape)), cores, output_dims, dim_sizes


def _output_shape(loop_shape: tuple, dims: tuple, dim_sizes: dict, values: list) -> tuple:
    """An output's shape: the loop shape, then its core dimensions (one not among the inputs' is
    read from the first result, as NumPy does; without results, NumPy's error)."""
    if values:
        first = np.shape(values[0])
        dim_sizes = {**dict(zip(dims, first[len(first) - len(dims):])), **dim_sizes}
    elif any(d not in dim_sizes for d in dims):
        raise ValueError("cannot call `vectorize` with a signature including new output dimensions on size 0 inputs")
    return tuple(loop_shape) + tuple(dim_sizes[d] for d in dims)


def _check_results(results: list, n_outputs: int, otypes: Any) -> None:
    """NumPy's errors: a wrong number of results, or no call at all without ``otypes``."""
    if not results and not otypes:
        raise ValueError("cannot call `vectorize` on size 0 inputs unless `otypes` is set")
    for result in results:
        got = len(result) if isinstance(result, tuple) else 1
        if got != n_outputs:
            raise ValueError(f"wrong number of outputs from pyfunc: expected {n_outputs}, got {got}")


def _output_dtype(otypes: Any, values: list, k: int) -> Any:
    """Output ``k``'s dtype: ``otypes[k]``, else the first result's (NumPy casts the others to it)."""
    return np.dtype(otypes[k]) if otypes else np.asarray(values[0]).dtype


nondifferentiable(_loop_layout, _output_shape, _check_results, _output_dtype)


def signature_call_of(pyfunc: Callable, signature: str, excluded: frozenset, otypes: Any, *args: Any,
                      **kwargs: Any) -> Any:
    """``np.vectorize(pyfunc, signature=..., excluded=..., otypes=...)(*args, **kwargs)`` written
    with covered functions: the arguments not excluded (the positional ones, then the keywords, as
    NumPy orders them) broadcast over their loop dimensions, ``pyfunc`` called on each position's
    core sub-arrays, and each output stacked over the loop."""
    varying = [i for i in range(len(args)) if i not in excluded]
    names = [k for k in kwargs if k not in excluded]
    inputs = [np.asarray(args[i]) for i in varying] + [np.asarray(kwargs[k]) for k in names]
    loop_shape, size, cores, output_dims, dim_sizes = _loop_layout(signature, [np.shape(a) for a in inputs])
    rows = [np.reshape(np.broadcast_to(a, tuple(loop_shape) + core), (size,) + core) for a, core in zip(inputs, cores)]
    results = []
    for j in range(size):
        call_args = list(args)
        call_kwargs = dict(kwargs)
        for n, i in enumerate(varying):
            call_args[i] = rows[n][j]
        for n, k in enumerate(names):
            call_kwargs[k] = rows[len(varying) + n][j]
        results.append(pyfunc(*call_args, **call_kwargs))
    _check_results(results, len(output_dims), otypes)
    if len(output_dims) == 1:
        return _stacked(results, loop_shape, output_dims[0], dim_sizes, otypes, 0)
    return tuple([_stacked([r[k] for r in results], loop_shape, output_dims[k], dim_sizes, otypes, k)
                  for k in range(len(output_dims))])


def _stacked(values: list, loop_shape: tuple, dims: tuple, dim_sizes: dict, otypes: Any, k: int) -> np.ndarray:
    """Output ``k``: the results at each loop position, as an array of the loop shape then the core's."""
    shape = _output_shape(loop_shape, dims, dim_sizes, values)
    dtype = _output_dtype(otypes, values, k)
    if not values:
        return np.zeros(shape, dtype=dtype)
    return np.reshape(np.asarray(values, dtype=dtype), shape)


def probes_first(vec: np.vectorize) -> bool:
    """Whether a call of ``vec`` calls ``pyfunc`` once more, on the first elements, before its loop:
    NumPy does so to learn the output types when ``vec`` has no ``otypes`` (and no ``cache``, and
    no signature), and a ``pyfunc`` with side effects (a list appended to, a counter) shows it. A
    plain call makes that call, so every mode makes it too, its result unused."""
    return vec.otypes is None and not vec.cache and vec.signature is None


def call_definition(vec: np.vectorize) -> tuple[Callable, tuple]:
    """The covered-code definition every mode runs for a call of ``vec`` with several arguments,
    keywords, excluded arguments or a signature, and the constants it takes before ``pyfunc``'s
    arguments (``definition(pyfunc, *constants, *args, **kwargs)``)."""
    if vec.signature is not None:
        return signature_call_of, (vec.signature, frozenset(vec.excluded), vec.otypes)
    return vectorized_call_of, (frozenset(vec.excluded), vec.otypes, probes_first(vec))


__all__ = ["call_definition", "probes_first", "pyfunc_fdata", "pyfunc_tangent", "signature_call_of"]
