"""Whether a function's derivative passes may write into its arguments: a conservative proof.

``yb.hvp`` runs its passes on copies of the caller's arrays and directions, so that a function
writing into an argument (``x += 1``, ``x[0] = 0``, ``np.exp(x, out=x)``, a helper that sorts
its input) leaves the caller's data as it was. The copies cost memory traffic: on
``simple_mlp`` (four arrays of 8960 to 32768 elements) half a function call per HVP. This
module proves, from a function's normalised IR (``ir/nodes.py``), that no statement of the
function can write into any array, in which case its passes read the caller's arrays directly.

The proof accepts a body made only of assignments, structured control flow and calls of
*known* functions that never write their operands: the arithmetic and comparison operators,
``getattr`` of an array's data attributes and non-writing methods, NumPy's ufuncs without
``out``, and a table of NumPy, SciPy and ``math`` functions, each with the number of positional
arguments it takes before one that would be written (``np.sum(a, axis, dtype, out)``). Every
other construct refuses the proof: an augmented assignment (``operator.iadd``), an ``out=`` or
``overwrite_*`` keyword, a call of the user's own functions or of anything not in the tables,
free variables (a closure's object may define operators that write), ``raise``/``assert``
and ``with``/``try`` (forward-only code), ``*args``. By induction every value the function
makes is then a NumPy array, a NumPy scalar or a Python number, on which the tabled operations
do not write; the dual rules write only into fdata and adjoints (never into primals or tangents)
when the user's code writes nothing. Globals are resolved at every call (the user may rebind
``np``), which costs a dictionary look-up per global path.
"""
from __future__ import annotations

import builtins
import operator
import sys
import types
from typing import Any

import numpy as np

from ..ir.nodes import Call, Const, Copy, ForRange, Function, Global, If, Pass, Return, Var, While, global_key
from ..ir.tested_comparisons import TESTED
from ..rules.core import is_hashable

_ANY = None  # any number of positional arguments
#: operators that read their operands and make a new value (a view for ``getitem``)
_OPERATORS = frozenset({
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
    operator.pow, operator.matmul, operator.neg, operator.pos, operator.abs, operator.lt, operator.le,
    operator.gt, operator.ge, operator.eq, operator.ne, operator.getitem, operator.not_, operator.truth,
    *TESTED.values(), getattr,
})
#: an array's attributes that are data or views (never bound methods)
_DATA_ATTRIBUTES = frozenset({"T", "mT", "shape", "ndim", "size", "dtype", "real", "imag"})
#: an array's methods that write nothing -> positional arguments before an ``out``
_METHODS = {
    "sum": 2, "mean": 2, "prod": 2, "max": 1, "min": 1, "dot": 1, "reshape": _ANY, "transpose": _ANY,
    "ravel": 1, "flatten": 1, "copy": 1, "astype": _ANY, "squeeze": 1, "diagonal": 3, "trace": 4,
    "cumsum": 2, "std": 2, "var": 2, "all": 1, "any": 1, "item": _ANY, "argmax": 1, "argmin": 1,
}
_BUILTINS = {len: 1, abs: 1, float: 1, int: 1, range: 3}


def _numpy_functions() -> dict:
    """NumPy functions that write nothing -> positional arguments before an ``out``."""
    la = np.linalg
    return {
        np.sum: 3, np.mean: 3, np.prod: 3, np.max: 2, np.min: 2, np.amax: 2, np.amin: 2, np.dot: 2,
        np.inner: 2, np.outer: 2, np.eye: 5, np.identity: 2, np.zeros: 3, np.ones: 3, np.full: 4,
        np.diag: 2, np.diagonal: 4, np.trace: 5, np.reshape: 3, np.transpose: 2, np.tril: 2,
        np.triu: 2, np.stack: 2, np.concatenate: 2, np.where: 3, np.cumsum: 3, np.arange: 4,
        np.linspace: 7, np.asarray: 2, np.array: 2, np.einsum: _ANY, np.kron: 2, np.vdot: 2,
        la.cholesky: 1, la.solve: 2, la.inv: 1, la.det: 1, la.slogdet: 1, la.norm: 4,
    }


def _scipy_functions() -> dict:
    """SciPy's linear algebra that writes nothing given no ``overwrite_*`` argument, once the
    user's program has imported it (importing SciPy here would cost a third of a second)."""
    if "scipy.linalg" not in sys.modules:
        return {}
    sl = sys.modules["scipy.linalg"]
    return {sl.solve_triangular: 5, sl.cholesky: 2, sl.cho_factor: 2, sl.cho_solve: 2, sl.solve: 3,
            sl.inv: 1, sl.det: 1}


_FUNCTIONS: dict = {}
_FUNCTIONS_SEEN_SCIPY = False


def _function_table() -> dict:
    global _FUNCTIONS_SEEN_SCIPY
    if not _FUNCTIONS or not _FUNCTIONS_SEEN_SCIPY and "scipy.linalg" in sys.modules:
        _FUNCTIONS_SEEN_SCIPY = "scipy.linalg" in sys.modules
        _FUNCTIONS.update({**_BUILTINS, **_numpy_functions(), **_scipy_functions()})
    return _FUNCTIONS


_PLAIN_CONSTANTS = (int, float, bool, complex, str, type(None), slice, type(Ellipsis), np.generic)


def _plain_constant(value: Any) -> bool:
    if type(value) is tuple:
        return all(_plain_constant(v) for v in value)
    if type(value) is slice:
        return all(_plain_constant(v) for v in (value.start, value.stop, value.step))
    return isinstance(value, _PLAIN_CONSTANTS)


