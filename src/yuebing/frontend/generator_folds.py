"""Stage 1b: a generator drained by a consumer that may call user code between its items.

``sum``, ``max``, ``min``, ``set``, ``frozenset``, ``dict`` and ``np.fromiter`` take every item of
a generator at once, but not before running anything else: CPython's ``sum`` adds each item as it
comes (``acc + item``, a user's ``__add__``/``__radd__``), ``max`` compares it (``__gt__``), a set
hashes it, ``np.fromiter`` converts it (``__float__``). For numbers, strings and arrays that code
is NumPy's or Python's own and changes nothing, so making every item first and handing the list to
the consumer is exact (the fast path). For a user's object it may write what the generator reads
next. So a generator drained by such a consumer runs as the consumer's own loop, written out here
as a copy of the generator function (``generator_eagerness.py`` sends the call to it):

    def _yb_sum_g(n):                              # sum(g(n))
        _yb_yielded = []
        _yb_folding = False
        _yb_acc = None
        for k in range(n):
            _yb_item = <what g yields>
            if not _yb_folding and plain_data(_yb_item):
                _yb_yielded.append(_yb_item)        # numbers so far: summed at the end, at once
            else:                                  # from the first other item: Python's loop
                if not _yb_folding:
                    _yb_folding = True
                    _yb_acc = sum(_yb_yielded)
                _yb_acc = _yb_acc + _yb_item
        return _yb_acc if _yb_folding else sum(_yb_yielded)

The plain items before the first other one are combined by the consumer itself (its value is
CPython's: ``sum`` of floats is compensated from Python 3.12), then each item is combined as it is
made. A generator whose body is pure by syntax also gets a head that builds the list in one
comprehension when its arguments and the variables it reads are plain data (its items then are
too). ``np.fromiter`` of an item that is not plain data is refused by name: its conversion runs
the user's ``__float__`` without derivatives.
"""
from __future__ import annotations

import ast
import copy

from .generator_expressions import HOISTED
from .list_builders import YIELDED, ItemsRewriter, comprehension_form
from .parsing import parse as parse_source

__all__ = ["DTYPE", "FOLDING", "fold_copy", "fold_name", "folds_an_expression"]

DTYPE = "_yb_dtype"  # the first parameter of np.fromiter's copy

_ITEM, _FOLDING, _ACC = "_yb_item", "_yb_folding", "_yb_acc"
_CHECK = "_yb_plain_data"

#: the consumer's step for an item that is not plain data (``{c}``: the consumer)
_STEPS = {
    "sum": f"""
if not {_FOLDING}:
    {_FOLDING} = True
    {_ACC} = {{c}}({YIELDED})
{_ACC} = {_ACC} + {_ITEM}
""",
    "max": f"""
if {_FOLDING}:
    if {_ITEM} {{op}} {_ACC}:
        {_ACC} = {_ITEM}
elif {YIELDED}:
    {_FOLDING} = True
    {_ACC} = {{c}}({YIELDED})
    if {_ITEM} {{op}} {_ACC}:
        {_ACC} = {_ITEM}
else:
    {_FOLDING} = True
    {_ACC} = {_ITEM}
""",
    "set": f"""
if not {_FOLDING}:
    {_FOLDING} = True
    {_ACC} = set({YIELDED})
{_ACC}.add({_ITEM})
""",
    "dict": f"""
if not {_FOLDING}:
    {_FOLDING} = True
    {_ACC} = dict({YIELDED})
_yb_key, _yb_value = {_ITEM}
{_ACC}[_yb_key] = _yb_value
""",
    "fromiter": """
raise TypeError({message!r})
""",
}
#: consumer name -> (its step, the comparison of max and min)
FOLDING = {"sum": ("sum", ""), "max": ("max", ">"), "min": ("max", "<"), "set": ("set", ""),
           "frozenset": ("set", ""), "dict": ("dict", ""), "fromiter": ("fromiter", "")}


def fold_name(consumer: str, name: str) -> str:
    """``_yb_sum_genexpr`` for a rewritten generator expression ``_yb_genexpr`` summed,
    ``_yb_sum_of_g`` for the user's ``g``."""
    return f"_yb_{consumer}_{name[len('_yb_'):]}" if name.startswith(HOISTED) else f"_yb_{consumer}_of_{name}"


def folds_an_expression(name: str) -> bool:
    """Whether ``name`` is the copy of a rewritten generator expression drained by a consumer."""
    return any(name.startswith(f"_yb_{consumer}_{HOISTED[len('_yb_'):]}") for consumer in FOLDING)


