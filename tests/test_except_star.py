"""``try``/``except*`` (``frontend/try_star.py``): the rewritten plain ``try`` behaves as CPython's
``except*`` (which handlers run with which subgroup, what is re-raised, leftover and combined
groups, contexts), and is differentiated in every mode."""
import numpy as np
import pytest

import yuebing as yb

from .all_modes import check_all_modes
from .syntax_rewriting import rewritten


def shape(e):
    """An exception's structure: types, messages, arguments, nesting."""
    if e is None:
        return None
    if isinstance(e, BaseExceptionGroup):
        return (type(e).__name__, e.message, [shape(c) for c in e.exceptions])
    return (type(e).__name__, e.args)


def outcome(fn, raised):
    """What ``fn(raise_it, log)`` logs and raises, its leaves told by position in ``raised``."""
    log = []

    def raise_it():
        raise raised

    try:
        fn(raise_it, log)
    except BaseException as error:  # noqa: BLE001 - what is raised is what is compared
        leaves = [leaf for leaf in _leaves(error)]
        originals = [leaf for leaf in _leaves(raised)]
        where = [next((i for i, o in enumerate(originals) if o is leaf), None) for leaf in leaves]
        return log, shape(error), error is raised, where, shape(error.__context__)
    return log, None


def _leaves(e):
    if isinstance(e, BaseExceptionGroup):
        return [leaf for child in e.exceptions for leaf in _leaves(child)]
    return [e]


def handles_values_and_types(raise_it, log):
    try:
        raise_it()
    except* ValueError as e:
        log.append(("values", shape(e)))
    except* (TypeError, KeyError) as e:
        log.append(("types or keys", shape(e)))
    log.append("after")


def reraises_bare(raise_it, log):
    try:
        raise_it()
    except* ValueError:
        log.append("values")
        raise
    except* TypeError:
        log.append("types")


def raises_the_subgroup(raise_it, log):
    try:
        raise_it()
    except* ValueError as e:
        raise e


def raises_new(raise_it, log):
    try:
        raise_it()
    except* ValueError:
        raise KeyError("new")
    except* TypeError:
        log.append("types")
        raise


def nested_handler_reraises_its_own(raise_it, log):
    try:
        raise_it()
    except* ValueError:
        try:
            {}["missing"]
        except KeyError:
            log.append("inner")
            raise  # the KeyError, not the subgroup


def nested_except_star(raise_it, log):
    try:
        raise_it()
    except* ValueError:
        try:
            raise ExceptionGroup("inner", [TypeError(9), KeyError(8)])
        except* TypeError:
            log.append("inner")
            raise


def else_and_finally(raise_it, log):
    try:
        if log is not None:
            log.append("body")
    except* ValueError:
        log.append("handler")
    else:
        log.append("else")
    finally:
        log.append("finally")
    try:
        raise_it()
    except* ValueError:
        log.append("handler")
    else:
        log.append("else")
    finally:
        log.append("finally")


def name_is_unbound_after(raise_it, log):
    try:
        raise_it()
    except* ValueError as e:
        log.append(type(e).__name__)
    try:
        e  # noqa: B018
    except NameError:
        log.append("unbound")


def catches_a_group_type(raise_it, log):
    try:
        raise_it()
    except* ExceptionGroup:
        log.append("never")


HANDLERS = [handles_values_and_types, reraises_bare, raises_the_subgroup, raises_new, nested_handler_reraises_its_own,
            nested_except_star, else_and_finally, name_is_unbound_after, catches_a_group_type]

RAISED = {
    "naked value": lambda: ValueError(1),
    "naked key": lambda: KeyError("k"),
    "naked other": lambda: ZeroDivisionError("z"),
    "group": lambda: ExceptionGroup("g", [ValueError(1), TypeError(2), ZeroDivisionError(3)]),
    "values only": lambda: ExceptionGroup("g", [ValueError(1), ValueError(2)]),
    "nested": lambda: ExceptionGroup("outer", [ValueError(1), ExceptionGroup("inner", [TypeError(2), ValueError(3)])]),
    "base group": lambda: BaseExceptionGroup("b", [KeyboardInterrupt(), ValueError(4)]),
}


