"""Generated code is compiled with the user's ``from __future__`` flags, not yuebing's own.

codegen.compile_checked inherited ``from __future__ import annotations`` from codegen.py, so a
local class's annotations were strings in the differentiated function and objects when it ran:
code reading them took another branch (gradient 3.0 where 2.0 is right, silently), and a local
dataclass in a module absent from sys.modules crashed in dataclasses (fuzz_recent seed 96000).
Compiled with the user's flags, a nested ``def``'s annotations are evaluated when it is defined,
in the generated function: the globals they read are hoisted there like its decorators' and
defaults' (``normalise._definition_time_globals``; without that, ``def _(v: np.ndarray)`` under
a singledispatch ``register`` raised ``NameError: np``). In a module with the import they stay
strings, as in a plain call. A copy yuebing makes of a user's function (given shared cells, a
local class's method given its class's cells) keeps them (it lost them: ``tangents/function_copies``).

Each program is checked in every mode against central differences of the plain call
(``check_every_mode``: reverse, forward, hvp), or by ``fuzz.check_program``.
"""
import numpy as np
import pytest

import yuebing as yb
from yuebing.testing import fuzz
from yuebing.testing.third_order import check_third_order

from .modes import check_every_mode

FUTURE = "from __future__ import annotations\n"
HEADER = "import dataclasses\nimport functools\nimport numbers\nimport typing\nimport numpy as np\n"

BRANCH_ON_ANNOTATION = """
def f(x, s):
    class V:
        a: float
    k = 2.0 if V.__annotations__["a"] is float else 3.0
    return k * s * np.sum(x * x)
"""

LOCAL_DATACLASS = """
def f(x, s):
    @dataclasses.dataclass(frozen=True)
    class V:
        a: float
        w: dataclasses.InitVar[float] = 1.0

        def __post_init__(self, w):
            object.__setattr__(self, "a", self.a * w)
    v = V(s * x[0], 2.0)
    return v.a ** 2 + np.sum(np.sin(x)) * s
"""

POINT = (np.array([0.3, -0.4, 0.8]), 0.7)
X = np.array([0.3, -0.4, 0.8])

# Functions of one array whose value depends on what the annotations are: k is 2 when they are
# objects (a plain call in a module without the import), 3 when they are strings.
PROGRAMS = {
    "dataclass_fields": """
def f(x):
    @dataclasses.dataclass
    class P:
        a: np.ndarray
        b: float = 1.0
        c: typing.ClassVar[float] = 5.0
    p = P(x * x, x[1])
    fields = dataclasses.fields(P)
    k = 2.0 if fields[0].type is np.ndarray and len(fields) == 2 else 3.0
    return k * np.sum(p.a * p.b) + P.c * x[0]
""",
    "singledispatch_register_by_annotation": """
def f(x):
    @functools.singledispatch
    def g(v):
        return 3.0 * v
    @g.register
    def _(v: np.ndarray):  # (np read nowhere else: only the annotation needs it)
        return 2.0 * v * x[0]
    return g(x * x).sum()
""",
    "get_type_hints_of_a_local_class": """
def f(x):
    class V:
        a: np.ndarray
        b: "float"
    k = 2.0 if typing.get_type_hints(V) == {"a": np.ndarray, "b": float} else 3.0
    k += 0.5 if isinstance(V.__annotations__["a"], str) else 0.0
    return k * (x ** 3).sum()
""",
    "nested_def_with_a_default_from_a_variable": """
def f(x):
    def g(v: np.ndarray, k=2 * x[0]) -> np.floating:
        return (v * v).sum() * k
    k = 2.0 if g.__annotations__["v"] is np.ndarray else 3.0
    return g(x) * k
""",
    # (an implementation capturing nothing was refused as "registered in another call")
    "singledispatch_implementation_capturing_nothing": """
def f(x):
    @functools.singledispatch
    def g(v):
        return 3.0 * v
    @g.register
    def _(v: np.ndarray):
        return 2.0 * v
    return (g(x * x) * x).sum()
""",
    "starred_and_keyword_only_parameters": """
def f(x):
    def g(*vs: np.ndarray, w: np.float64 = 1.0, **kw: numbers.Real):
        return vs[0][0] * w
    a = g.__annotations__
    k = 2.0 if (a["vs"], a["w"], a["kw"]) == (np.ndarray, np.float64, numbers.Real) else 3.0
    return g(x * x) * k + x[1]
""",
    "a_local_class_as_annotation": """
def f(x):
    class V:
        pass
    def g(v: V) -> V:
        return v
    k = 2.0 if g.__annotations__["v"] is V and g.__annotations__["return"] is V else 3.0
    return k * (x * x).sum()
""",
    "a_method_of_a_local_class": """
def f(x):
    class V:
        def m(self, v: np.ndarray) -> float:
            return (v * v).sum()
    k = 2.0 if V.m.__annotations__["v"] is np.ndarray else 3.0
    return k * V().m(x)
""",
    # (a function given shared cells, a local class's method given its class's cells: copies of
    # the user's function, which lost their annotations: tangents/function_copies.py)
    "a_def_in_a_nested_function_sharing_a_cell": """
def f(x):
    def inner(v):
        def g(w: np.ndarray):
            return w * x[0]
        k = (2.0 if g.__annotations__.get("w") is type(v) else 3.0) + (0.5 if "w" in g.__annotations__ else 0.0)
        return (k * g(v) * v).sum()
    return inner(x * x) * x[1]
""",
    "a_method_capturing_a_variable": """
def f(x):
    class V:
        def m(self, v: np.ndarray) -> float:
            return (v * v).sum() * x[0]
    k = (2.0 if V.m.__annotations__.get("v") is np.ndarray else 3.0) + (0.5 if "v" in V.m.__annotations__ else 0.0)
    return k * V().m(x)
""",
    # (names beginning with an underscore are renamed in the generated code: in annotations too,
    # where they are evaluated, and spelt as the user did where they are strings)
    "underscore_names": """
_ARR = np.ndarray


def f(x):
    _T = float
    def g(v: _T, w: _ARR) -> _T:
        return v * 2.0
    a = g.__annotations__
    k = 2.0 if (a["v"], a["w"], a["return"]) == (float, np.ndarray, float) else 3.0
    k += 0.5 if (a["v"], a["w"]) == ("_T", "_ARR") else 0.0
    return (g(x, x) * x).sum() * k
""",
    "underscore_names_in_a_local_class": """
_ARR = np.ndarray


def f(x):
    _T = float
    class V:
        a: _T
        b: _ARR
    a = V.__annotations__
    k = 2.0 if (a["a"], a["b"]) == (float, np.ndarray) else 3.0
    k += 0.5 if (a["a"], a["b"]) == ("_T", "_ARR") else 0.0
    return (x * x).sum() * k
""",
}


