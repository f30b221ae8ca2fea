"""A derivative-free value written on a user class (an instance counter ``Particle.count += 1`` in
``__init__``, a registry of labels) is written as a plain call writes it: the function is
differentiated in every mode against central differences, and after a gradient, a JVP or an
HVP the class holds what one plain call leaves (outside state, once per call). A value carrying
float data written on a class is read back with its derivative."""
import numpy as np
import pytest

import yuebing as yb

from .modes import check_every_mode

X = np.array([0.7, 0.35, 1.2])


class Particle:
    count = 0
    kinds = ()

    def __init__(self, v, kind="light"):
        self.v = v
        Particle.count += 1
        Particle.kinds = Particle.kinds + (kind,)


def _counted(x):
    Particle.count, Particle.kinds = 0, ()  # (a function of x: the counts start again each call)
    ps = [Particle(x), Particle(x * 2.0, "heavy")]
    return np.sum(ps[0].v * ps[1].v) * (1.0 + 0.1 * len(Particle.kinds))


def test_a_counter_on_a_class_is_differentiated_in_every_mode():
    check_every_mode(_counted, X)


@pytest.mark.parametrize("run", [lambda: yb.grad(_counted)(X), lambda: yb.jvp(_counted, (X,), (X,)),
                                 lambda: yb.hvp(_counted, (X,), (X,))], ids=["grad", "jvp", "hvp"])
def test_the_class_is_left_as_a_plain_call_leaves_it(run):
    _counted(X)
    plain = (Particle.count, Particle.kinds)
    Particle.count, Particle.kinds = 5, ("before",)
    run()
    assert (Particle.count, Particle.kinds) == plain == (2, ("light", "heavy"))


class Scaled:
    scale = 1.0


def _scaled(x):
    Scaled.scale = x[0]
    return np.sum(x) * Scaled.scale + Scaled().scale


def test_a_float_carrying_value_on_a_class_is_differentiated_in_every_mode():
    check_every_mode(_scaled, X)  # (rules/local_classes.class_write_rrule; more: test_local_classes_decorators.py)
