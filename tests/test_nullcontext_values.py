"""``with contextlib.nullcontext(v) as t:`` hands ``v`` to ``t`` with its derivative
(``frontend/with_statements.py`` rewrites it to ``t = v``, what the manager does): floats, an
object holding them, a list, through ``enter_result=``, beside other managers, and bound to
nothing. Every case runs in reverse, forward and second order against central differences; an
argument written through the bound name is restored after each call."""
from __future__ import annotations

import contextlib
from contextlib import nullcontext

import numpy as np
import pytest


from .all_modes import check_all_modes
from .restored_arguments import check_restored


class Box:
    def __init__(self, v):
        self.v = v


def squared_through(x):
    with nullcontext(x * x) as y:
        z = y * 3.0 + x
    return z * y


def a_box_beside_another_manager(x):
    with contextlib.nullcontext(Box(x * 2.0)) as b, np.errstate(all="ignore"):
        r = b.v * x
    return r


def by_keyword_and_without_a_value(x):
    with nullcontext(enter_result=[x, 2.0 * x]) as pair:
        s = pair[0] * pair[1]
    with nullcontext() as nothing:
        s = s + (x if nothing is None else 0.0)
    with nullcontext(s * 2.0):  # (evaluated, bound to nothing)
        s = s * x
    return s


def an_exception_passes_through(x):
    y = x * x
    try:
        with nullcontext(y * 2.0) as z:
            y = z * x
            raise KeyError("out")
    except KeyError:
        y = y + x
    return y


@pytest.mark.parametrize("f", [squared_through, a_box_beside_another_manager, by_keyword_and_without_a_value,
                               an_exception_passes_through], ids=lambda f: f.__name__)
def test_every_mode_agrees_with_differences(f):
    check_all_modes(f, 0.7)


def written_through_the_bound_name(a):
    with nullcontext(a) as same:
        same[0] = same[0] * same[1]
    return a[0] * a[1] + np.sin(same[1])


def test_an_argument_written_through_the_bound_name_is_restored():
    check_restored(written_through_the_bound_name, np.array([0.8, 1.3]))


def shadowed(x):
    nullcontext = contextlib.suppress  # noqa: F841  (a local of that name is not contextlib's)
    with nullcontext(KeyError):
        y = x * x
    return y


def test_a_local_named_nullcontext_is_not_rewritten():
    check_all_modes(shadowed, 0.7)