def fold_copy(function: ast.FunctionDef, consumer: str, name: str, filename: str, fast_check: list | None,
              spelt: str = "") -> ast.FunctionDef:
    """A copy of the generator function ``function`` named ``name`` that returns what
    ``consumer`` (a key of ``FOLDING``) of its items is, in Python's order (see the module's
    docstring). ``fast_check``: the names whose being plain data lets it build its items first (a
    pure body), or None; ``spelt``: how the call wrote the consumer (``np.fromiter(..., float)``:
    the dtype, and how the call spells NumPy)."""
    made = copy.deepcopy(function)
    made.name = name
    at = function.body[0]
    combine = f"{spelt}.fromiter({{items}}, {DTYPE})" if consumer == "fromiter" else f"{consumer}({{items}})"
    fast = _fast_head(made, combine, fast_check, at)
    body = _Folded(made, filename, _step(consumer, function, filename), combine).rewritten()
    made.body = [*_parsed(f"from yuebing.ir.primitives import plain_data as {_CHECK}", at), *fast,
                 *_parsed(f"{YIELDED} = []\n{_FOLDING} = False\n{_ACC} = None", at), *body, _finish(combine, at)]
    if consumer == "fromiter":
        made.args.posonlyargs.insert(0, ast.arg(DTYPE))
    return made


def _fast_head(made: ast.FunctionDef, combine: str, fast_check: list | None, at: ast.stmt) -> list:
    comprehension = comprehension_form(made.body) if fast_check is not None else None
    if comprehension is None:
        return []
    head = _parsed(f"if {_CHECK}({', '.join(fast_check)}):\n    return {combine.format(items='[]')}", at)
    head[0].body[0].value.args[0] = copy.deepcopy(comprehension)
    return head


def _parsed(text: str, at: ast.AST) -> list:
    """The statements of ``text``, placed at ``at``'s line (the user's line in errors)."""
    statements = parse_source(text).body
    for s in statements:
        for n in ast.walk(s):
            if "lineno" in n._attributes:
                n.lineno, n.end_lineno = at.lineno, getattr(at, "end_lineno", at.lineno)
                n.col_offset, n.end_col_offset = at.col_offset, getattr(at, "end_col_offset", at.col_offset)
    return statements


def _finish(combine: str, at: ast.AST) -> ast.stmt:
    final = f"frozenset({_ACC})" if combine.startswith("frozenset") else _ACC
    return _parsed(f"return {final} if {_FOLDING} else {combine.format(items=YIELDED)}", at)[0]


def _step(consumer: str, function: ast.FunctionDef, filename: str) -> str:
    kind, op = FOLDING[consumer]
    if kind == "fromiter":
        message = (f"yuebing cannot differentiate np.fromiter of an item that is not a number or array (a user "
                   f"object, converted by its __float__ without derivatives).\n  File \"{filename}\", line "
                   f"{function.lineno}\nWhat to do: yield numbers from the generator (convert them in its body), "
                   "or build the array with np.array([...]) from numbers.")
        return _STEPS[kind].format(message=message)
    return _STEPS[kind].format(c=consumer, op=op)


class _Folded(ItemsRewriter):
    """``yield v`` -> the step of the consumer's loop, ``return`` -> its result."""

    def __init__(self, function: ast.FunctionDef, filename: str, step: str, combine: str) -> None:
        super().__init__(function, filename)
        self.step, self.combine = step, combine

    def item(self, value: ast.expr, at: ast.stmt) -> list:
        text = f"{_ITEM} = None\nif not {_FOLDING} and {_CHECK}({_ITEM}):\n    {YIELDED}.append({_ITEM})\nelse:\n    pass"
        made = _parsed(text, at)
        made[0].value = value
        kept = [] if self.step.lstrip().startswith("raise") else _parsed(f"{YIELDED}.append({_ITEM})", at)
        made[1].orelse = [*_parsed(self.step.strip(), at), *kept]  # (kept in the list too: its length bounds
        return made                                                # a generator that does not end)

    def delegated(self, iterable: ast.expr, at: ast.stmt) -> list:
        loop = _parsed(f"for {_ITEM}_from in None:\n    pass", at)[0]
        loop.iter = iterable
        loop.body = self.item(ast.copy_location(ast.Name(f"{_ITEM}_from", ast.Load()), at), at)
        return [loop]

    def visit_Return(self, node: ast.Return) -> ast.AST:
        return _finish(self.combine, node)
