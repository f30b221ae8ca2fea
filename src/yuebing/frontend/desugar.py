"""Stage 1b: rewrite constructs that have a plain equivalent, before the fence sees them.

``match`` statements become ``if``/``elif`` chains over the subject, evaluated once (patterns bind
their captures with ``:=`` as they test; sequence patterns match lists and tuples).

Generator functions become list builders: each ``yield v`` statement appends ``v`` to a list,
``yield from it`` extends it, and the function returns the list. Under differentiation a generator
is therefore evaluated eagerly, as comprehensions are; the values its consumer sees (``sum``,
``for``, ``list``, ``zip``) are the same, in the same order. A generator whose ``yield`` is used as
a value (``x = yield v``, ``send``) or that returns a value keeps its refusal in the fence. An
infinite generator cannot be evaluated eagerly: do not differentiate through one.

The rewrite works on a copy: the parsed tree is shared with other functions of the file.
"""
from __future__ import annotations

import ast
import copy

_YIELDED = "_yb_yielded"  # the list a rewritten generator builds (not a name users write)


def desugar(node: ast.FunctionDef | ast.Lambda) -> ast.FunctionDef | ast.Lambda:
    """``node`` with its match statements as if/elif chains (``desugar_match``) and every
    generator function in it (itself or nested) rewritten to build and return a list, where that
    is exact; ``node`` itself when there is nothing to rewrite."""
    node = desugar_match(node)
    if not any(_is_eager_generator(f) for f in _functions(node)):
        return node
    node = copy.deepcopy(node)
    for function in _functions(node):
        if _is_eager_generator(function):
            _to_list_builder(function)
    return ast.fix_missing_locations(node)


def _functions(node: ast.AST) -> list[ast.FunctionDef]:
    return [n for n in ast.walk(node) if isinstance(n, ast.FunctionDef)]


def _own_scope(function: ast.FunctionDef) -> list[ast.AST]:
    """The nodes of a function's body, not those of nested functions, lambdas or classes."""
    found, stack = [], list(function.body)
    while stack:
        child = stack.pop()
        found.append(child)
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(child))
    return found


def _is_eager_generator(function: ast.FunctionDef) -> bool:
    """A generator function whose yields are all statements and whose returns return nothing."""
    nodes = _own_scope(function)
    yields = [n for n in nodes if isinstance(n, (ast.Yield, ast.YieldFrom))]
    if not yields:
        return False
    statements = {id(n.value) for n in nodes if isinstance(n, ast.Expr)}
    if any(id(y) not in statements for y in yields):
        return False  # a yield used as a value (x = yield v): the generator protocol, not a list
    return all(r.value is None or isinstance(r.value, ast.Constant) and r.value.value is None
               for r in nodes if isinstance(r, ast.Return))


class _ToAppends(ast.NodeTransformer):
    """``yield v`` -> ``_yb_yielded.append(v)``, ``yield from it`` -> ``.extend(it)``, ``return``
    -> ``return _yb_yielded``, in one function's own scope."""

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return node  # a nested function: rewritten on its own (if it is a generator)

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        value = node.value
        if isinstance(value, (ast.Yield, ast.YieldFrom)):
            method = "extend" if isinstance(value, ast.YieldFrom) else "append"
            item = value.value if value.value is not None else ast.Constant(None)
            call = ast.Call(ast.Attribute(ast.Name(_YIELDED, ast.Load()), method, ast.Load()), [item], [])
            return ast.copy_location(ast.Expr(ast.copy_location(call, value)), node)
        return self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> ast.AST:
        return ast.copy_location(ast.Return(ast.Name(_YIELDED, ast.Load())), node)


def _to_list_builder(function: ast.FunctionDef) -> None:
    first = function.body[0]
    start = ast.copy_location(ast.Assign([ast.Name(_YIELDED, ast.Store())], ast.List([], ast.Load())), first)
    body = [_ToAppends().visit(s) for s in function.body]
    end = ast.copy_location(ast.Return(ast.Name(_YIELDED, ast.Load())), function.body[-1])
    function.body = [start, *body, end]


# --------------------------------------------------------------------------------------------
# match statements -> if/elif chains
# --------------------------------------------------------------------------------------------


class _Unsupported(Exception):
    """A pattern the rewrite does not cover: the statement is left for the fence to refuse."""


def _binding(name: str, value: ast.expr) -> ast.expr:
    """An always-true test that binds ``name`` (``[(name := value)]``, a non-empty list)."""
    return ast.List([ast.NamedExpr(ast.Name(name, ast.Store()), value)], ast.Load())


