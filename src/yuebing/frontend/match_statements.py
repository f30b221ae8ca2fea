"""``match`` statements rewritten as ``if``/``elif`` chains over the subject, evaluated once.

Each pattern becomes a condition that binds its captures with ``:=`` as it tests, following the
language reference (and CPython's compiler where the reference leaves the order open):

* a sequence pattern matches what CPython calls a sequence: a type with the ``Py_TPFLAGS_SEQUENCE``
  flag (list, tuple, range, memoryview, deque, array.array, ``collections.abc.Sequence``
  subclasses and registered classes; never str, bytes, bytearray or NumPy arrays). Without a star
  its length must equal the number of subpatterns; with one (``[a, *rest, b]``) it must be at
  least the number of the others, the subject is unpacked into a list (as CPython's
  ``UNPACK_EX`` does) and ``rest`` is a new list of the middle items;
* a mapping pattern matches a type with ``Py_TPFLAGS_MAPPING`` (dict and its subclasses,
  ``collections.abc.Mapping``) of at least as many keys as it names, each present (``in``, then
  read with ``[]``; CPython calls ``get``, which is the same for dicts and ordinary Mappings);
  ``**rest`` binds a new dict of the other keys, in the subject's order.

Captures may be bound even when a later part of the pattern fails, which the reference allows
("do not rely on bindings being made for a failed match"). Names the rewrite introduces start with
``_yb_`` and are bound to the functions of ``ir/primitives.py`` (``runtime_names.py``).
"""
from __future__ import annotations

import ast
import copy

from .runtime_names import helper_call, walk_own_scope


class _Unsupported(Exception):
    """A pattern the rewrite does not cover: the statement is left for the fence to refuse."""


def _binding(name: str, value: ast.expr) -> ast.expr:
    """An always-true test that binds ``name`` (``[(name := value)]``, a non-empty list)."""
    return ast.List([ast.NamedExpr(ast.Name(name, ast.Store()), value)], ast.Load())


def _attribute(value: ast.expr, attr: str) -> ast.expr:
    return ast.Attribute(value, attr, ast.Load())


def _all(tests: list) -> ast.expr:
    tests = [t for t in tests if not (isinstance(t, ast.Constant) and t.value is True)]
    if not tests:
        return ast.Constant(True)
    return tests[0] if len(tests) == 1 else ast.BoolOp(ast.And(), tests)


def _item(value: ast.expr, index: ast.expr | int) -> ast.expr:
    return ast.Subscript(value, ast.Constant(index) if isinstance(index, int) else index, ast.Load())


def _length(subject: ast.expr, op: ast.cmpop, n: int) -> ast.expr:
    return ast.Compare(helper_call("len", subject), [op], [ast.Constant(n)])


