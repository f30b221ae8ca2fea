"""The expression instructions of CPython 3.11 for ``frontend/decompiler.py``: each pops ``ast``
expressions off a simulated value stack and pushes the expression it computes. Markers
(``Mark``) stand for stack entries that are not values of the source: the NULL below a called
function, a method's ``self`` slot, an iterator, a function or comprehension being made, an
import, a ``with`` block's exit."""
from __future__ import annotations

import ast
import dataclasses
import dis
import sys
import types
from typing import Any


class DecompileError(Exception):
    """The code object uses a construct the decompiler does not rebuild (named in the message)."""


@dataclasses.dataclass(eq=False)
class Mark:
    kind: str
    value: Any = None


NULL = Mark("null")
FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)  # statements a made function becomes
_NULL_ABOVE = sys.version_info >= (3, 13)  # where ``LOAD_GLOBAL`` puts the NULL of a call
METHOD_SELF = Mark("method")

COND_JUMPS = {
    "POP_JUMP_FORWARD_IF_FALSE": False, "POP_JUMP_BACKWARD_IF_FALSE": False,
    "POP_JUMP_FORWARD_IF_TRUE": True, "POP_JUMP_BACKWARD_IF_TRUE": True,
    "POP_JUMP_FORWARD_IF_NONE": True, "POP_JUMP_BACKWARD_IF_NONE": True,
    "POP_JUMP_FORWARD_IF_NOT_NONE": True, "POP_JUMP_BACKWARD_IF_NOT_NONE": True,
}

_BINARY = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "//": ast.FloorDiv, "%": ast.Mod,
           "**": ast.Pow, "@": ast.MatMult, "&": ast.BitAnd, "|": ast.BitOr, "^": ast.BitXor,
           "<<": ast.LShift, ">>": ast.RShift}
_COMPARE = {"<": ast.Lt, "<=": ast.LtE, ">": ast.Gt, ">=": ast.GtE, "==": ast.Eq, "!=": ast.NotEq}
_UNARY = {"UNARY_NEGATIVE": ast.USub, "UNARY_POSITIVE": ast.UAdd, "UNARY_NOT": ast.Not, "UNARY_INVERT": ast.Invert}
_CONVERSIONS = {0: -1, 1: ord("s"), 2: ord("r"), 3: ord("a")}


def negate(test: ast.expr) -> ast.expr:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand
    return ast.UnaryOp(ast.Not(), test)


def merge_and(values: list) -> ast.expr:
    """``a and b``, flattened, with ``x < y and y < z`` (``y`` the very same node, shared by
    ``COPY``) merged back into the chained comparison ``x < y < z``."""
    flat: list = []
    for v in values:
        flat.extend(v.values if isinstance(v, ast.BoolOp) and isinstance(v.op, ast.And) else [v])
    merged: list = []
    for v in flat:
        prev = merged[-1] if merged else None
        if isinstance(v, ast.Compare) and isinstance(prev, ast.Compare) and v.left is prev.comparators[-1]:
            merged[-1] = ast.Compare(prev.left, prev.ops + v.ops, prev.comparators + v.comparators)
        else:
            merged.append(v)
    return merged[0] if len(merged) == 1 else ast.BoolOp(ast.And(), merged)


def constant(value: Any) -> ast.expr:
    """A constant as source writes it (tuples and frozensets as displays)."""
    if isinstance(value, tuple):
        return ast.Tuple([constant(v) for v in value], ast.Load())
    if isinstance(value, frozenset):
        return ast.Set([constant(v) for v in value]) if value else ast.Call(ast.Name("frozenset", ast.Load()), [], [])
    if isinstance(value, types.CodeType):
        return Mark("code", value)
    return ast.Constant(value)


