"""Functions without a source file, recovered from their bytecode (``frontend/bytecode.py``).

Each way of making one -- typed at a real interactive prompt (driven with ``pexpect``), run by
``python -c``, built by ``exec`` of a string nobody put in ``linecache``, unpickled by value with
cloudpickle in another process -- is differentiated in reverse mode, forward mode and second
order, and checked against central differences computed in the same process. The sweep over
the construct corpus checks that what is recovered compiles back to the live code and that its
gradients are those of the file's source.
"""
from __future__ import annotations

import inspect
import linecache
import os
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import yuebing as yb
from tests.corpus import constructs
from yuebing.frontend import bytecode
from yuebing.frontend.source import SourceUnavailableError

pytestmark = pytest.mark.skipif(sys.version_info[:2] not in bytecode.SUPPORTED,
                                reason="the decompiler knows CPython 3.11-3.13 bytecode")

X, H = 0.7, 1e-5

#: a function with a loop, an augmented assignment, a conditional expression, a closure and a
#: comprehension, as a user would type it
FUNCTION = """\
def f(x):
    s = 0.0
    for i in range(1, 4):
        s += np.sin(x * i) ** 2
    scale = lambda v: v * x
    terms = [scale(t) for t in (1.0, 2.0) if t > 0]
    return s + sum(terms) if s > 0 else -s
"""

#: prints the three derivatives and their central differences on one line
CHECK = (f"g = yb.grad(f)({X}); fd = (f({X} + {H}) - f({X} - {H})) / (2 * {H}); "
         f"t = yb.jvp(f, ({X},), (1.0,))[1]; "
         f"hs = float(np.squeeze(yb.hessian(f)({X}))); "
         f"fh = (yb.grad(f)({X} + {H}) - yb.grad(f)({X} - {H})) / (2 * {H}); "
         "print('RESULT', g, fd, t, hs, fh)")


def _check_result_line(text: str) -> None:
    line = next(ln for ln in text.splitlines() if ln.startswith("RESULT"))
    g, fd, t, hs, fh = map(float, line.split()[1:])
    np.testing.assert_allclose([g, t], [fd, fd], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(hs, fh, rtol=1e-4, atol=1e-6)


def _environment() -> dict:
    src = os.path.join(os.path.dirname(os.path.dirname(__file__)), "src")
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""), TERM="dumb")
    env.pop("PYTHONSTARTUP", None)
    return env


def test_function_typed_at_the_interactive_prompt():
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(sys.executable, ["-q", "-i"], env=_environment(), encoding="utf-8", timeout=240)
    try:
        child.expect(">>> ")
        child.sendline("import numpy as np, yuebing as yb")
        child.expect(">>> ")
        for line in FUNCTION.splitlines():
            child.sendline(line)
            child.expect(r"(>>>|\.\.\.) ")
        child.sendline("")
        child.expect(">>> ")
        child.sendline(CHECK)
        child.expect(">>> ")
        assert "Error" not in child.before, child.before
        _check_result_line(child.before)
        child.sendline("f.__code__.co_filename")
        child.expect(">>> ")
        assert "<stdin>" in child.before  # no source anywhere: recovered from bytecode
    finally:
        child.sendline("exit()")
        child.close(force=True)


