"""``object.__setattr__(o, name, v)`` where ``name`` is a property of ``o``'s class runs the
property's setter, as Python does, in every mode (it was refused); a bound ``o.__setattr__`` or
``super().__setattr__`` reaching a property is refused with advice that works as printed (astropy's
models assign their parameters so, through a ``__setattr__`` of their own)."""
import numpy as np
import pytest

import yuebing as yb
from tests.modes import check_every_mode
from yuebing.rules.core import RuleArgumentError

X = np.array([0.5, 3.0])


class Scaled:
    def __init__(self, a):
        self.scale = a

    @property
    def scale(self):
        return self._scale

    @scale.setter
    def scale(self, v):
        self._scale = 2.0 * v


class Guarded(Scaled):
    """A class whose own __setattr__ hands every assignment to object's, as the advice says."""
    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)


class GuardedBySuper(Scaled):
    def __setattr__(self, name, value):
        super().__setattr__(name, value)


def through_object(x):
    m = Scaled(1.0)
    object.__setattr__(m, "scale", x[0] * x[1])
    return m.scale * x[1] + m._scale


def through_own_setattr(x):
    m = Guarded(x[1])
    m.scale = np.sin(x[0])
    return m.scale * x[1]


def through_super(x):
    return GuardedBySuper(x[0]).scale * x[1]


@pytest.mark.parametrize("f", [through_object, through_own_setattr], ids=lambda f: f.__name__)
def test_every_mode(f):
    check_every_mode(f, X)


def test_super_setattr_on_a_property_is_refused_with_advice():
    for run in (lambda: yb.grad(through_super)(X), lambda: yb.jvp(through_super, (X,), (X,)),
                lambda: yb.hvp(through_super, (X,), (X,))):
        with pytest.raises(RuleArgumentError, match=r"object.__setattr__\(self, 'scale', value\)"):
            run()