def _plain_global(value: Any) -> bool:
    """A global the function reads as a value: a number, or an array (NumPy's operators on
    arrays write nothing, and the generated code reads a float array global read-only)."""
    return _plain_constant(value) or type(value) is np.ndarray


_MISSING = object()


def resolve(namespace: dict, path: str | tuple) -> Any:
    """The object a global path (``np.linalg.cholesky``, or its names in a tuple) names now,
    or a marker when missing."""
    head, *rest = path.split(".") if type(path) is str else path
    value = namespace.get(head, _MISSING)
    if value is _MISSING:
        value = getattr(builtins, head, _MISSING)
    for name in rest:
        value = getattr(value, name, _MISSING)
    return value


class _Proof:
    """One walk over a function's IR; ``globals`` collects the global paths it relied on."""

    def __init__(self, fn: Function, namespace: dict) -> None:
        self.fn, self.namespace = fn, namespace
        self.globals: dict[str, Any] = {}
        self.assigned = set(fn.params) | _targets(fn.body)
        self.methods = _method_variables(fn.body)

    def block(self, body: list) -> bool:
        return all(self.statement(s) for s in body)

    def statement(self, s: Any) -> bool:
        if isinstance(s, Pass):
            return True
        if isinstance(s, Return):
            return self.atom(s.value)
        if isinstance(s, Copy):
            return self.atom(s.source)
        if isinstance(s, Call):
            return self.call(s)
        if isinstance(s, If):
            return self.atom(s.test) and self.block(s.body) and self.block(s.orelse)
        if isinstance(s, While):
            return self.block(s.test_body) and self.atom(s.test) and self.block(s.body)
        if isinstance(s, ForRange):
            return all(self.atom(a) for a in (s.start, s.stop, s.step)) and self.block(s.body)
        return False  # raise/assert, with, try, nested functions: not proven

    def atom(self, a: Any) -> bool:
        if isinstance(a, Var):
            return a.name in self.assigned
        if isinstance(a, Const):
            return _plain_constant(a.value)
        if isinstance(a, Global):
            return _plain_global(self.global_value(a.path))
        return False

    def global_value(self, path: str) -> Any:
        head, _, tail = path.partition(".")
        full = global_key(self.fn, head) + ("." + tail if tail else "")
        value = self.globals[full] = resolve(self.namespace, full)
        return value

    def call(self, s: Call) -> bool:
        if s.star_args is not None or s.star_kwargs is not None:
            return False
        if any(name == "out" or name.startswith("overwrite") for name, _ in s.kwargs):
            return False
        if not all(self.atom(a) for a in s.args) or not all(self.atom(a) for _, a in s.kwargs):
            return False
        limit = self.positional_limit(s)
        return limit is not False and (limit is _ANY or len(s.args) <= limit)

    def positional_limit(self, s: Call) -> Any:
        """How many positional arguments the callee takes before one it writes; False: unknown."""
        func = s.func
        if isinstance(func, Var):
            return _METHODS.get(self.methods.get(func.name), False)
        if isinstance(func, Const):
            value = func.value
        elif isinstance(func, Global):
            value = self.global_value(func.path)
        else:
            return False
        if value is getattr:
            attribute = s.args[1].value if len(s.args) == 2 and isinstance(s.args[1], Const) else None
            return 2 if attribute in _DATA_ATTRIBUTES or attribute in _METHODS else False
        if is_hashable(value) and value in _OPERATORS:
            return _ANY
        if type(value) is np.ufunc:
            return value.nin
        if type(value) is types.BuiltinFunctionType and getattr(value, "__module__", None) == "math":
            return _ANY
        return _function_table().get(value, False) if is_hashable(value) else False


def _targets(body: list) -> set:
    """Every variable the body assigns."""
    out = set()
    for s in body:
        target = getattr(s, "target", None) or getattr(s, "var", None)
        if isinstance(target, str):
            out.add(target)
        for name in ("test_body", "body", "orelse"):
            out |= _targets(getattr(s, name, None) or [])
    return out


def _method_variables(body: list) -> dict:
    """Variables bound only by ``getattr(v, 'method')`` of one tabled method -> that method."""
    seen: dict[str, Any] = {}

    def walk(statements: list) -> None:
        for s in statements:
            target = getattr(s, "target", None)
            if isinstance(target, str):
                method = _getattr_method(s)
                seen[target] = method if seen.get(target, method) == method else None
            for name in ("test_body", "body", "orelse"):
                walk(getattr(s, name, None) or [])

    walk(body)
    return {name: method for name, method in seen.items() if method is not None}


def _getattr_method(s: Any) -> str | None:
    if isinstance(s, Call) and isinstance(s.func, Const) and s.func.value is getattr and len(s.args) == 2 \
            and isinstance(s.args[1], Const) and s.args[1].value in _METHODS:
        return s.args[1].value
    return None


#: function IR -> (the global paths the proof read, their values then, the verdict)
_PROOFS: dict[int, tuple] = {}


def writes_nothing(fn: Function, namespace: dict) -> bool:
    """Whether no statement of ``fn`` can write into an array (its arguments included), with its
    globals as they are now in ``namespace``. Any doubt: False."""
    cached = _PROOFS.get(id(fn))
    if cached is not None and cached[0] is fn and all(resolve(namespace, p) is v for p, v in cached[1]):
        return cached[2]
    if fn.free_vars or fn.cell_backed:
        verdict, seen = False, {}
    else:
        proof = _Proof(fn, namespace)
        verdict = proof.block(fn.body)
        seen = proof.globals
    _PROOFS[id(fn)] = (fn, tuple((tuple(path.split(".")), value) for path, value in seen.items()), verdict)
    return verdict


__all__ = ["resolve", "writes_nothing"]
