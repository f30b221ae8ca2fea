"""Stage 1b, part of ``generators.py``: a ``yield`` inside a larger expression, hoisted.

The state machine (``generators.py``) knows three forms of yield: ``yield x`` as a statement,
``v = yield x`` and ``r = yield from g()``. Any other place is rewritten into those first, with
frame attributes as temporaries, keeping CPython's order of evaluation:

    total += (yield x) * 2          frame.hoisted1 = yield x
                                    total += frame.hoisted1 * 2

    f(a(), (yield), b)              frame.hoisted1 = a()        # evaluated before the yield
                                    frame.hoisted2 = yield
                                    f(frame.hoisted1, frame.hoisted2, b)

What is evaluated before the yield is kept in a temporary (a name or a frame variable is not:
only the generator itself writes those, and it is suspended); what comes after it stays in
place. ``and``/``or`` and ``a if c else b`` become ifs, so a yield is reached only when Python
reaches it. Temporaries are frame attributes because a yield ends ``resume``'s call.
"""
from __future__ import annotations

import ast
from typing import Callable

__all__ = ["Hoister"]

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def contains_yield(node: ast.AST) -> bool:
    """Whether ``node`` holds a yield of its own scope (not one of a nested function)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(n, _NESTED) or n is node:
            stack.extend(ast.iter_child_nodes(n))
    return False


class _Slot:
    """One child expression of a node, in evaluation order, that can be replaced."""

    def __init__(self, owner: object, field: str, index: int | None = None) -> None:
        self.owner, self.field, self.index = owner, field, index

    def get(self) -> ast.expr:
        value = getattr(self.owner, self.field)
        return value if self.index is None else value[self.index]

    def set(self, value: ast.expr) -> None:
        if self.index is None:
            setattr(self.owner, self.field, value)
        else:
            getattr(self.owner, self.field)[self.index] = value


def _slots(node: ast.AST) -> list[_Slot]:
    """The child expressions of ``node`` in the order CPython evaluates them."""
    if isinstance(node, ast.Dict):  # key, value, key, value, ...
        found = []
        for k in range(len(node.keys)):
            if node.keys[k] is not None:
                found.append(_Slot(node, "keys", k))
            found.append(_Slot(node, "values", k))
        return found
    if isinstance(node, ast.Call):
        found = [_Slot(node, "func")]
        found += [_Slot(a, "value") if isinstance(a, ast.Starred) else _Slot(node, "args", k)
                  for k, a in enumerate(node.args)]
        return found + [_Slot(k, "value") for k in node.keywords]
    found = []
    for field, value in ast.iter_fields(node):
        if isinstance(value, ast.expr):
            found.append(_Slot(node, field))
        elif isinstance(value, list):
            found += [_Slot(node, field, k) for k, v in enumerate(value) if isinstance(v, ast.expr)]
    return found


class Hoister:
    """Rewrites expressions holding yields into statements that the state machine compiles.

    ``temporary()`` gives a fresh frame attribute (an ``ast.Attribute`` to store into; its copy
    with ``ast.Load`` reads it); ``stable(e)`` says whether ``e`` may be read after a yield
    instead of before it (constants, names, the frame's variables)."""

    def __init__(self, temporary: Callable[[], ast.Attribute], stable: Callable[[ast.expr], bool]) -> None:
        self.temporary, self.stable = temporary, stable

    def _store(self, value: ast.expr, out: list, at: ast.AST) -> ast.expr:
        target = self.temporary()
        out.append(ast.copy_location(ast.Assign([target], value), at))
        return ast.Attribute(target.value, target.attr, ast.Load())

    def expression(self, node: ast.expr, out: list) -> ast.expr:
        """Append to ``out`` the statements that compute ``node``'s yields (and what Python
        evaluates before them); return what stands for ``node`` after them."""
        if not contains_yield(node):
            return node
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            if node.value is not None:
                node.value = self.expression(node.value, out)
            return self._store(node, out, node)
        if isinstance(node, ast.BoolOp):
            return self._bool_op(node, out)
        if isinstance(node, ast.IfExp):
            return self._conditional(node, out)
        if isinstance(node, ast.NamedExpr):
            value = self.expression(node.value, out)
            out.append(ast.copy_location(ast.Assign([node.target], value), node))
            return ast.Attribute(node.target.value, node.target.attr, ast.Load()) \
                if isinstance(node.target, ast.Attribute) else ast.Name(node.target.id, ast.Load())
        self.children(node, out)
        return node

    def children(self, node: ast.AST, out: list, slots: list[_Slot] | None = None) -> None:
        """Hoist the yields of ``node``'s children: the children before the last one holding a
        yield are kept in temporaries (unless stable), that one is hoisted, the rest stay."""
        slots = _slots(node) if slots is None else slots
        last = max(k for k, s in enumerate(slots) if contains_yield(s.get()))
        for slot in slots[:last]:
            child = slot.get()
            if contains_yield(child):
                slot.set(self.expression(child, out))
            elif isinstance(node, ast.Call) and slot.field == "func" and isinstance(child, ast.Attribute):
                # a method: keep ``obj.name(...)`` a method call, the object held
                if not self.stable(child.value):
                    child.value = self._store(child.value, out, child)
            elif not self.stable(child):
                slot.set(self._store(child, out, child))
        slots[last].set(self.expression(slots[last].get(), out))

    def _bool_op(self, node: ast.BoolOp, out: list) -> ast.expr:
        """``a and b and c`` -> ``t = a; if t: t = b; if t: t = c`` (``or``: ``if not t``)."""
        first = next(k for k, v in enumerate(node.values) if contains_yield(v))
        head = node.values[0] if first <= 1 else ast.BoolOp(node.op, node.values[:first])
        if first == 0:
            head = self.expression(head, out)
        result = self._store(head, out, node)
        block = out
        for value in node.values[max(first, 1):]:
            test = result if isinstance(node.op, ast.And) else ast.UnaryOp(ast.Not(), result)
            inner: list = []
            computed = self.expression(value, inner)
            inner.append(ast.copy_location(ast.Assign([_store_of(result)], computed), node))
            block.append(ast.copy_location(ast.If(test, inner, []), node))
            block = block[-1].body
        return result

    def _conditional(self, node: ast.IfExp, out: list) -> ast.expr:
        """``a if c else b`` -> ``if c: t = a`` / ``else: t = b``."""
        test = self.expression(node.test, out)
        target = self.temporary()
        branches = []
        for value in (node.body, node.orelse):
            block: list = []
            computed = self.expression(value, block)
            block.append(ast.copy_location(ast.Assign([target], computed), node))
            branches.append(block)
        out.append(ast.copy_location(ast.If(test, *branches), node))
        return ast.Attribute(target.value, target.attr, ast.Load())


def _store_of(load: ast.Attribute) -> ast.Attribute:
    return ast.Attribute(load.value, load.attr, ast.Store())

