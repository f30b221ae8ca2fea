"""Generator expressions kept for later inside a lambda or comprehension, walruses in them, and
lambdas capturing the variable of a comprehension run more than once per call that holds a
``:=`` (``frontend/genexpr_scopes.py``, ``frontend/closures.py``; the one in a loop:
``test_closures.py``).

Python compiles a lambda and a comprehension as functions: a generator expression made in one
reads that scope's variables when its items are made (every generator of
``[(v * t for v in xs) for t in ts]`` sees the last ``t``), and a walrus binds the variable of
the nearest function. Each case runs in reverse, forward and second order against central
differences and the plain call's value (``check_all_modes``); the argument is left as it was.
"""
from __future__ import annotations

import numpy as np
import pytest


from .all_modes import check_all_modes
from .restored_arguments import check_restored

G = 0.0


def kept_from_a_comprehension(x):
    gens = [(v * t for v in [1.0, x]) for t in [x, 2.0 * x, 0.5]]
    return sum(sum(g) for g in gens)  # (each generator reads the last t: 0.5)


def kept_from_nested_comprehensions(x):
    gens = [[(v * t * u for v in [x, 1.0]) for u in [x, 3.0]] for t in [2.0, x * x]]
    return sum(sum(g) for row in gens for g in row)


def kept_from_a_dict_comprehension(x):
    gens = {k: (v * t + k for v in [x, 1.0]) for k, t in enumerate([x, 2.0 * x])}
    return sum(sum(g) * (k + 1.0) for k, g in gens.items())


def kept_from_a_set_comprehension(x):
    sums = {sum(g) * t for t in [x, 2.0] for g in [(v * t for v in [x, 1.0])]}  # (a set holds numbers)
    return sum(sums)


def kept_from_a_comprehension_run_in_a_loop(x):
    gens = []
    for k in range(3):
        gens += [(v * t for v in [x, 1.0]) for t in [x, k * x + 1.0]]  # (fresh cells per run)
    return sum(sum(g) for g in gens)


def kept_from_a_drained_generator_expression(x):
    gens = list((v * t for v in [x, 2.0]) for t in [x, x * x])
    return sum(sum(g) for g in gens)


def stepped_after_the_comprehension_variable_moved(x):
    gens = [(v * t for v in [x, 1.0, 2.0]) for t in [x, 3.0]]
    first = next(gens[0])
    return first + sum(gens[0]) * x + sum(gens[1])


def made_by_a_lambda(x):
    scaled = lambda t: (v * t for v in [1.0, x])  # noqa: E731
    gens = [scaled(t) for t in [x, 3.0 * x]]
    return sum(sum(g) for g in gens)


def made_by_a_lambda_with_a_computed_default(x):
    scaled = lambda t, k=2.0 * x: (v * t * k for v in [1.0, x])  # noqa: E731
    x = x * 3.0  # (the default was computed before: 2.0 * the argument)
    return sum(scaled(x)) + sum(scaled(1.0, x))


def made_by_lambdas_of_a_comprehension(x):
    makers = [lambda: (v * t for v in [x, 1.0]) for t in [x, 2.0]]
    return sum(sum(make()) for make in makers)


def a_walrus_in_a_kept_generator_of_a_lambda(x):
    running = lambda t: (last := v * t for v in [1.0, x, 2.0])  # noqa: E731  (last: the lambda's)
    g = running(x)
    return next(g) + next(g) * x + sum(g)


def a_walrus_in_a_kept_generator_of_a_comprehension(x):
    gens = [(last := v * t for v in [x, 2.0]) for t in [x, 3.0]]
    total = sum(next(g) for g in gens)
    return total + last * x + sum(sum(g) for g in gens) + last


def a_walrus_in_the_comprehension_beside_a_kept_generator(x):
    gens = [(v * t for v in [x, 1.0]) for t in [x, 2.0 * x] if (seen := t) > 0.0]
    return sum(sum(g) for g in gens) * seen


def a_walrus_writing_a_global(x):
    global G
    gens = [(G := v * t for v in [x, 2.0]) for t in [x, 3.0]]
    total = sum(sum(g) for g in gens)
    return total + G * x


def a_lambda_reading_its_walrus_from_a_kept_generator(x):
    f = lambda t: ((w := t * 2.0), (v * w for v in [x, 1.0]))[1]  # noqa: E731
    return sum(f(x)) + sum(f(3.0))


def lambdas_of_an_inner_comprehension_with_a_walrus(x):
    rows = [[lambda t: a * t * b for a in [x, b]] for b in [1.0, x] if (kept := b) > 0.0]
    return sum(f(x) for row in rows for f in row) + kept


def kept_from_a_comprehension_of_a_class_body(x):
    class K:
        gens = [(v * t for v in [1.0, 2.0]) for t in [3.0, 4.0]]

        def total(self):
            return sum(sum(g) for g in self.gens)
    return K().total() * x


def kept_from_a_comprehension_of_a_method(x):
    class K:
        def make(self, ts):
            return [(v * t * x for v in [1.0, x]) for t in ts]
    return sum(sum(g) for g in K().make([x, 2.0]))


def made_by_a_lambda_in_a_lambda_with_a_default(x):
    f = lambda t, k=x * 2.0: (lambda: (v * t * k for v in [1.0, x]))  # noqa: E731
    return sum(f(x)()) + sum(f(1.0, 3.0)())


def kept_from_a_kept_generator_expression(x):
    outer = ((v * t for v in [1.0, x]) for t in [x, 2.0])
    gens = list(outer)
    return sum(sum(g) for g in gens)


CASES = [kept_from_a_comprehension_of_a_class_body, kept_from_a_comprehension_of_a_method,
         made_by_a_lambda_in_a_lambda_with_a_default, kept_from_a_kept_generator_expression,
         kept_from_a_comprehension, kept_from_nested_comprehensions, kept_from_a_dict_comprehension,
         kept_from_a_set_comprehension, kept_from_a_comprehension_run_in_a_loop,
         kept_from_a_drained_generator_expression, stepped_after_the_comprehension_variable_moved, made_by_a_lambda,
         made_by_a_lambda_with_a_computed_default, made_by_lambdas_of_a_comprehension,
         a_walrus_in_a_kept_generator_of_a_lambda, a_walrus_in_a_kept_generator_of_a_comprehension,
         a_walrus_in_the_comprehension_beside_a_kept_generator, a_walrus_writing_a_global,
         a_lambda_reading_its_walrus_from_a_kept_generator, lambdas_of_an_inner_comprehension_with_a_walrus]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_every_mode_agrees_with_differences(f):
    check_all_modes(f, 0.7)


def late_reads_of_an_argument_written_after(a):
    gens = [(a[i] * t for i in range(2)) for t in [a[0], 2.0]]
    a[0] = a[0] * a[1]  # (the generators read a[0] when they are consumed: after this write)
    return sum(sum(g) for g in gens) + a[0]


def test_an_argument_written_before_kept_generators_read_it_is_restored():
    check_restored(late_reads_of_an_argument_written_after, np.array([0.8, 1.3]))