@pytest.mark.parametrize("raised", sorted(RAISED))
@pytest.mark.parametrize("fn", HANDLERS, ids=[f.__name__ for f in HANDLERS])
def test_rewritten_except_star_behaves_as_python(fn, raised):
    make = RAISED[raised]
    assert outcome(rewritten(fn), make()) == outcome(fn, make())


def branchy_groups(x):
    y = x * x
    try:
        if x > 0.5:
            raise ExceptionGroup("bad", [ValueError(1), KeyError("k")])
        y = y + 1.0
    except* ValueError as group:
        y = y * np.sin(x) + len(group.exceptions)
    except* KeyError:
        y = y + 2.0 * x
    return y


def leftover_caught_outside(x):
    y = np.exp(x)
    try:
        try:
            y = y * x
            raise ExceptionGroup("two", [ValueError(1), TypeError(2)])
        except* ValueError:
            y = y + x ** 3
    except ExceptionGroup as left:
        y = y * len(left.exceptions) + np.cos(x)
    return y


def naked_error_from_a_call(x):
    total = 0.0
    for v in [x, 2.0 * x, -x]:
        try:
            total += np.sqrt(v) if v > 0 else _fail(v)
        except* ArithmeticError:
            total += v * v
        finally:
            total += 0.5 * v
    return total


def _fail(v):
    raise ArithmeticError(v)


@pytest.mark.parametrize("f", [branchy_groups, leftover_caught_outside, naked_error_from_a_call])
@pytest.mark.parametrize("x", [0.3, 0.7])
def test_except_star_in_every_mode(f, x):
    assert rewritten(f)(x) == f(x)
    check_all_modes(f, x)


LEAF_TYPES = ["ValueError", "TypeError", "KeyError", "ZeroDivisionError", "OSError"]
BEHAVIOURS = ["log.append({k})", "raise", "raise e", "raise RuntimeError({k})", "raise ExceptionGroup('h', [KeyError({k})])"]


def _random_group(rng, depth=0):
    """A random exception: a leaf, or a group (possibly nested) of random leaves."""
    if depth > 1 or rng.random() < 0.3:
        kind = LEAF_TYPES[rng.integers(len(LEAF_TYPES))]
        return f"{kind}({int(rng.integers(100))})"
    children = [_random_group(rng, depth + 1) for _ in range(int(rng.integers(1, 4)))]
    return f"ExceptionGroup('g{depth}', [{', '.join(children)}])"


def _random_function(rng, k):
    """Source of a function with random except* clauses and handler behaviours."""
    lines = [f"def f{k}(raise_it, log):", "    try:", "        raise_it()"]
    for clause in range(int(rng.integers(1, 4))):
        kinds = sorted({LEAF_TYPES[i] for i in rng.integers(len(LEAF_TYPES), size=int(rng.integers(1, 3)))})
        caught = kinds[0] if len(kinds) == 1 else f"({', '.join(kinds)})"
        lines.append(f"    except* {caught} as e:")
        lines.append(f"        log.append(({clause}, repr(e)))")
        lines.append("        " + BEHAVIOURS[rng.integers(len(BEHAVIOURS))].format(k=clause))
    lines += ["    else:", "        log.append('else')", "    finally:", "        log.append('finally')"]
    return "\n".join(lines) + "\n"


def test_random_except_star_statements_behave_as_python(tmp_path, monkeypatch):
    """Random clauses, handler behaviours and exception groups: the rewrite against CPython."""
    rng = np.random.default_rng(654)
    source = "\n\n".join(_random_function(rng, k) for k in range(60))
    (tmp_path / "random_except_star.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    import random_except_star as module

    for k in range(60):
        fn = getattr(module, f"f{k}")
        again = rewritten(fn)
        for _ in range(4):
            text = _random_group(rng)
            assert outcome(again, eval(text)) == outcome(fn, eval(text)), (source.split("\n\n")[k], text)