@pytest.mark.parametrize("future", ["", FUTURE], ids=["objects", "strings"])
@pytest.mark.parametrize("body", [BRANCH_ON_ANNOTATION, LOCAL_DATACLASS], ids=["branch", "dataclass"])
def test_annotations_are_what_the_users_module_makes_them(future, body):
    outcome = fuzz.check_program(future + HEADER + body, POINT)
    assert outcome.status == "right", str(outcome)


@pytest.mark.parametrize("future", ["", FUTURE], ids=["objects", "strings"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_annotations_in_every_mode_as_in_a_plain_call(name, future):
    f = fuzz.load_function(future + HEADER + PROGRAMS[name])
    check_every_mode(f, X)  # (against differences of the plain call: its branch, its annotations)


@pytest.mark.parametrize("name", sorted(set(PROGRAMS) - {"singledispatch_register_by_annotation",
                                                          "singledispatch_implementation_capturing_nothing"}))
def test_the_plain_call_takes_another_branch_with_the_import(name):
    """The programs tell the two apart (else the tests above could not fail); the singledispatch
    ones are the same either way (``register`` evaluates a string)."""
    objects, strings = (fuzz.load_function(future + HEADER + PROGRAMS[name]) for future in ("", FUTURE))
    assert not np.isclose(objects(X), strings(X))


def test_annotations_naming_nothing_stay_strings_with_the_import():
    """With the import an annotation is never evaluated, and may name what does not exist."""
    f = fuzz.load_function(FUTURE + HEADER + """
def f(x):
    class V:
        a: Undefined
    def g(v: AlsoUndefined) -> Nowhere:
        return v * v
    k = 2.0 if g.__annotations__ == {"v": "AlsoUndefined", "return": "Nowhere"} else 3.0
    return k * g(x).sum() * (V.__annotations__["a"] == "Undefined")
""")
    check_every_mode(f, X)


NESTED = """
def f(s):
    def inner(v):
        class V:
            a: float
        return (2.0 if V.__annotations__["a"] is float else 3.0) * v * s
    return inner(s) * s
"""


@pytest.mark.parametrize("future", ["", FUTURE], ids=["objects", "strings"])
@pytest.mark.parametrize("body, x", [(NESTED, 0.7), (PROGRAMS["a_def_in_a_nested_function_sharing_a_cell"], X)],
                         ids=["class_in_nested_function", "def_in_nested_function"])
def test_third_order(body, x, future):
    """Third order differentiates the nested function's plain program again: the globals its
    definitions' annotations read are bound there too."""
    f = fuzz.load_function(future + HEADER + body)
    check_every_mode(f, x)
    check_third_order(f, x)


def test_a_module_missing_from_sys_modules_gets_its_local_dataclass_differentiated():
    """The fuzzer imports its programs as modules now; one run by exec is not in sys.modules."""
    namespace = {"__name__": "not_in_sys_modules"}
    exec(compile(HEADER + LOCAL_DATACLASS, "<exec>", "exec", dont_inherit=True), namespace)
    f = namespace["f"]
    x, s = POINT
    step = 1e-6
    differences = (f(x, s + step) - f(x, s - step)) / (2 * step)
    assert np.isclose(yb.grad(f, argnums=1)(x, s), differences, rtol=1e-6)