def test_function_run_by_python_c():
    program = "import numpy as np, yuebing as yb\n" + FUNCTION + CHECK + "\n"
    done = subprocess.run([sys.executable, "-c", program], env=_environment(), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    _check_result_line(done.stdout)


def _exec_function(text: str, filename: str = "<string>", **names) -> types.FunctionType:
    namespace = {"np": np, **names}
    exec(compile(text, filename, "exec"), namespace)
    assert not linecache.getlines(filename)
    return namespace["f"]


def _central(f, x):
    return (f(x + H) - f(x - H)) / (2 * H)


@pytest.mark.parametrize("mode", ["grad", "jvp", "hessian"])
def test_function_built_by_exec_without_linecache(mode):
    f = _exec_function(FUNCTION)
    if mode == "grad":
        np.testing.assert_allclose(yb.grad(f)(X), _central(f, X), rtol=1e-6)
    elif mode == "jvp":
        np.testing.assert_allclose(yb.jvp(f, (X,), (1.0,))[1], _central(f, X), rtol=1e-6)
    else:
        np.testing.assert_allclose(np.squeeze(yb.hessian(f)(X)), _central(yb.grad(f), X), rtol=1e-4)


def test_errors_point_at_the_line_of_the_string():
    text = "def g(x):\n    y = 1.0\n    z = 2.0 * (yield x)\n    yield y\n\ndef f(x):\n    return sum(g(x))\n"
    f = _exec_function(text)
    with pytest.raises(Exception, match=r'File "<string>", line 3'):
        yb.grad(f)(X)


@pytest.mark.slow  # a subprocess importing yuebing; the prompt and python -c tests stay in the default run
def test_function_unpickled_by_value_in_another_process(tmp_path):
    cloudpickle = pytest.importorskip("cloudpickle")
    f = _exec_function(FUNCTION, filename="<typed elsewhere>", __name__="not_an_importable_module")
    (tmp_path / "f.pkl").write_bytes(cloudpickle.dumps(f))
    program = textwrap.dedent(f"""
        import linecache, cloudpickle, numpy as np, yuebing as yb
        with open({str(tmp_path / "f.pkl")!r}, "rb") as file:
            f = cloudpickle.load(file)
        assert not linecache.getlines(f.__code__.co_filename)
    """) + CHECK + "\n"
    done = subprocess.run([sys.executable, "-c", program], env=_environment(), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    _check_result_line(done.stdout)


def test_a_reconstruction_that_does_not_compile_back_is_refused(monkeypatch):
    """Never a wrong function: a decompiler that drops a statement is caught by the check."""
    from yuebing.frontend import decompiler

    f = _exec_function("def f(x):\n    y = x * 2.0\n    y = y * x\n    return y\n", filename="<refused>")
    real = decompiler.Decompiler.emit

    def dropping(self, out, stmt, i):
        if not (isinstance(stmt, decompiler.ast.Assign) and isinstance(stmt.value, decompiler.ast.BinOp)
                and getattr(stmt.value.right, "value", None) == 2.0):
            real(self, out, stmt, i)

    monkeypatch.setattr(decompiler.Decompiler, "emit", dropping)
    bytecode._recovered.cache_clear()
    try:
        with pytest.raises(SourceUnavailableError, match="does not compile back") as info:
            yb.grad(f)(X)
        assert "define f in a file" in str(info.value)
    finally:
        bytecode._recovered.cache_clear()


def test_unsupported_construct_is_refused_with_advice():
    f = _exec_function("def f(x):\n    match [x, 1]:\n        case [a, 1]:\n            return a * x\n    return x * 2.0\n")
    with pytest.raises(SourceUnavailableError, match="MATCH_SEQUENCE, which yuebing cannot decompile") as info:
        yb.grad(f)(X)
    assert "define f in a file" in str(info.value) and "<string>" not in str(info.value).split(":")[0]


# ---------------------------------------------------------------------- the construct corpus

CONSTRUCTS = {name: f for name, f in vars(constructs).items() if name.startswith("c_") and inspect.isfunction(f)}


def _without_source(code: types.CodeType) -> types.CodeType:
    """``code`` (and the code nested in it) under a file name that has no text."""
    consts = tuple(_without_source(c) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename="<no source>", co_consts=consts)


def _source_less(f: types.FunctionType) -> types.FunctionType:
    g = types.FunctionType(_without_source(f.__code__), f.__globals__, f.__name__, f.__defaults__, f.__closure__)
    g.__kwdefaults__ = f.__kwdefaults__
    return g


def _recovered_constructs() -> dict:
    found = {}
    for name, f in CONSTRUCTS.items():
        try:
            bytecode.recover(f)
        except bytecode.RecoveryError:
            continue
        found[name] = f
    return found


RECOVERED = _recovered_constructs()


def test_the_whole_construct_corpus_is_recovered():
    """On CPython 3.11, 3.12 and 3.13 alike: a construct that stops being recovered fails here."""
    assert sorted(set(CONSTRUCTS) - set(RECOVERED)) == []


@pytest.mark.parametrize("name", sorted(RECOVERED))
def test_recovered_construct_compiles_back_and_has_the_same_gradient(name):
    f = CONSTRUCTS[name]
    node = bytecode.recover(f)
    assert bytecode.compiles_back(node, f.__code__)
    g = _source_less(f)
    try:
        expected = yb.grad(f)(X)
    except Exception as error:  # refused from the file's source: refused the same way without it
        with pytest.raises(type(error)):
            yb.grad(g)(X)
        return
    np.testing.assert_allclose(yb.grad(g)(X), expected, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------- constructs rebuilt from the exception
# table, loop else blocks, match statements, yield from and mixed and/or values: each recovered
# function compiles back to the live code and differentiates as the same text read from a file

NEW_CONSTRUCTS = {
    "try_except_as_else_finally": """\
def f(x):
    y = x * 2.0
    try:
        z = y * y
        w = 1.0 / (z - z) if z > 10.0 else np.sin(z)
    except ZeroDivisionError as error:
        w = np.cos(y) + len(str(error)) * 0.0
    except (KeyError, TypeError):
        w = x
    else:
        w = w * x
    finally:
        y = y + x
    return w * y
""",
    "try_bare_except_reraise_nested": """\
def f(x):
    def inner(v):
        try:
            raise IndexError("no")
        except IndexError:
            raise
    try:
        try:
            y = inner(x)
        except KeyError:
            y = 0.0
    except:
        y = np.exp(x) * x
    return y
""",
    "try_return_inside_finally": """\
def f(x):
    total = 0.0
    for k in range(3):
        try:
            if k == 2:
                return total * x
            total = total + np.sin(x * k)
        finally:
            total = total * 1.5
    return total
""",
    "try_in_loop_continue_break": """\
def f(x):
    total = 0.0
    for k in range(5):
        try:
            if k == 1:
                raise ValueError("skip")
            if k == 4:
                break
            total += x ** k
        except ValueError:
            continue
    return total
""",
    "for_else_while_else": """\
def f(x):
    s = 0.0
    for i in range(4):
        if i > 5:
            break
        s += np.sin(x * i)
    else:
        s = s * 2.0
    n = 0
    while n < 3:
        if s > 100.0:
            break
        s = s * x
        n += 1
    else:
        s = s + x
    return s
""",
    "match_patterns": """\
def f(x):
    total = 0.0
    for item in [1, (x, 2.0), {"k": x}, complex(x, 1.0), None, [x, x, x], "other"]:
        match item:
            case 1 | 2:
                total = total + x
            case (a, b) if a < b:
                total = total + a * b
            case {"k": v}:
                total = total + v * v
            case complex(real=re):
                total = total + re * re
            case None:
                total = total + 0.5 * x
            case [p, q, r]:
                total = total + p * q * r
            case str() as s:
                total = total + len(s) * x
            case _:
                total = total - x
    return total
""",
    "yield_from": """\
def f(x):
    def g(v):
        yield v * 2.0
        yield v * v
    def h(v):
        yield from g(v)
        yield from [np.sin(v), v]
    return sum(h(x))
""",
    "and_or_values": """\
def f(x):
    flag = x > 0.5
    scale = (flag and 2.0) or 3.0
    other = (x < 0.0 or flag) and x or 1.0
    return scale * x + other * x if (flag and scale) or other else x
""",
    # shapes CPython 3.12/3.13 compile differently from 3.11 (inlined comprehensions, slices,
    # keyword calls, f-strings, handlers out of line, return blocks copied into each path)
    "comprehensions_slices_fstrings": """\
def f(x):
    values = [x * k for k in range(1, 4) if k != 2]
    squares = {k: v * v for k, v in enumerate(values)}
    grid = [[v * j for j in range(2)] for v in values]
    if any([v > 0.5 for v in values]):
        values[1:2] = [x * 3.0]
    head = values[:2]
    label = f"{x!r:>12}{len(head)}"
    total = +sum(head) + sum(squares.values()) + sum(sum(row) for row in grid)
    return total + len(label) * 0.0 + np.sin(*head[:1])
""",
    "classes_super_decorators_star_calls": """\
def f(x):
    class Base:
        def value(self, v, scale=1.0):
            return v * scale
    class Child(Base):
        def value(self, v, scale=1.0):
            return super().value(v, scale=scale) + np.cos(v)
    def twice(g):
        return lambda v: g(g(v))
    @twice
    def step(v):
        return v * 0.5 + np.sin(v)
    args = [x]
    return Child().value(*args, scale=2.0) + step(x)
""",
    "try_in_loop_with_break_ternary": """\
def f(x):
    s = 0.0
    for k in range(5):
        try:
            if k == 3:
                raise KeyError(k)
            s = s + x ** k
        except KeyError:
            s = s * x
    with np.errstate(all="ignore"):
        s = s + np.log(x)
    for k in range(4):
        if s > 100.0:
            break
        s = s * 1.5
    return s * x if s > 1.0 else s
""",
    "chained_comparisons_in_ternaries_and_ifs": """\
def f(x):
    def clip(v):
        return v * v if 0.1 < v < 2.0 else v
    def gate(v):
        if 0.1 < v < 2.0:
            return v * 3.0
        return v
    def both(a, b, c):
        if a < b < c:
            return a * b * c
        return a
    w = x if 0.0 < x < 1.0 else -x
    return clip(x) + gate(x) + np.sin(w) + both(0.1, x, 2.0)
""",
    "constant_returns_in_ternary_and_if": """\
def f(x):
    def scaled(v, n):
        return 1.0 if n == 0 else v ** n
    def sign(v):
        if v > 0.0:
            return 1.0
        return -1.0
    return scaled(x, 3) * sign(x) + scaled(x, 0) * np.cos(x)
""",
    "generator_in_while_true_and_inner_break": """\
def f(x):
    def evens(v, limit):
        k = 0
        while True:
            if k > limit:
                return
            if k % 2 == 0:
                yield v * k
            k += 1
    s = 0.0
    for i in range(3):
        for j in range(5):
            if j > i:
                break
            s += np.sin(x * j)
    return s + sum(evens(x, 4))
""",
    # except* (3.11 puts the else block past the handler, 3.12 keeps it after the body and
    # copies the return into the handler's exit) and a case's **rest (captures rotated on the stack)
    "except_star_as_else_in_loop": """\
def f(x):
    s = 0.0
    for k in range(3):
        try:
            if k == 1:
                raise ExceptionGroup("g", [ValueError(k), KeyError(k)])
            y = x * k
        except* ValueError as group:
            y = np.sin(x) * len(group.exceptions)
        except* (KeyError, TypeError):
            y = y + x
        else:
            y = y * x
        s = s + y
    try:
        s = s * x
    except* ArithmeticError:
        s = -s
    return s
""",
    "conditional_expression_in_a_first_branch": """\
def f(x):
    y = np.sin(x)
    b = (y * y if y < -1.0 else y * 3.0) if x < 1.0 else x
    c = x if x > 2.0 else (y if y > 0.0 else -y)
    return b * c
""",
    "while_ending_a_for_body": """\
def f(x):
    s = 0.0
    for k in range(3):
        t = x + k
        while t < 4.0:
            s = s + np.sin(t)
            t = t * 2.0
    return s
""",
    "if_with_break_ending_a_for_body": """\
def f(x):
    grid = [0.0, 0.5, 1.0, 2.0]
    k = 0
    for i in range(3):
        if grid[i] <= x < grid[i + 1]:
            k = i
            break
    for i in range(3):
        if grid[i] > x:
            k = k + i
            break
    return (x - grid[k]) * np.sin(x) + k
""",
    "match_mapping_rest": """\
def f(x):
    total = 0.0
    for item in [{"a": x, "b": 2.0}, {"a": 1, "c": x}, {"d": x}]:
        match item:
            case {"a": 1, **rest}:
                total = total + rest["c"] * x
            case {"a": a, "b": _, **others}:
                total = total + a * a + len(others)
            case {**everything}:
                total = total + everything["d"]
    return total
""",
}


def _file_function(text: str, tmp_path, name: str) -> types.FunctionType:
    path = tmp_path / f"{name}.py"
    path.write_text("import numpy as np\n" + text)
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace["f"]


@pytest.mark.parametrize("name", sorted(NEW_CONSTRUCTS))
def test_new_construct_compiles_back_and_differentiates_as_its_source(name, tmp_path):
    text = NEW_CONSTRUCTS[name]
    recovered = _exec_function(text, filename=f"<{name}>")
    node = bytecode.recover(recovered)
    assert bytecode.compiles_back(node, recovered.__code__)
    from_file = _file_function(text, tmp_path, name)
    np.testing.assert_allclose(recovered(X), from_file(X), rtol=1e-15)
    grad = yb.grad(recovered)(X)
    np.testing.assert_allclose(grad, yb.grad(from_file)(X), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(grad, _central(recovered, X), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(yb.jvp(recovered, (X,), (1.0,))[1], yb.jvp(from_file, (X,), (1.0,))[1],
                               rtol=1e-12, atol=1e-14)
    hvp = yb.hvp(recovered, (X,), (1.0,))[2]
    np.testing.assert_allclose(hvp, yb.hvp(from_file, (X,), (1.0,))[2], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.squeeze(hvp), _central(yb.grad(recovered), X), rtol=1e-4, atol=1e-6)


#: asynchronous code: ``await``, ``async with`` and ``async for`` are their synchronous shapes with
#: the awaits' ``SEND`` loops in between; a ``yield`` in ``async def`` wraps its value
SHAPES_COMPILING_BACK = {
    "await": "def f(x):\n    async def g(v):\n        a = await h(v)\n        return a * await h(a + 1.0)\n    return g\n",
    "async_with": "def f(m, x):\n    async def g():\n        async with m as c:\n            y = c * x\n"
                  "        async with m:\n            y = y + 1.0\n        return y\n    return g\n",
    "async_generator": "def f(x):\n    async def g(v):\n        yield v * 2.0\n        got = yield v\n    return g\n",
    "async_for_else_break": "def f(it, x):\n    async def g():\n        y = x\n        async for t in it:\n"
                            "            if t > y:\n                break\n            y = y + t\n        else:\n"
                            "            y = -y\n        return y * 2.0\n    return g\n",
    "async_comprehensions": "def f(it, rows):\n    async def g():\n        a = [t async for t in it if t]\n"
                            "        b = [[u async for u in r] for r in rows]\n        c = [await r for r in rows]\n"
                            "        return a, b, c, (t * 2.0 async for t in it)\n    return g\n",
    # (and the synchronous shapes 3.12/3.13 lay out differently: nested handlers out of line, the
    # returned value on its own line)
    "nested_with_and_with_return": "def f(m, n):\n    with n:\n        with m as c:\n            y = c\n"
                                   "    with m as c:\n        return c * y\n",
}


@pytest.mark.parametrize("name", sorted(SHAPES_COMPILING_BACK))
def test_asynchronous_and_other_shapes_compile_back(name):
    f = _exec_function(SHAPES_COMPILING_BACK[name], filename=f"<{name}>")
    assert bytecode.compiles_back(bytecode.recover(f), f.__code__)


def test_a_match_the_decompiler_does_not_rebuild_is_refused():
    """Captures the compiler shuffles on the stack (``[a, 1]``) are refused, never guessed."""
    f = _exec_function("def f(x):\n    match [x, 1]:\n        case [a, 1]:\n            return a * x\n    return x\n",
                       filename="<shuffled>")
    with pytest.raises(SourceUnavailableError, match="cannot decompile|does not compile back"):
        yb.grad(f)(X)


#: shapes yuebing refused to differentiate from source (match star patterns, a yield from's value):
#: recovered, they compile back and behave as the source does -- the same refusal, or the same
#: gradient once the transform handles them
SHAPES_ONCE_REFUSED = {
    "match_star": "def f(x):\n    match [x, x, x]:\n        case [p, *rest]:\n            return p * len(rest)\n    return x\n",
    "yield_from_value": "def f(x):\n    def g(v):\n        yield v\n        return v * v\n"
                        "    def h(v):\n        got = yield from g(v)\n        yield got\n    return sum(h(x))\n",
}


@pytest.mark.parametrize("name", sorted(SHAPES_ONCE_REFUSED))
def test_recovered_shape_is_refused_or_differentiated_as_its_source(name, tmp_path):
    text = SHAPES_ONCE_REFUSED[name]
    recovered = _exec_function(text, filename=f"<{name}>")
    assert bytecode.compiles_back(bytecode.recover(recovered), recovered.__code__)
    try:
        expected = yb.grad(_file_function(text, tmp_path, name))(X)
    except Exception as error:
        with pytest.raises(type(error)):
            yb.grad(recovered)(X)
        return
    np.testing.assert_allclose(yb.grad(recovered)(X), expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(expected, _central(recovered, X), rtol=1e-6, atol=1e-8)
