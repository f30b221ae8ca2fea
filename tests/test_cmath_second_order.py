"""cmath.polar in second order (declared by its two parts, ``abs`` and ``cmath.phase``): every
mode against central differences, its rule through ``check_second_order``, third order through
the refusal of third order by name, and each part of its pair used alone (the other part's cotangent is none)."""
from __future__ import annotations

import cmath

import numpy as np
import pytest

from .modes import check_every_mode
from yuebing.testing.second_order import check_second_order
from yuebing.testing.third_order import check_third_order


def both_parts(x):
    r, phi = cmath.polar(complex(x[0], x[1]) ** 2 + 0.5j)
    return r * phi + r ** 2


def modulus_only(x):
    return cmath.polar(complex(x[0] * x[1], x[1] - 0.3))[0] ** 3


def phase_only(x):
    return np.sin(cmath.polar(complex(x[0], x[1] ** 2 + 0.2))[1]) * x[0]


def of_a_real(x):
    r, phi = cmath.polar(x[0] * x[1] - 2.0)  # negative real: phase pi, no derivative in x
    return r * r + phi * x[0]


@pytest.mark.parametrize("f", [both_parts, modulus_only, phase_only, of_a_real])
@pytest.mark.parametrize("x", [np.array([0.7, -0.4]), np.array([-1.3, 0.9])])
def test_polar_every_mode(f, x):
    check_every_mode(f, x)


@pytest.mark.parametrize("z", [0.8 - 0.6j, -1.1 + 0.3j])
def test_polar_rule_second_order(z):
    check_second_order(cmath.polar, z)


def test_polar_phase_third_order():
    # cmath.phase and polar have third-order forward definitions (third order followed them: 4eb5542)
    check_third_order(both_parts, np.array([0.7, -0.4]))