class ExpressionOps:
    """Stack effects of the instructions that compute values (mixed into ``Decompiler``)."""

    def expr(self, value: Any) -> ast.expr:
        """A stack entry as an expression (a function being made becomes its ``lambda``)."""
        if isinstance(value, ast.expr):
            if getattr(value, "inplace", False):
                raise DecompileError("an in-place operation used as a value")
            return value
        if isinstance(value, Mark):
            if value.kind == "function" and isinstance(value.value, ast.Lambda):
                return value.value
            if value.kind == "iter":
                return value.value
        raise DecompileError(f"a stack entry ({getattr(value, 'kind', value)})")

    def op_NOP(self, i, stack, ctx, out):
        return None

    op_RESUME = op_PRECALL = op_MAKE_CELL = op_COPY_FREE_VARS = op_NOP
    op_ASYNC_GEN_WRAP = op_NOP  # the value an asynchronous generator yields, wrapped

    def op_RETURN_GENERATOR(self, i, stack, ctx, out):
        return i + 2  # and its POP_TOP: the generator prologue

    def op_PUSH_NULL(self, i, stack, ctx, out):
        stack.append(NULL)

    def op_LOAD_CONST(self, i, stack, ctx, out):
        stack.append(constant(self.ins[i].argval))

    def op_LOAD_FAST(self, i, stack, ctx, out):
        stack.append(ast.Name(self.ins[i].argval, ast.Load()))

    op_LOAD_DEREF = op_LOAD_CLOSURE = op_LOAD_NAME = op_LOAD_CLASSDEREF = op_LOAD_FAST

    def op_LOAD_GLOBAL(self, i, stack, ctx, out):
        if self.ins[i].arg & 1 and not _NULL_ABOVE:
            stack.append(NULL)
        stack.append(ast.Name(self.ins[i].argval, ast.Load()))
        if self.ins[i].arg & 1 and _NULL_ABOVE:
            stack.append(NULL)

    def op_LOAD_ASSERTION_ERROR(self, i, stack, ctx, out):
        name = ast.Name("AssertionError", ast.Load())
        name.assertion = True
        stack.append(name)

    def op_LOAD_ATTR(self, i, stack, ctx, out):
        stack.append(ast.Attribute(self.expr(stack.pop()), self.ins[i].argval, ast.Load()))

    def op_LOAD_METHOD(self, i, stack, ctx, out):
        self.op_LOAD_ATTR(i, stack, ctx, out)
        stack.append(METHOD_SELF)

    def op_LOAD_BUILD_CLASS(self, i, stack, ctx, out):
        stack.append(Mark("build_class"))

    op_SETUP_ANNOTATIONS = op_NOP

    def op_COPY(self, i, stack, ctx, out):
        stack.append(stack[-self.ins[i].arg])

    def op_SWAP(self, i, stack, ctx, out):
        n = self.ins[i].arg
        stack[-1], stack[-n] = stack[-n], stack[-1]

    def op_BINARY_OP(self, i, stack, ctx, out):
        right = self.expr(stack.pop())
        left = self.expr(stack.pop())
        symbol = dis._nb_ops[self.ins[i].arg][1]
        node = ast.BinOp(left, _BINARY[symbol.rstrip("=")](), right)
        node.inplace = symbol.endswith("=")
        stack.append(node)

    def op_BINARY_SUBSCR(self, i, stack, ctx, out):
        index = self.expr(stack.pop())
        stack.append(ast.Subscript(self.expr(stack.pop()), index, ast.Load()))

    def op_BUILD_SLICE(self, i, stack, ctx, out):
        parts = [self.expr(stack.pop()) for _ in range(self.ins[i].arg)][::-1]
        parts = [None if isinstance(p, ast.Constant) and p.value is None else p for p in parts]
        stack.append(ast.Slice(*parts))

    def compare(self, stack: list, op: ast.cmpop) -> None:
        right = self.expr(stack.pop())
        stack.append(ast.Compare(self.expr(stack.pop()), [op], [right]))

    def op_COMPARE_OP(self, i, stack, ctx, out):
        self.compare(stack, _COMPARE[self.ins[i].argval]())

    def op_IS_OP(self, i, stack, ctx, out):
        self.compare(stack, ast.IsNot() if self.ins[i].arg else ast.Is())

    def op_CONTAINS_OP(self, i, stack, ctx, out):
        self.compare(stack, ast.NotIn() if self.ins[i].arg else ast.In())

    def op_UNARY_NEGATIVE(self, i, stack, ctx, out):
        stack.append(ast.UnaryOp(_UNARY[self.ins[i].opname](), self.expr(stack.pop())))

    op_UNARY_POSITIVE = op_UNARY_NOT = op_UNARY_INVERT = op_UNARY_NEGATIVE

    def op_GET_ITER(self, i, stack, ctx, out):
        stack.append(Mark("iter", self.expr(stack.pop())))

    def op_YIELD_VALUE(self, i, stack, ctx, out):
        stack.append(ast.Yield(self.expr(stack.pop())))

    _YIELD_FROM = ["GET_YIELD_FROM_ITER", "LOAD_CONST", "SEND", "YIELD_VALUE", "RESUME", "JUMP_BACKWARD_NO_INTERRUPT"]

    def op_GET_YIELD_FROM_ITER(self, i, stack, ctx, out):
        """``yield from it``: the iterator, then a ``SEND``/``YIELD_VALUE`` loop; its value is
        what the sub-generator returns."""
        ins = self.ins[i:i + 6]
        if [x.opname for x in ins] != self._YIELD_FROM or ins[1].argval is not None or self.targets[i + 5] != i + 2:
            raise DecompileError("a yield from")
        stack.append(ast.YieldFrom(self.expr(stack.pop())))
        return self.targets[i + 2]

    def op_GET_AWAITABLE(self, i, stack, ctx, out):
        """``await x``: the same ``SEND``/``YIELD_VALUE`` loop as ``yield from``."""
        ins = self.ins[i:i + 6]
        if [x.opname for x in ins[1:]] != self._YIELD_FROM[1:] or ins[0].arg != 0 or ins[1].argval is not None \
                or self.targets[i + 5] != i + 2:
            raise DecompileError("an await")
        value = self.expr(stack.pop())
        stack.append(value if getattr(value, "awaited", False) else ast.Await(value))
        return self.targets[i + 2]

    # ------------------------------------------------------------------ displays

    def pop_n(self, stack: list, n: int) -> list:
        values = [self.expr(stack.pop()) for _ in range(n)]
        return values[::-1]

    def op_BUILD_TUPLE(self, i, stack, ctx, out):
        stack.append(ast.Tuple(self.pop_n(stack, self.ins[i].arg), ast.Load()))

    def op_BUILD_LIST(self, i, stack, ctx, out):
        stack.append(ast.List(self.pop_n(stack, self.ins[i].arg), ast.Load()))

    def op_BUILD_SET(self, i, stack, ctx, out):
        stack.append(ast.Set(self.pop_n(stack, self.ins[i].arg)))

    def op_BUILD_MAP(self, i, stack, ctx, out):
        items = self.pop_n(stack, 2 * self.ins[i].arg)
        stack.append(ast.Dict(items[::2], items[1::2]))

    def op_BUILD_CONST_KEY_MAP(self, i, stack, ctx, out):
        keys = self.expr(stack.pop())
        values = self.pop_n(stack, self.ins[i].arg)
        stack.append(ast.Dict(list(keys.elts), values))

    def op_LIST_TO_TUPLE(self, i, stack, ctx, out):
        arguments = ast.Tuple(stack.pop().elts, ast.Load())
        arguments.call_arguments = True  # ``f(a, *b)``: the positional arguments of a call
        stack.append(arguments)

    def op_LIST_EXTEND(self, i, stack, ctx, out):
        value = self.expr(stack.pop())
        display = stack[-self.ins[i].arg]
        if isinstance(value, ast.Tuple) and all(isinstance(e, ast.Constant) for e in value.elts) \
                and not display.elts:
            display.elts.extend(value.elts)  # a display of constants: ``[1, 2, 3]``
        else:
            display.elts.append(ast.Starred(value, ast.Load()))

    op_SET_UPDATE = op_LIST_EXTEND

    def op_DICT_UPDATE(self, i, stack, ctx, out):
        value = self.expr(stack.pop())
        display = stack[-self.ins[i].arg]
        display.keys.append(None)
        display.values.append(value)

    op_DICT_MERGE = op_DICT_UPDATE

    def element(self, i: int, stack: list, out: list, parts: tuple) -> None:
        """``LIST_APPEND``/``SET_ADD``/``MAP_ADD``: into a display, or a comprehension's element."""
        depth = self.ins[i].arg
        display = stack[-depth]
        if depth == 1 and isinstance(display, (ast.List, ast.Set)) and len(parts) == 1:
            display.elts.append(parts[0])
            return
        stmt = ast.Expr(ast.Constant(None))
        stmt.element = parts
        self.emit(out, stmt, i)

    def op_LIST_APPEND(self, i, stack, ctx, out):
        self.element(i, stack, out, (self.expr(stack.pop()),))

    op_SET_ADD = op_LIST_APPEND

    def op_MAP_ADD(self, i, stack, ctx, out):
        value = self.expr(stack.pop())
        self.element(i, stack, out, (self.expr(stack.pop()), value))

    def op_FORMAT_VALUE(self, i, stack, ctx, out):
        flags = self.ins[i].arg
        spec = self.expr(stack.pop()) if flags & 0x04 else None
        if isinstance(spec, ast.Constant):
            spec = ast.JoinedStr([spec])
        value = ast.FormattedValue(self.expr(stack.pop()), _CONVERSIONS[flags & 0x03], spec)
        stack.append(ast.JoinedStr([value]))

    def op_BUILD_STRING(self, i, stack, ctx, out):
        parts: list = []
        for part in self.pop_n(stack, self.ins[i].arg):
            parts.extend(part.values if isinstance(part, ast.JoinedStr) else [part])
        stack.append(ast.JoinedStr(parts))

    # ------------------------------------------------------------------ calls

    def op_KW_NAMES(self, i, stack, ctx, out):
        self.kwnames = self.code.co_consts[self.ins[i].arg]

    def op_CALL(self, i, stack, ctx, out):
        n = self.ins[i].arg
        raw = [stack.pop() for _ in range(n)][::-1]
        upper, lower = stack.pop(), stack.pop()
        names, self.kwnames = self.kwnames, ()
        if lower is NULL:
            func = upper
        elif upper is NULL:  # CPython 3.13: the callable, then NULL
            func = lower
        else:
            func = lower
            if upper is not METHOD_SELF:
                raw.insert(0, upper)
        if isinstance(func, Mark) and func.kind == "build_class":
            args = [a if isinstance(a, Mark) else self.expr(a) for a in raw]
            bases = args[2:len(args) - len(names)]
            keywords = [ast.keyword(k, v) for k, v in zip(names, args[len(args) - len(names):])]
            stack.append(Mark("function", self.class_definition(args[0].value, args[1].value, bases, keywords)))
            return
        if isinstance(func, Mark) and func.kind == "comprehension":
            if len(raw) != 1 or not (isinstance(raw[0], Mark) and raw[0].kind == "iter"):
                raise DecompileError("a comprehension call")
            stack.append(self.comprehension(func.value, raw[0].value))
            return
        if len(raw) == 1 and not names and isinstance(raw[0], Mark) and raw[0].kind == "function" \
                and isinstance(raw[0].value, FUNCTION_NODES) and lower is not NULL and upper is not METHOD_SELF:
            raw[0].value.decorator_list.insert(0, self.expr(func))  # ``@decorator`` over a def
            stack.append(raw[0])
            return
        args = [self.expr(a) for a in raw]
        positional = args[:len(args) - len(names)]
        keywords = [ast.keyword(k, v) for k, v in zip(names, args[len(positional):])]
        stack.append(ast.Call(self.expr(func), positional, keywords))

    def op_CALL_FUNCTION_EX(self, i, stack, ctx, out):
        kwargs = self.expr(stack.pop()) if self.ins[i].arg & 1 else None
        args = self.expr(stack.pop())
        upper, lower = stack.pop(), stack.pop()
        if NULL not in (upper, lower):
            raise DecompileError("a call with *args")
        func = self.expr(lower if upper is NULL else upper)
        positional = list(args.elts) if getattr(args, "call_arguments", False) else [ast.Starred(args, ast.Load())]
        if isinstance(args, ast.Tuple) and not args.elts and kwargs is not None:
            positional = []  # ``f(**m)``: no positional arguments make an empty tuple
        keywords = []
        if isinstance(kwargs, ast.Dict):
            for key, value in zip(kwargs.keys, kwargs.values):
                if key is not None and not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                    raise DecompileError("a call with computed keyword names")
                keywords.append(ast.keyword(key.value if key is not None else None, value))
        elif kwargs is not None:
            keywords.append(ast.keyword(None, kwargs))
        stack.append(ast.Call(func, positional, keywords))

    # ------------------------------------------------------------------ helpers for functions

    def elements(self, value: Any) -> list:
        value = self.expr(value)
        if not isinstance(value, ast.Tuple):
            raise DecompileError("default values")
        return list(value.elts)

    def keyword_defaults(self, value: Any) -> dict:
        value = self.expr(value)
        if not isinstance(value, ast.Dict) or not all(isinstance(k, ast.Constant) for k in value.keys):
            raise DecompileError("keyword-only default values")
        return {k.value: v for k, v in zip(value.keys, value.values)}


__all__ = ["COND_JUMPS", "DecompileError", "ExpressionOps", "METHOD_SELF", "Mark", "NULL", "constant",
           "merge_and", "negate"]
