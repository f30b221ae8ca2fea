"""The normal form's temporaries and the names generated code binds stay apart
(ir/generated_names.py): a temporary never takes a reserved name, a generator's fresh names and
constants are never the function's variables, and every fixed name ending in a digit that
transform/ writes is in the registry. The functions below make the normal form reach for the
colliding names (a comprehension over ``_`` names its variable ``_v<n>``, which the reverse
templates pop operands into; 64 temporaries reach ``_f64``) and are checked in every mode."""
import dataclasses
import pathlib
import re

import numpy as np
import pytest

import yuebing as yb
from yuebing.ir.generated_names import RESERVED_NAMES, reserved
from yuebing.transform.generated_text import ConstantNames

from .modes import check_every_mode

TRANSFORM = pathlib.Path(yb.__file__).parent / "transform"
_QUOTED = re.compile(r"""["'](_[A-Za-z_]*\d+)["']""")
_MODULE_NAME = re.compile(r"^(_[A-Za-z_]*\d+) = ", re.M)
_FRESH_HINT = re.compile(r"""\.fresh\(["']([A-Za-z_]+)["']\)""")
_IDENTIFIER = re.compile(r"\b_[A-Za-z_]*\d+\b")


def _transform_sources():
    return [(p.name, p.read_text()) for p in sorted(TRANSFORM.glob("*.py"))]


def test_every_fixed_generated_name_ending_in_a_digit_is_reserved():
    unlisted = sorted({(name, file) for file, text in _transform_sources()
                       for name in _QUOTED.findall(text) + _MODULE_NAME.findall(text) if not reserved(name)})
    assert not unlisted, f"add these to ir/generated_names.py: {unlisted}"


def test_no_fresh_hint_makes_a_reserved_name():
    hints = {hint for _, text in _transform_sources() for hint in _FRESH_HINT.findall(text)}
    assert hints  # the scan still finds the generators' hints
    assert not [h for h in hints if any(reserved(f"_{h}{n}") for n in range(1, 500))]


def test_reserved_names_are_reserved():
    assert all(reserved(name) for name in RESERVED_NAMES)
    assert not any(reserved(f"_t{n}") for n in range(1, 1000))  # the normal form's fallback


class _Names(ConstantNames):
    def __init__(self, fn):
        self.fn = fn
        ConstantNames.__init__(self)


def test_fresh_names_and_constants_skip_the_functions_names():
    from yuebing.frontend.normalise import normalise

    fn = normalise(_many_g_comprehensions)
    names = set(_IDENTIFIER.findall(yb.show(_many_g_comprehensions, stage="ir")))
    assert len([n for n in names if n.startswith("_g")]) >= 2  # the comprehensions' variables
    generator = _Names(fn)
    fresh = [generator.fresh("g") for _ in range(60)]
    assert not set(fresh) & names
    fn.global_names.append("_len")  # a module global named as the constant for len would be
    assert _Names(fn).const(len) != "_len"


def _comprehension_over_underscore(x):
    ys = [x[0] * x[1] for _ in range(2)]
    a = x[0] * x[1]
    b = a * x[0]
    c = b * ys[0]
    return c * ys[1]


def _many_g_comprehensions(x):
    total = 0.0
    for k in range(3):
        zs = [g * 1.5 for g in x]
        ws = [g * g for g in zs]
        total = total + ws[k % 2] * x[1]
    return total


def _sixty_four_temporaries(x):
    s = x[0] * 0.5
    for _k in range(2):
        s = s + np.sin(x[1]) * np.cos(x[0]) + (x[0] + 1.0) * (x[1] - 2.0) + x[0] / (2.0 + x[1] * x[1])
        s = s + (lambda t: t * t)(s * 0.1) + np.exp(-x[0] * x[0]) * (x[1] + s * 0.01)
    return s + sum((lambda u: u * x[1])(v) for v in [x[0], x[1], s * 0.01])


@pytest.mark.parametrize("f", [_comprehension_over_underscore, _many_g_comprehensions, _sixty_four_temporaries])
def test_functions_reaching_for_generated_names(f):
    ir_names = set(_IDENTIFIER.findall(yb.show(f, stage="ir")))
    assert not [n for n in ir_names if reserved(n)]
    check_every_mode(lambda x: f(list(x)), np.array([0.7, 1.3]))


@dataclasses.dataclass
class D:  # its constant was named _D, forward mode's Dual
    a: float


@dataclasses.dataclass
class _NT:  # ... and _NT, NoTangent
    a: float


def _builds_classes_named_like_the_runtime(x):
    return x[0] * D(2.0).a * _NT(3.0).a + x[1] ** 2


def test_constants_never_take_the_runtimes_names():
    from .modes import check_every_mode

    check_every_mode(_builds_classes_named_like_the_runtime, np.array([0.5, 1.5, 0.2]))
