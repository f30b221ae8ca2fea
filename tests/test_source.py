"""Finding a function's source: the text must compile to the code that runs.

A module file edited after import is not differentiated in its new form (the derivative would be
of the new text while the value comes from the old code): the function that runs is recovered
from its bytecode (``frontend/bytecode.py``); after ``importlib.reload`` the new text is used. Several lambdas
on one line, in a comprehension or as default values are told apart by which compiles to the
live code object.
"""
from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

import yuebing as yb
from yuebing.frontend.source import SourceUnavailableError

from .all_modes import check_all_modes


@pytest.fixture
def module_dir(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # reload reads the edited file
    yield tmp_path
    for name in [n for n in sys.modules if n.startswith("yb_edited_")]:
        del sys.modules[name]


def _write(path, body):
    path.write_text(body)
    importlib.invalidate_caches()


def test_module_edited_after_import_differentiates_the_code_that_runs(module_dir):
    path = module_dir / "yb_edited_a.py"
    _write(path, "def f(x):\n    return x * x\n")
    import yb_edited_a as mod

    _write(path, "def f(x):\n    return x * x * x\n")
    assert mod.f(2.0) == 4.0
    assert yb.value_and_grad(mod.f)(2.0) == (4.0, 4.0)  # recovered from its bytecode
    check_all_modes(mod.f, 1.3)
    importlib.reload(mod)
    assert yb.value_and_grad(mod.f)(2.0) == (8.0, 12.0)
    check_all_modes(mod.f, 1.3)


def test_module_reloaded_after_its_old_text_was_read(module_dir):
    path = module_dir / "yb_edited_b.py"
    _write(path, "import numpy as np\n\ndef f(x):\n    return np.sin(x)\n")
    import yb_edited_b as mod

    assert yb.grad(mod.f)(0.5) == pytest.approx(np.cos(0.5))  # the text is now in linecache
    _write(path, "import numpy as np\n\ndef f(x):\n    return np.sin(x) * x\n")
    importlib.reload(mod)
    check_all_modes(mod.f, 0.5)


def test_function_moved_by_an_edit_above_it_is_recovered(module_dir):
    path = module_dir / "yb_edited_c.py"
    _write(path, "def f(x):\n    return x * 2.0\n")
    import yb_edited_c as mod

    _write(path, "# a comment\n\ndef f(x):\n    return x * 2.0\n")
    assert yb.grad(mod.f)(1.0) == 2.0


def test_edited_file_whose_function_cannot_be_recovered_is_refused(module_dir):
    path = module_dir / "yb_edited_e.py"
    # (a match whose captures the compiler shuffles is a construct the bytecode front end does not rebuild)
    _write(path, "def f(x):\n    match [x, 1]:\n        case [a, 1]:\n            return a\n    return x * 2.0\n")
    import yb_edited_e as mod

    _write(path, "def f(x):\n    return x * 3.0\n")
    with pytest.raises(SourceUnavailableError, match="changed since it was imported") as info:
        yb.grad(mod.f)(1.0)
    assert str(path) in str(info.value) and "reload" in str(info.value)


def test_edit_that_only_moves_columns_is_accepted(module_dir):
    """The text still compiles to the same bytecode, names and constants: it computes what runs."""
    path = module_dir / "yb_edited_d.py"
    _write(path, "def f(x):\n    return x*x*3.0\n")
    import yb_edited_d as mod

    _write(path, "def f(x):\n    return x * x * 3.0\n")
    check_all_modes(mod.f, 1.1)


def _pair(*fs):
    return fs


def test_two_lambdas_on_one_line_in_every_mode():
    first, second = _pair(lambda a: np.sin(a) * a, lambda b: np.cos(b) * 2.0)
    check_all_modes(first, 0.3)
    check_all_modes(second, 0.3)


def test_identical_lambdas_on_one_line():
    first, second = (lambda a: a * a * 2.0), (lambda a: a * a * 2.0)
    assert yb.grad(first)(1.5) == yb.grad(second)(1.5) == pytest.approx(6.0)


def test_grad_of_a_lambda_next_to_another_lambda():
    assert yb.grad(lambda a: a * a)(3.0) + yb.grad(lambda b: b * b * b)(2.0) == pytest.approx(18.0)


def test_lambdas_made_in_a_comprehension():
    scaled = [lambda x, k=k: np.sin(x) * k for k in range(1, 4)]
    for k, f in enumerate(scaled, start=1):
        assert yb.grad(f)(0.2) == pytest.approx(k * np.cos(0.2))
        check_all_modes(f, 0.2)


def with_lambda_defaults(x, scale=lambda v: v * 5.0, shift=lambda v: v * v):
    return scale(x) + shift(x)


def test_lambdas_as_default_values():
    scale, shift = with_lambda_defaults.__defaults__
    check_all_modes(scale, 1.2)
    check_all_modes(shift, 1.2)
    check_all_modes(with_lambda_defaults, 1.2)


def test_nested_lambdas_on_one_line():
    outer = lambda a: (lambda b: b * a)(a * 3.0)  # noqa: E731
    inner = (lambda q: (lambda r: np.exp(r) * r))(None)
    check_all_modes(outer, 0.7)
    check_all_modes(inner, 0.7)


def test_decorated_function_and_method():
    class Model:
        def __init__(self):
            self.w = 1.5

        @staticmethod
        def static(x):
            return x * x

        def loss(self, x):
            return self.w * np.sin(x)

    model = Model()
    check_all_modes(Model.static, 0.4)
    check_all_modes(model.loss, 0.4)


@pytest.mark.slow
def test_lambdas_on_one_line_without_column_positions(tmp_path):
    import subprocess
    import textwrap

    script = tmp_path / "no_ranges.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import yuebing as yb
        from yuebing.frontend.source import SourceUnavailableError
        pair = lambda *fs: fs
        a, b = pair(lambda a: np.sin(a), lambda b: np.cos(b) * 2.0)
        assert abs(yb.grad(a)(0.3) - np.cos(0.3)) < 1e-12 and abs(yb.grad(b)(0.3) + 2 * np.sin(0.3)) < 1e-12
        c, d = (lambda v: v * 2.0), (lambda v: v * 3.0)
        try:
            yb.grad(c)(1.0)
        except SourceUnavailableError as error:
            assert "no_debug_ranges" in str(error)
        else:
            raise AssertionError("same parameters and no column positions: must be refused")
    """))
    subprocess.run([sys.executable, "-X", "no_debug_ranges", str(script)], check=True)
