"""Frozen dataclasses held in containers (a model's configurations in a list or dict).

First order follows them everywhere. Second order follows them in a tuple, and refuses them by
name when they are read out of a list or dict: the Hessian through such a read came out zero
(a silent wrong answer, found by a probe of user-style models). Checked against central
differences (tests/modes.py)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import yuebing as yb
from tests.modes import check_every_mode


@dataclasses.dataclass(frozen=True)
class Config:
    rate: float
    scale: float


@dataclasses.dataclass
class MutableConfig:
    rate: float
    scale: float


def _in_list(x):
    configs = [Config(x[0], x[1]), Config(x[2], x[3])]
    return sum(c.rate * c.scale ** 2 for c in configs)


def _in_dict(x):
    configs = {"a": Config(x[0], x[1]), "b": dataclasses.replace(Config(x[2], x[1]), scale=x[3])}
    return sum(c.rate * c.scale ** 2 for c in configs.values())


def _read_twice_from_list(x):
    c = Config(x[0], x[1])
    cs = [c, c]
    return cs[0].rate * cs[0].scale ** 2 + cs[1].rate * cs[1].scale


def _in_tuple(x):
    configs = (Config(x[0], x[1]), Config(x[2], x[3]))
    return sum(c.rate * c.scale ** 2 for c in configs)


def _mutable_in_list(x):
    configs = [MutableConfig(x[0], x[1]), MutableConfig(x[2], x[3])]
    return sum(c.rate * c.scale ** 2 for c in configs)


X = np.array([0.3, 0.8, 1.3, 0.55])
REFUSED = [_in_list, _in_dict, _read_twice_from_list]


@pytest.mark.parametrize("f", REFUSED, ids=lambda f: f.__name__.strip("_"))
def test_list_or_dict_first_order_and_refused_second_order(f):
    check_every_mode(f, X, second_order=False)
    with pytest.raises(yb.SecondOrderError, match="immutable object .a frozen dataclass Config. read out of a list or dict"):
        yb.hessian(f)(X.copy())


@pytest.mark.parametrize("f", [_in_tuple, _mutable_in_list], ids=lambda f: f.__name__.strip("_"))
def test_the_advice_works_in_every_mode(f):
    check_every_mode(f, X)
