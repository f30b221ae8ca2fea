"""Stage 3, part of ``normalise.py``: displays and comprehensions lowered to the IR. A tuple,
list, set or dict display (``(a, b)``, ``[a, *rest]``, ``{k: v, **more}``) becomes calls of the
``ir.primitives`` makers; an f-string reads each ``{value}`` into a variable first; a list, set or
dict comprehension or a generator expression becomes loops appending to a new container (a
generator expression is materialised, as documented), its variables renamed so they cannot
clash with the function's."""
from __future__ import annotations

import ast
import builtins
import operator
from typing import Any

from ..ir import nodes as ir
from ..ir import primitives as P
from .renaming import _Renamer, _copy
from .truth_tests import tested


class DisplayLowering:
    """A mixin of ``normalise.Normaliser``: the ``expr_`` methods of displays and comprehensions."""

    def _display(self, node: ast.expr, out: list, target: str, maker: Any) -> ir.Atom:
        if any(isinstance(e, ast.Starred) for e in node.elts):
            built = self._starred_list(node.elts, out)
            if maker is P.mklist:
                return built
            convert = "tuple" if maker is P.mktuple else "set"
            self.globals[convert] = None
            return self.call(out, ir.Global(convert), [built], target)
        items = [self.expr(e, out) for e in node.elts]
        return self.call(out, ir.Const(maker), items, target)

    def expr_Tuple(self, node: ast.Tuple, out: list, target: str) -> ir.Atom:
        if not any(isinstance(e, ast.Starred) for e in node.elts):
            items = [self.expr(e, out) for e in node.elts]
            if all(isinstance(i, ir.Const) for i in items):
                return ir.Const(tuple(i.value for i in items))
            return self.call(out, ir.Const(P.mktuple), items, target)
        return self._display(node, out, target, P.mktuple)

    def expr_List(self, node: ast.List, out: list, target: str) -> ir.Atom:
        return self._display(node, out, target, P.mklist)

    def expr_Set(self, node: ast.Set, out: list, target: str) -> ir.Atom:
        return self._display(node, out, target, P.mkset)

    def expr_Dict(self, node: ast.Dict, out: list, target: str) -> ir.Atom:
        result = self.call(out, ir.Const(P.mkdict), [], target)
        for k, v in zip(node.keys, node.values):
            if k is None:
                self.call(out, ir.Const(dict.update), [result, self.expr(v, out)], None)
            else:
                key = self.expr(k, out)
                self.call(out, ir.Const(operator.setitem), [result, key, self.expr(v, out)], None)
        return result

    def expr_JoinedStr(self, node: ast.JoinedStr, out: list, target: str) -> ir.Atom:
        result = target or self.tmp()
        self.opaque(out, f"{result} = {ast.unparse(self._formatted_values_lowered(node, out))}", (result,))
        return ir.Var(result)

    def _formatted_values_lowered(self, node: ast.JoinedStr, out: list) -> ast.JoinedStr:
        """``node`` with each ``{value!c:spec}`` made a string first, by the call Python makes
        for it (``format(repr(value), spec)``; ``format(value, spec)`` without a conversion): a
        rule then sees float data formatted as text (``rules/float_text.py``: text parsed back
        into numbers in the same call is refused), and the string is built of strings."""
        values = []
        for part in node.values:
            if not isinstance(part, ast.FormattedValue):
                values.append(part)
                continue
            atom = self.expr(part.value, out)
            if part.conversion != -1:  # !s, !r, !a
                convert = {ord("s"): builtins.str, ord("r"): builtins.repr, ord("a"): builtins.ascii}[part.conversion]
                atom = self.call(out, ir.Const(convert), [atom], self.tmp())
            spec = ir.Const("")
            if part.format_spec:
                spec = self._joined(self._formatted_values_lowered(part.format_spec, out), out)
            text = self.call(out, ir.Const(builtins.format), [atom, spec], self.tmp())
            values.append(ast.FormattedValue(ast.Name(text.name, ast.Load()), -1, None))
        return ast.JoinedStr(values)

    def _joined(self, node: ast.JoinedStr, out: list) -> ir.Atom:
        """A nested f-string (a format spec ``{v:{width}.{digits}f}``) as a string variable."""
        if all(isinstance(part, ast.Constant) for part in node.values):
            return ir.Const("".join(part.value for part in node.values))
        name = self.tmp()
        self.opaque(out, f"{name} = {ast.unparse(node)}", (name,))
        return ir.Var(name)

    def _comprehension(self, node: Any, out: list, target: str, kind: str) -> ir.Atom:
        if (made := self._comprehension_as_function(node, target, out)) is not None:
            return made
        result = target or self.tmp("c")
        maker = {"list": P.mklist, "set": P.mkset, "dict": P.mkdict}[kind]
        self.call(out, ir.Const(maker), [], result)
        renames: dict[str, str] = {}
        for gen in node.generators:
            for name in {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}:
                renames[name] = self.tmp(name.lstrip("_") or "v")
                self.user_names[renames[name]] = self.user_names.get(name, name)  # for error messages
        first_iterable = node.generators[0].iter
        node = _Renamer(renames).visit(_copy(node))
        # Python evaluates the first iterable in the enclosing scope, before the comprehension's
        # variables exist: ``[v * 2 for x in x]`` iterates over the function's ``x``
        node.generators[0].iter = _copy(first_iterable)
        self._comprehension_cells(node, list(renames.values()))

        def innermost(body: list) -> None:
            if kind == "dict":
                key = self.expr(node.key, body)
                self.call(body, ir.Const(operator.setitem), [ir.Var(result), key, self.expr(node.value, body)], None)
            else:
                method = list.append if kind == "list" else set.add
                self.call(body, ir.Const(method), [ir.Var(result), self.expr(node.elt, body)], None)

        def nest(generators: list, body: list) -> None:
            if not generators:
                innermost(body)
                return
            gen = generators[0]
            if gen.is_async:
                raise self.error("async comprehensions", "use a plain loop", node)

            def loop_body(inner: list) -> None:
                guarded = inner
                for cond in gen.ifs:
                    test = tested(self, cond, guarded)
                    branch: list = []
                    guarded.append(ir.If(test, branch, [], line=self.line))
                    guarded = branch
                nest(generators[1:], guarded)

            self._for_loop(gen.target, gen.iter, loop_body, body, None)

        self._repeated(nest, node.generators, out)
        return ir.Var(result)

    def expr_ListComp(self, node: ast.ListComp, out: list, target: str) -> ir.Atom:
        return self._comprehension(node, out, target, "list")

    def expr_GeneratorExp(self, node: ast.GeneratorExp, out: list, target: str) -> ir.Atom:
        return self._comprehension(node, out, target, "list")  # materialised (documented)

    def expr_SetComp(self, node: ast.SetComp, out: list, target: str) -> ir.Atom:
        return self._comprehension(node, out, target, "set")

    def expr_DictComp(self, node: ast.DictComp, out: list, target: str) -> ir.Atom:
        return self._comprehension(node, out, target, "dict")
