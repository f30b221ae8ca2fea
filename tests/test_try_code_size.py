"""The code generated for try statements grows with the source, not with its nesting.

Inside a try body every block keeps its progress, and the reverse pass undoes each if, loop,
``with`` block and inner try either in full or in part (``transform/try_statements.py``). Undoing
the two cases with two copies of the inner blocks doubled the code per level of nesting: an
``asyncio.Condition`` example (coroutines are state machines of loops and tries nested in tries)
generated 148,000 lines for one ~100-line state machine, 22 s of its first gradient. Here functions
of k nested loop/try/with levels, plain and async, are generated and differentiated: each level
must add about the same number of lines (the rule's program and the tracked variant that calls
from try bodies use), and the derivatives agree with finite differences in every mode, with an
exception caught part way at every level.
"""
from __future__ import annotations

import importlib.util
import textwrap

import numpy as np
import pytest

import yuebing as yb
from yuebing.transform import runtime
from yuebing.transform.partial_calls import WholeFunction
from yuebing.transform.reverse import ReverseGenerator
from yuebing.transform.runtime import derived_rule

from tests.all_modes import check_all_modes

DEPTHS = (1, 2, 3)


def _nested_source(k: int) -> str:
    """``k`` levels, each a loop holding a try (whose handler works too) holding a ``with``
    block; the innermost raises on the second trip of its loop, after work."""
    lines = ["total = 0.0"]
    pad = ""
    for level in range(k):
        lines += [f"{pad}for i{level} in range(2):",
                  f"{pad}    try:",
                  f"{pad}        total = total + np.sin(x * (i{level} + {level + 1}))",
                  f"{pad}        with contextlib.nullcontext():"]
        pad += "            "
    lines += [f"{pad}total = total * np.cos(x)",
              f"{pad}if i{k - 1} == 1:",
              f"{pad}    raise ValueError('part way')"]
    for level in reversed(range(k)):
        pad = pad[:-12]
        lines += [f"{pad}    except ValueError:",
                  f"{pad}        total = total - np.tanh(x * {level + 2})",
                  f"{pad}        if i{level} == 1 and {level} > 0:",
                  f"{pad}            raise"]
    lines.append("return total")
    body = textwrap.indent("\n".join(lines), "    ")
    return (f"def nested(x):\n{body}\n\n\n"
            f"async def nested_coroutine(x):\n{body}\n\n\n"
            "def nested_async(x):\n    return asyncio.run(nested_coroutine(x))\n")


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    found = {}
    folder = tmp_path_factory.mktemp("nested_tries")
    for k in DEPTHS:
        path = folder / f"nested_tries_{k}.py"
        path.write_text("import asyncio\nimport contextlib\n\nimport numpy as np\n\n\n" + _nested_source(k))
        spec = importlib.util.spec_from_file_location(f"nested_tries_{k}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found[k] = module
    return found


def _generated_lines(rule, namespace: dict) -> int:
    """Lines of a rule's program and of its tracked variant (``partial_calls.py``)."""
    tracked = type("Tracked", (WholeFunction, ReverseGenerator), {})(rule.ir, namespace).generate()
    return rule.generated.source.count("\n") + tracked.source.count("\n")


def _state_machine_lines(module) -> int:
    """Generated lines of the state machine that ``module.nested_coroutine`` runs as
    (``frontend/async_functions.py``), found among the rules its gradient derived."""
    yb.grad(module.nested_async)(0.3)
    rules = [rule for code, (namespace, rule) in runtime._DERIVED._by_code.items()
             if namespace is module.__dict__ and code.co_qualname.endswith(".resume")]
    assert len(rules) == 1
    return _generated_lines(rules[0], module.__dict__)


def _increments(sizes: list[int]) -> list[int]:
    return [b - a for a, b in zip(sizes, sizes[1:])]


def test_a_plain_functions_code_grows_linearly_with_nesting(modules):
    sizes = [_generated_lines(derived_rule(modules[k].nested), modules[k].__dict__) for k in DEPTHS]
    steps = _increments(sizes)
    assert max(steps) <= 1.5 * min(steps), f"lines per depth {sizes}: each level should add about the same"


def test_a_coroutines_state_machine_grows_linearly_with_nesting(modules):
    sizes = [_state_machine_lines(modules[k]) for k in DEPTHS]
    steps = _increments(sizes)
    assert max(steps) <= 1.5 * min(steps), f"lines per depth {sizes}: each level should add about the same"


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("name", ["nested", "nested_async"])
def test_nested_tries_left_part_way_agree_in_every_mode(modules, k, name):
    check_all_modes(getattr(modules[k], name), 0.4)


def calls_a_lambda_in_a_try(x):
    total = 0.0
    for k in range(3):
        try:
            scaled = lambda v: np.sin(v * (k + 1))  # noqa: E731 - defined by the generated code
            total = total + scaled(x)
            if k == 2:
                raise ValueError("part way")
        except ValueError:
            total = total * 2.0
    return total


def test_a_closure_the_generated_code_defines_is_parsed_from_its_own_lines(monkeypatch):
    """The lambda's code lives in the generated program: its definition is read from its own
    lines, not by parsing and compiling the whole program (seconds for a state machine)."""
    from yuebing.frontend import source

    parsed = []
    original = source._parse_file
    monkeypatch.setattr(source, "_parse_file", lambda filename, text: parsed.append(filename) or original(filename, text))
    check_all_modes(calls_a_lambda_in_a_try, 0.4)
    assert not [name for name in parsed if name.startswith("<yuebing ")]
