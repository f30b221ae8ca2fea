"""Helpers written as ordinary NumPy code, which the transforms differentiate like user code
(so they live outside the machinery of ``transform/``, whose functions forward mode refuses to
differentiate): the pairings of third order, ``np.vectorize``'s second order and its calls with several arguments."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..tangents import NoTangent


def vectorized_call(pyfunc: Callable, x: Any, probe: bool = False) -> np.ndarray:
    """``np.vectorize(pyfunc)(x)`` written with covered functions (what its second order runs);
    ``probe``: NumPy's first call on the first element, its result unused
    (``numpy_vectorize.probes_first``)."""
    xs = np.asarray(x)
    elements = xs.ravel().tolist()
    if probe and elements:
        pyfunc(elements[0])
    return np.array([pyfunc(v) for v in elements]).reshape(xs.shape)


def handed_whole(value: Any) -> bool:
    """Whether ``np.vectorize`` hands ``value`` whole to every call: an object that is neither an
    array, a sequence (``range`` is one) nor a number becomes a 0-d object array there (a frozen
    SciPy distribution, a callable, ``None``), the same object at each position."""
    if isinstance(value, (np.ndarray, np.generic, int, float, complex, str, bytes)):
        return False
    return np.ndim(value) == 0 and not hasattr(value, "__array__") and not hasattr(value, "__array_interface__")


def vectorized_call_of(pyfunc: Callable, excluded: frozenset, otypes: Any, probe: bool, *args: Any,
                       **kwargs: Any) -> np.ndarray:
    """``np.vectorize(pyfunc, excluded=excluded, otypes=otypes)(*args, **kwargs)`` written with
    covered functions (what every mode runs for several arguments): the arguments not excluded
    (nor handed whole) broadcast together, and ``pyfunc`` called on each position's elements,
    first once more on the first ones when NumPy does (``probe``: ``numpy_vectorize.probes_first``)."""
    varying = [i for i in range(len(args)) if i not in excluded and not handed_whole(args[i])]
    names = [k for k in kwargs if k not in excluded and not handed_whole(kwargs[k])]
    inputs = [np.asarray(args[i]) for i in varying] + [np.asarray(kwargs[k]) for k in names]
    shape = np.broadcast_shapes(*[np.shape(a) for a in inputs])  # (not broadcast_arrays: third order follows these)
    arrays = [np.broadcast_to(a, shape) for a in inputs]
    columns = [a.ravel().tolist() for a in arrays]
    values = []
    size = arrays[0].size if arrays else 1
    for j in ([0] if probe and arrays and size else []) + list(range(size)):
        call_args = list(args)
        call_kwargs = dict(kwargs)
        for n, i in enumerate(varying):
            call_args[i] = columns[n][j]
        for n, k in enumerate(names):
            call_kwargs[k] = columns[len(varying) + n][j]
        values.append(pyfunc(*call_args, **call_kwargs))
    if probe and arrays and size:
        values = values[1:]
    return np.asarray(values, dtype=otypes[0] if otypes else None).reshape(shape)


def drained(items: Any) -> list:
    """The items of an iterable read to its end, as a list (third order drains a lazy generator
    with it before a builtin that would: ``transform/plain_generators.py``)."""
    out = []
    for item in items:
        out.append(item)
    return out


def zeros_for_ints(t: Any) -> Any:
    """A list's tangent with its ints' ``NoTangent`` as 0.0 (differentiated like user code)."""
    if type(t) is list or type(t) is tuple:
        return [zeros_for_ints(e) for e in t]
    if t is NoTangent:
        return 0.0
    return t


def tangent_array(t: Any) -> Any:
    """A list's tangent as an array, its ints' tangents 0."""
    return np.asarray(zeros_for_ints(t))


def paired(cotangents: tuple, k: int, t: Any) -> Any:
    """``<cotangents[k], t>`` (0 where there is no cotangent or no tangent)."""
    if k >= len(cotangents):
        return 0.0
    c = cotangents[k]
    if c is None or t is NoTangent:
        return 0.0
    return np.sum(c * t)


# ``yb.custom_vjp``'s second order: its value and its cotangent map, as code the forward
# transform differentiates (``api/custom.py`` declares them with ``with_vjp``)

def custom_vjp_value(fwd: Callable, *xs: Any) -> Any:
    """The primal output of a custom_vjp function: the first result of its ``fwd``."""
    return fwd(*xs)[0]


def custom_vjp_cotangents(fwd: Callable, bwd: Callable, nondiff: tuple, g: Any, y: Any, *xs: Any) -> tuple:
    """One cotangent per argument of a custom_vjp function, from its ``bwd``: None for the
    arguments in ``nondiff`` (which ``bwd`` receives first, as in JAX)."""
    residuals = fwd(*xs)[1]
    fixed = [xs[i] for i in nondiff]
    given = list(bwd(*fixed, residuals, g))
    cotangents = []
    k = 0
    for i in range(len(xs)):
        if i in nondiff:
            cotangents.append(None)
        else:
            cotangents.append(given[k])
            k += 1
    return tuple(cotangents)


def custom_jvp_pair(jvp: Callable, nondiff_values: tuple, primals: tuple, *tangents: Any) -> Any:
    """A custom_jvp function's ``(output, output tangent)``: the tangent is linear in ``tangents``,
    so the reverse transform of this function with respect to them is the transpose that reverse
    mode needs."""
    return jvp(*nondiff_values, primals, tangents)
