"""``dirichlet`` differentiated in ``alpha`` (docs/semantics.md, "Random draws").

NumPy draws ``D = G / sum(G)`` from standard gamma draws ``G_j`` of shape ``alpha_j`` (``RandomState``
always, ``Generator`` unless every alpha is below 0.1, where it breaks a stick with beta draws: that
case stays refused, as the other shape parameters are). Each ``G_j`` is differentiated at its fixed
quantile (``random_shapes.gamma_shape_slope``), so ``dD_i = (dG_i - D_i sum_j dG_j) / sum(G)``. The
gamma draws are recovered by replaying the draw on a copy of the generator in its pre-call state,
checked to give NumPy's values bit for bit. Second order differentiates ``random_shapes._dirichlet``.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..tangents import NoRData
from .core import Dual, primal, register_frule, register_rrule
from .numpy_creation import deliver_broadcast, dense
from ._ufunc_calls import Params
from . import random_shapes as shapes
from .numpy_random import (Generator, RandomState, _check_reproduced, _refuse_moving_parameters, _register,
                           _replica, _restore, _state, _zero_rule_pair, refused_when)
from .second_order import zero
from .util import fit_tangent, out_cotangent, output


def _gammas(fn: Callable, gen: Any, state: Any, alpha: Any, y: Any) -> tuple:
    """The standard gamma draws behind ``y``, their sums, and their slopes in ``alpha``."""
    g = _replica(gen, state).standard_gamma(np.asarray(alpha, dtype=float), np.shape(y))
    _check_reproduced(fn.__qualname__, np.array_equal(y, shapes.normalised(g)))
    total = np.sum(g, axis=-1, keepdims=True)
    return total, shapes.gamma_shape_slope(alpha, g)


def _dirichlet_rules(fn: Callable, owner_type: type) -> None:
    params = Params.of(fn)

    def draw(args: tuple) -> tuple:
        gen, alpha = primal(args[0]), primal(args[1])
        state = _state(gen)
        return gen, alpha, state, params.call(fn, args)

    @params
    def rrule(*args: Any) -> tuple:
        gen, alpha, state, y = draw(args)
        result = output(y)

        def pullback(dy: Any) -> tuple:
            total, slope = _gammas(fn, gen, state, alpha, y)
            c = np.asarray(out_cotangent(result, dy))
            # D = G / S: the cotangent of G is (c - sum_i c_i D_i) / S
            dg = (c - np.sum(c * y, axis=-1, keepdims=True)) / total
            rdatas = [NoRData] * (len(args) + 1)
            rdatas[2] = deliver_broadcast(args[1], dg * slope)
            _restore(gen, state)
            return tuple(rdatas)

        return result, pullback

    @params
    def frule(*args: Any) -> Dual:
        gen, alpha, state, y = draw(args)
        total, slope = _gammas(fn, gen, state, alpha, y)
        dg = slope * np.asarray(dense(args[1]), dtype=float)
        dy = (dg - y * np.sum(dg, axis=-1, keepdims=True)) / total
        return Dual(y, fit_tangent(dy, y))

    stick = refused_when(lambda args: shapes.stick_breaking(primal(args[0]), primal(args[1])), params,
                         (rrule, frule), _zero_rule_pair(fn))
    _register(fn, *stick, owner_type)


for _owner in (Generator, RandomState):  # second order: numpy_random declares the definition
    _dirichlet_rules(_owner.dirichlet, _owner)

# draws second order's definitions do not differentiate (dirichlet's stick-breaking, beta's Johnk
# method): refused when a parameter moves (forward mode, second order), NaN in reverse
for _refused in (shapes.dirichlet_refused, shapes.beta_refused):
    _refused_rules = _zero_rule_pair(_refused)
    register_rrule(_refused, _refused_rules[0])
    register_frule(_refused, _refused_rules[1])
    zero(_refused, check=_refuse_moving_parameters(_refused))
