"""Text read by library code on the way to its numbers: regular expressions (``re``) and ``eval`` of a
literal have zero derivative (rules/zero_derivative.py). numpy-ml builds its kernels from strings,
``KernelInitializer("RBFKernel(sigma=1.1)")``: ``re.findall`` splits the string and ``eval`` reads
each parameter; both were refused (``re.Pattern`` has no tangent type; ``eval`` has no rule), so a
Gaussian process built with a kernel named by a string could not be differentiated at all.

``eval`` of anything but a literal is refused by name: it may read the function's variables, whose
derivatives a zero-derivative ``eval`` would drop. And text made from float data in the same pass
is refused when parsed back (rules/float_text.py), by ``eval`` as by ``float``.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from yuebing.rules.core import RuleArgumentError

from .modes import check_every_mode, run_in_mode

SPEC = "Gaussian(width=1.3, shift=-0.4)"


def parameters_of(spec):
    """A kernel's parameters from its name, as numpy-ml's initialisers read them."""
    return {name: eval(value) for name, value in re.findall(r"(\w+)=([^,)]+)", spec)}


def kernel_named_by_a_string(x):
    p = parameters_of(SPEC)
    return np.sum(np.exp(-((x - p["shift"]) / p["width"]) ** 2))


def compiled_pattern_and_match(x):
    pattern = re.compile(r"scale=(?P<scale>[0-9.]+)")
    found = pattern.search("kernel(scale=2.5)")
    scale = float(found.group("scale")) if found else 1.0
    parts = re.split(r"\s*,\s*", "0.5, 1.5")
    return np.sum(np.sin(scale * x)) + float(parts[1]) * np.sum(x ** 2) + len(re.sub("a", "b", "abc"))


def literal_list(x):
    weights = np.array(eval("[1.0, 2.0, 3.0]", {}, {}))  # the namespaces a literal never reads
    return np.sum(weights * np.tanh(x))


@pytest.mark.parametrize("function", [kernel_named_by_a_string, compiled_pattern_and_match, literal_list])
def test_text_parsing_has_zero_derivative_in_every_mode(function):
    check_every_mode(function, np.array([0.3, -0.8, 1.1]))


def eval_reading_a_variable(x):
    y = x * 2.0
    return np.sum(eval("y"))


def eval_of_formatted_float_data(x):
    return np.sum(x * eval(str(float(x[0]))))


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_eval_of_an_expression_is_refused_by_name(mode):
    x = np.array([0.3, -0.8])
    with pytest.raises(RuleArgumentError, match=r"eval\('y'\): yuebing differentiates eval of a literal only"):
        run_in_mode(mode, eval_reading_a_variable, x)


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_eval_of_text_made_from_float_data_is_refused(mode):
    """The formatted float carried a derivative; parsed back by eval it would carry none."""
    with pytest.raises(RuleArgumentError, match="eval"):
        run_in_mode(mode, eval_of_formatted_float_data, np.array([0.3, -0.8]))