def _attribute(value: ast.expr, attr: str) -> ast.expr:
    return ast.Attribute(value, attr, ast.Load())


def _call(name: str, *args: ast.expr) -> ast.expr:
    return ast.Call(ast.Name(name, ast.Load()), list(args), [])


def _all(tests: list) -> ast.expr:
    tests = [t for t in tests if not (isinstance(t, ast.Constant) and t.value is True)]
    if not tests:
        return ast.Constant(True)
    return tests[0] if len(tests) == 1 else ast.BoolOp(ast.And(), tests)


def _pattern_test(pattern: ast.pattern, subject: ast.expr) -> ast.expr:
    """The condition (binding captures as it goes) under which ``subject`` matches ``pattern``."""
    if isinstance(pattern, ast.MatchValue):
        return ast.Compare(subject, [ast.Eq()], [pattern.value])
    if isinstance(pattern, ast.MatchSingleton):
        return ast.Compare(subject, [ast.Is()], [ast.Constant(pattern.value)])
    if isinstance(pattern, ast.MatchAs):
        inner = ast.Constant(True) if pattern.pattern is None else _pattern_test(pattern.pattern, subject)
        return inner if pattern.name is None else _all([inner, _binding(pattern.name, subject)])
    if isinstance(pattern, ast.MatchOr):
        return ast.BoolOp(ast.Or(), [_pattern_test(p, subject) for p in pattern.patterns])
    if isinstance(pattern, ast.MatchSequence):
        if any(isinstance(p, ast.MatchStar) for p in pattern.patterns):
            raise _Unsupported
        kinds = ast.Tuple([ast.Name("list", ast.Load()), ast.Name("tuple", ast.Load())], ast.Load())
        tests = [_call("isinstance", subject, kinds),
                 ast.Compare(_call("len", subject), [ast.Eq()], [ast.Constant(len(pattern.patterns))])]
        tests += [_pattern_test(p, ast.Subscript(subject, ast.Constant(i), ast.Load()))
                  for i, p in enumerate(pattern.patterns)]
        return _all(tests)
    if isinstance(pattern, ast.MatchMapping):
        if pattern.rest is not None:
            raise _Unsupported
        tests = [_call("isinstance", subject, ast.Name("dict", ast.Load()))]
        for key, p in zip(pattern.keys, pattern.patterns):
            tests.append(ast.Compare(key, [ast.In()], [subject]))
            tests.append(_pattern_test(p, ast.Subscript(subject, key, ast.Load())))
        return _all(tests)
    if isinstance(pattern, ast.MatchClass):
        tests = [_call("isinstance", subject, pattern.cls)]
        match_args = _attribute(pattern.cls, "__match_args__")
        for i, p in enumerate(pattern.patterns):
            name = ast.Subscript(match_args, ast.Constant(i), ast.Load())
            tests.append(_pattern_test(p, _call("getattr", subject, name)))
        for attr, p in zip(pattern.kwd_attrs, pattern.kwd_patterns):
            tests.append(_pattern_test(p, _attribute(subject, attr)))
        return _all(tests)
    raise _Unsupported


class _MatchToIf(ast.NodeTransformer):
    """Each ``match`` the rewrite covers becomes ``subject = ...`` then an if/elif chain."""

    def __init__(self) -> None:
        self.count = 0

    def visit_Match(self, node: ast.Match) -> ast.AST:
        node = self.generic_visit(node)
        name = f"_yb_subject{self.count}"
        self.count += 1
        subject = ast.Name(name, ast.Load())
        try:
            tests = [_pattern_test(c.pattern, subject) for c in node.cases]
        except _Unsupported:
            return node
        chain: list = []
        for case, test in reversed(list(zip(node.cases, tests))):
            if case.guard is not None:
                test = _all([test, case.guard])
            chain = [ast.If(test, case.body, chain)]
        assign = ast.Assign([ast.Name(name, ast.Store())], node.subject)
        return [ast.copy_location(assign, node), *(ast.copy_location(s, node) for s in chain)]


def desugar_match(node: ast.AST) -> ast.AST:
    """``node`` with its match statements rewritten where every pattern is covered (literals,
    ``None``/``True``/``False``, captures, ``_``, ``|``, fixed-length sequences, mappings without
    ``**rest``, classes, guards); a copy when anything changed."""
    if not any(isinstance(n, ast.Match) for n in ast.walk(node)):
        return node
    node = _MatchToIf().visit(copy.deepcopy(node))
    return ast.fix_missing_locations(node)