class _Patterns:
    """Builds the tests of one ``match`` statement's patterns (fresh names from ``names``)."""

    def __init__(self, names: _Counter) -> None:
        self.names = names

    def test(self, pattern: ast.pattern, subject: ast.expr) -> ast.expr:
        """The condition (binding captures as it goes) under which ``subject`` matches ``pattern``."""
        if isinstance(pattern, ast.MatchValue):
            return ast.Compare(subject, [ast.Eq()], [pattern.value])
        if isinstance(pattern, ast.MatchSingleton):
            return ast.Compare(subject, [ast.Is()], [ast.Constant(pattern.value)])
        if isinstance(pattern, ast.MatchAs):
            inner = ast.Constant(True) if pattern.pattern is None else self.test(pattern.pattern, subject)
            return inner if pattern.name is None else _all([inner, _binding(pattern.name, subject)])
        if isinstance(pattern, ast.MatchOr):
            return ast.BoolOp(ast.Or(), [self.test(p, subject) for p in pattern.patterns])
        if isinstance(pattern, ast.MatchSequence):
            return self.sequence(pattern, subject)
        if isinstance(pattern, ast.MatchMapping):
            return self.mapping(pattern, subject)
        if isinstance(pattern, ast.MatchClass):
            return self.cls(pattern, subject)
        raise _Unsupported

    def cls(self, pattern: ast.MatchClass, subject: ast.expr) -> ast.expr:
        """CPython's MATCH_CLASS: an instance of the class, whose attributes (positional ones named
        by ``__match_args__``; the subject itself for ``int(v)`` and the other built-ins) all exist,
        then each sub-pattern tested in order."""
        tests = [helper_call("isinstance", subject, pattern.cls)]
        values, n = [], len(pattern.patterns)
        if n:
            names = self.names.fresh("args")
            tests.append(_binding(names, helper_call("match_args", pattern.cls, ast.Constant(n))))
            itself = ast.Compare(ast.Name(names, ast.Load()), [ast.Is()], [ast.Constant(None)])
            for i in range(n):
                attr = _item(ast.Name(names, ast.Load()), i)
                values.append(ast.IfExp(itself, subject, helper_call("getattr", subject, attr)))
                tests.append(ast.BoolOp(ast.Or(), [itself, helper_call("hasattr", subject, attr)]))
        for attr in pattern.kwd_attrs:  # a missing attribute fails the match (no AttributeError)
            values.append(_attribute(subject, attr))
            if n:
                tests.append(helper_call("match_unique", pattern.cls, ast.Name(names, ast.Load()), ast.Constant(n),
                                         ast.Constant(attr)))
            tests.append(helper_call("hasattr", subject, ast.Constant(attr)))
        tests += [self.test(p, v) for p, v in zip([*pattern.patterns, *pattern.kwd_patterns], values)]
        return _all(tests)

    def sequence(self, pattern: ast.MatchSequence, subject: ast.expr) -> ast.expr:
        patterns = pattern.patterns
        stars = [i for i, p in enumerate(patterns) if isinstance(p, ast.MatchStar)]
        tests = [helper_call("match_sequence", subject)]
        if not stars:
            tests.append(_length(subject, ast.Eq(), len(patterns)))
            tests += [self.test(p, _item(subject, i)) for i, p in enumerate(patterns)]
            return _all(tests)
        star, after = stars[0], len(patterns) - stars[0] - 1
        tests.append(_length(subject, ast.GtE(), len(patterns) - 1))
        items = self.names.fresh("items")  # the subject unpacked, as CPython's UNPACK_EX does
        tests.append(_binding(items, helper_call("list", subject)))
        loaded = ast.Name(items, ast.Load())
        tests += [self.test(p, _item(loaded, i)) for i, p in enumerate(patterns[:star])]
        if patterns[star].name is not None:
            end = ast.BinOp(helper_call("len", loaded), ast.Sub(), ast.Constant(after))
            middle = ast.Subscript(loaded, ast.Slice(ast.Constant(star), end), ast.Load())
            tests.append(_binding(patterns[star].name, middle))
        tests += [self.test(p, _item(loaded, j - after)) for j, p in enumerate(patterns[star + 1:])]
        return _all(tests)

    def mapping(self, pattern: ast.MatchMapping, subject: ast.expr) -> ast.expr:
        tests = [helper_call("match_mapping", subject)]
        if pattern.keys:
            tests.append(_length(subject, ast.GtE(), len(pattern.keys)))
        # every key is looked up before any value is tested, as CPython's MATCH_KEYS does
        tests += [ast.Compare(key, [ast.In()], [subject]) for key in pattern.keys]
        tests += [self.test(p, ast.Subscript(subject, key, ast.Load())) for key, p in zip(pattern.keys, pattern.patterns)]
        if pattern.rest is not None:
            tests.append(_binding(pattern.rest, self._others(pattern.keys, subject)))
        return _all(tests)

    def _others(self, keys: list, subject: ast.expr) -> ast.expr:
        """``{k: subject[k] for k in subject if k not in (keys)}``: a new dict of the other keys."""
        key = self.names.fresh("key")
        loaded = ast.Name(key, ast.Load())
        condition = ast.Compare(loaded, [ast.NotIn()], [ast.Tuple(list(keys), ast.Load())])
        generator = ast.comprehension(ast.Name(key, ast.Store()), subject, [condition] if keys else [], 0)
        return ast.DictComp(loaded, ast.Subscript(subject, loaded, ast.Load()), [generator])


class _Counter:
    def __init__(self) -> None:
        self.count = 0

    def fresh(self, hint: str) -> str:
        self.count += 1
        return f"_yb_{hint}{self.count}"


class _MatchToIf(ast.NodeTransformer):
    """Each ``match`` the rewrite covers becomes ``subject = ...`` then an if/elif chain. Nested
    functions, lambdas and classes are left as they are: they are rewritten when they are
    differentiated themselves (until then they run as the Python they are)."""

    def __init__(self) -> None:
        self.names = _Counter()

    def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

    def visit_Match(self, node: ast.Match) -> ast.AST:
        node = self.generic_visit(node)
        name = self.names.fresh("subject")
        subject = ast.Name(name, ast.Load())
        try:
            tests = [_Patterns(self.names).test(c.pattern, subject) for c in node.cases]
        except _Unsupported:
            return node
        chain: list = []
        for case, test in reversed(list(zip(node.cases, tests))):
            if case.guard is not None:
                test = _all([test, case.guard])
            chain = [ast.If(test, case.body, chain)]
        assign = ast.Assign([ast.Name(name, ast.Store())], node.subject)
        return [ast.copy_location(assign, node), *(ast.copy_location(s, node) for s in chain)]


def desugar_match(node: ast.FunctionDef | ast.Lambda) -> ast.AST:
    """``node`` with the match statements of its own body rewritten (every pattern is covered:
    literals, ``None``/``True``/``False``, captures, ``_``, ``|``, sequences with or without a
    star, mappings with or without ``**rest``, classes, guards); a copy when anything changed."""
    if not any(isinstance(n, ast.Match) for n in walk_own_scope(node)):
        return node
    node = _MatchToIf().generic_visit(copy.deepcopy(node))  # (a lambda holds no statements)
    return ast.fix_missing_locations(node)
