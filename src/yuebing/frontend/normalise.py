"""Stage 3: lower a Python function (``ast``) to yuebing's IR (``transform/ir.py``).

What the normal form guarantees to the transforms:
* one operation per statement: every operator, call, attribute access, subscript, display
  (``[a, b]``) and comparison becomes a ``Call`` of a known function object on atoms;
* ``and``/``or``/conditional expressions/chained comparisons become ``If`` (short-circuit kept);
* ``for`` loops become ``ForRange`` over indices (elements fetched by ``getitem``), or ``While``;
* ``break``/``continue``/early ``return`` become flags and guards, so the only ``Return`` is the
  last statement; comprehensions and generator expressions become loops building a list;
* ``a += b`` becomes ``a = operator.iadd(a, b)`` (the rule decides in place vs rebinding);
* nested ``def``/``lambda`` become ``MakeClosure``; ``raise``/``assert``/``import``/``class``
  stay as forward-only ``Opaque`` Python.
"""
from __future__ import annotations

import ast
import builtins
import operator
import types
from typing import Any

from ..ir import nodes as ir
from ..ir.generated_names import reserved
from ..ir import primitives as P
from .census import Census
from .closures import ClosureLowering, rebound_before_decorators
from .desugar import desugar
from .setattr_statements import has_setattr_statements, setattr_as_assignments
from .displays import DisplayLowering
from .fence import UnsupportedSyntaxError, _walk_own_scope, fence
from .flat_body import _flatten, _identifier, _Seq
from .generator_closing import cleanup_generators_called
from .generator_eagerness import called_generator_definitions
from .generator_effects import shadowed_builtins
from .global_writes import GlobalLowering, record_plain_reads, written_names
from .loops import LoopLowering, _jumps, _Loop
from .source import function_node, unparse_with_lines
from .truth_tests import asserted, boolean_operation, comparison, tested
from .underscore_names import NO_RENAMING, Renaming, UserGlobals, definition_time, rename_helper_names
from .underscore_names import rename_underscore_names, runs_annotations
from .with_statements import WithLowering

BINARY = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.MatMult: operator.matmul, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
    ast.BitXor: operator.xor, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
}
INPLACE = {
    ast.Add: operator.iadd, ast.Sub: operator.isub, ast.Mult: operator.imul, ast.Div: operator.itruediv,
    ast.FloorDiv: operator.ifloordiv, ast.Mod: operator.imod, ast.Pow: operator.ipow,
    ast.MatMult: operator.imatmul, ast.BitAnd: operator.iand, ast.BitOr: operator.ior,
    ast.BitXor: operator.ixor, ast.LShift: operator.ilshift, ast.RShift: operator.irshift,
}
UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_, ast.Invert: operator.invert}


class Normaliser(DisplayLowering, LoopLowering, ClosureLowering, GlobalLowering, WithLowering):
    """Lowers one function; loops, closures, written globals and ``with`` statements are in
    ``loops.py``, ``closures.py``, ``global_writes.py`` and ``with_statements.py``."""

    def __init__(self, fn: types.FunctionType, node: ast.AST, filename: str, cells: tuple = (),
                 census: Census | None = None, renaming: Renaming = NO_RENAMING) -> None:
        """``cells``: more of our variables to keep in cells (captured ones with several values);
        ``census``: ``node``'s (made here if not given); ``renaming``: the underscore names
        ``node`` has renamed (underscore_names.py)."""
        found = census if census is not None else Census(node)
        self.census = found
        self.fn = fn
        self.node = node
        self.filename = filename
        code = fn.__code__
        self.renaming = renaming
        self.module_globals = UserGlobals(fn.__globals__, renaming.global_keys())  # by our names
        self.locals = {renaming.new(n) for n in (*code.co_varnames, *code.co_cellvars)}
        self.free = list(code.co_freevars)
        self.globals: dict[str, None] = {}
        self.counter = 0
        self.loops: list[_Loop] = []
        self.line = getattr(node, "lineno", code.co_firstlineno)
        self.taken = set(found.all_names)  # every name and parameter in the tree
        self.uses_return_flag = False
        self.user_names: dict[str, str] = renaming.user_names()  # a renamed variable -> the user's
        # ``nonlocal x`` here: x is a cell of an enclosing function, read and written through it
        self.nonlocal_here = set(found.own_nonlocals)
        # ``global x`` here: x is written with global_set; globals that functions of the module
        # write are read with global_get (global_writes.py), the others are plain loads
        self.declared_globals = set(found.own_globals)
        self.learn_module_attribute_writes(node)
        self.written_globals = written_names(fn) | self.declared_globals
        # our variables that nested functions write with ``nonlocal``: kept in their cell
        written_inside = found.all_nonlocals
        cellvars = {renaming.new(n) for n in code.co_cellvars}
        self.cell_backed = sorted((written_inside - self.nonlocal_here) & cellvars | set(cells))
        self.repeats = 0  # loops and comprehensions around the code being lowered
        self.reassigned_captures: list[str] = []  # filled by function(): see normalise()

    # ---------------------------------------------------------------- helpers

    def tmp(self, hint: str = "t") -> str:
        while True:
            self.counter += 1
            name = f"_{hint}{self.counter}"
            if reserved(name):  # generated code's own (ir/generated_names.py): a plain temporary
                name = f"_t{self.counter}"
            if name not in self.taken:
                self.locals.add(name)
                return name

    def error(self, what: str, advice: str, node: ast.AST) -> UnsupportedSyntaxError:
        return UnsupportedSyntaxError(what, advice, self.filename, getattr(node, "lineno", self.line), self.fn.__qualname__)

    def call(self, out: list, func: ir.Atom, args: list, target: str | None = "", **kw: Any) -> ir.Atom:
        """Emit ``target = func(*args)``; an empty target means a fresh temporary."""
        if target == "":
            target = self.tmp()
        out.append(ir.Call(target, func, list(args), line=self.line, **kw))
        return ir.Var(target) if target else ir.Const(None)

    def opaque(self, out: list, source: str, defines: tuple = ()) -> None:
        out.append(ir.Opaque(source, line=self.line, defines=defines))

    def is_module_global(self, name: str) -> bool:
        value = self.module_globals.get(name, getattr(builtins, name, None))
        return isinstance(value, types.ModuleType)

    def builtin_unshadowed(self, name: str) -> bool:
        return name not in self.locals and name not in self.free and name not in self.module_globals

    # ---------------------------------------------------------------- expressions

    def expr(self, node: ast.expr, out: list, target: str = "") -> ir.Atom:
        self.line = getattr(node, "lineno", self.line)
        method = getattr(self, f"expr_{type(node).__name__}", None)
        if method is None:
            raise self.error(f"{type(node).__name__} expressions", "rewrite the expression", node)
        return method(node, out, target)

    def expr_Constant(self, node: ast.Constant, out: list, target: str) -> ir.Atom:
        return ir.Const(node.value)

    def _cell_of(self, name: str) -> ir.Var | None:
        """The cell holding ``name`` when it must be read and written through a cell."""
        if name in self.cell_backed:
            return ir.Var(f"_cellobj_{name}")
        if name in self.free and name in self.nonlocal_here:
            return ir.Var(f"_cell_{name}")
        return None

    def expr_Name(self, node: ast.Name, out: list, target: str) -> ir.Atom:
        name = node.id
        if name in self.cell_backed:
            return self.call(out, ir.Const(P.cell_get), [ir.Var(f"_cellobj_{name}")], target)
        if name in self.locals:
            return ir.Var(name)
        if name in self.free and not self._module_cell_is_global(name):
            return self.call(out, ir.Const(P.cell_get), [ir.Var(f"_cell_{name}")], target)
        if name in self.written_globals:
            return self.global_read(name, out, target)
        self.globals[name] = None
        return ir.Global(name)

    def _module_cell_is_global(self, name: str) -> bool:
        """A captured module that is also the global of that name (``np`` seen by a lambda made
        inside a differentiated function) is read as the global: constant, and ``np.sin``
        calls can be inlined."""
        code = self.fn.__code__
        if name not in code.co_freevars or not self.fn.__closure__:
            return False
        try:
            value = self.fn.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:
            return False
        return isinstance(value, types.ModuleType) and self.fn.__globals__.get(name) is value

    def expr_Attribute(self, node: ast.Attribute, out: list, target: str) -> ir.Atom:
        value = node.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super" \
                and len(value.args) in (0, 2) and not value.keywords and self.builtin_unshadowed("super") \
                and not any(isinstance(a, ast.Starred) for a in value.args):
            # super(C, obj).name as super().name with the class given: scikit-learn's Hyperparameter
            cls, first = [self.expr(a, out) for a in value.args] if value.args else self._super_parts(value)
            return self.call(out, ir.Const(P.super_getattr), [cls, first, ir.Const(node.attr)], target)
        path = self._module_path(node)
        if path is not None and (written := self.module_global_read(path, out, target)) is not None:
            return written
        if (written := self.own_module_read(node, out, target)) is not None:  # sys.modules[__name__].G
            return written
        if path is not None:
            self.globals[path.split(".")[0]] = None
            return ir.Global(path)
        obj = self.expr(node.value, out)
        return self.call(out, ir.Const(getattr), [obj, ir.Const(node.attr)], target)

    def _module_path(self, node: ast.expr) -> str | None:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id not in self.locals \
                and (node.id not in self.free or self._module_cell_is_global(node.id)) \
                and self.is_module_global(node.id):
            return ".".join([node.id] + parts[::-1])
        return None

    def expr_BinOp(self, node: ast.BinOp, out: list, target: str) -> ir.Atom:
        left = self.expr(node.left, out)
        right = self.expr(node.right, out)
        return self.call(out, ir.Const(BINARY[type(node.op)]), [left, right], target)

    def expr_UnaryOp(self, node: ast.UnaryOp, out: list, target: str) -> ir.Atom:
        operand = self.expr(node.operand, out)
        if isinstance(operand, ir.Const) and type(operand.value) in (int, float, complex) \
                and isinstance(node.op, (ast.USub, ast.UAdd)):
            return ir.Const(-operand.value if isinstance(node.op, ast.USub) else operand.value)
        return self.call(out, ir.Const(UNARY[type(node.op)]), [operand], target)

    def expr_BoolOp(self, node: ast.BoolOp, out: list, target: str) -> ir.Atom:
        return boolean_operation(self, node, out, target)  # (each operand's truth tested once: truth_tests.py)

    def expr_Compare(self, node: ast.Compare, out: list, target: str) -> ir.Atom:
        return comparison(self, node, out, target)  # (a chain tests each link's truth: truth_tests.py)

    def expr_IfExp(self, node: ast.IfExp, out: list, target: str) -> ir.Atom:
        result = target or self.tmp()
        test = tested(self, node.test, out)
        body: list = []
        orelse: list = []
        body.append(ir.Copy(result, self.expr(node.body, body), line=self.line))
        orelse.append(ir.Copy(result, self.expr(node.orelse, orelse), line=self.line))
        out.append(ir.If(test, body, orelse, line=self.line))
        return ir.Var(result)

    def expr_Call(self, node: ast.Call, out: list, target: str) -> ir.Atom:
        if isinstance(node.func, ast.Name) and node.func.id == "super" and not node.args \
                and self.builtin_unshadowed("super"):
            return self._zero_arg_super(node, out, target)
        done = self.globals_update(node, out)  # globals().update(...): global writes
        if done is not None:
            return done
        if self.is_globals_call(node):  # globals() passed on, iterated, measured (its items: above)
            return self.globals_view(out, target)
        func = self.expr(node.func, out)
        args: list = []
        star_args = None
        for a in node.args:
            if isinstance(a, ast.Starred):
                if star_args is not None or node.args[-1] is not a:
                    star_args = self._starred_list(node.args, out)
                    args = []
                    break
                star_args = self.expr(a.value, out)
            else:
                args.append(self.expr(a, out))
        kwargs: list = []
        star_kwargs = None
        for k in node.keywords:
            if k.arg is None:
                if star_kwargs is not None:
                    raise self.error("calls with two ** arguments", "merge the dicts first", node)
                star_kwargs = self.expr(k.value, out)
            else:
                kwargs.append((k.arg, self.expr(k.value, out)))
        if target == "":
            target = self.tmp()
        out.append(ir.Call(target, func, args, kwargs, line=self.line, star_args=star_args, star_kwargs=star_kwargs))
        return ir.Var(target)

    def _starred_list(self, nodes: list, out: list) -> ir.Atom:
        """A list built from positional arguments that include ``*x`` anywhere."""
        result = self.call(out, ir.Const(P.mklist), [])
        for a in nodes:
            if isinstance(a, ast.Starred):
                self.call(out, ir.Const(list.extend), [result, self.expr(a.value, out)], None)
            else:
                self.call(out, ir.Const(list.append), [result, self.expr(a, out)], None)
        return result

    def _super_parts(self, node: ast.Call) -> tuple[ir.Atom, ir.Atom]:
        if "__class__" not in self.free or not self.fn.__code__.co_varnames:
            raise self.error("super() outside a method", "call the base class explicitly", node)
        cls = ir.Var("_cell___class__")
        return cls, ir.Var(self.params()[0])

    def _zero_arg_super(self, node: ast.Call, out: list, target: str) -> ir.Atom:
        raise self.error("super() other than super().attribute", "call a method: super().method(...)", node)

    def expr_Subscript(self, node: ast.Subscript, out: list, target: str) -> ir.Atom:
        if (key := self.globals_key(node)) is not None:  # globals()["G"]: the global G
            return self.global_read(key, out, target)
        obj = self.expr(node.value, out)
        index = self.index(node.slice, out)
        return self.call(out, ir.Const(operator.getitem), [obj, index], target)

    def index(self, node: ast.expr, out: list) -> ir.Atom:
        if isinstance(node, ast.Slice):
            parts = [self.expr(p, out) if p is not None else ir.Const(None) for p in (node.lower, node.upper, node.step)]
            if all(isinstance(p, ir.Const) for p in parts):
                return ir.Const(slice(*(p.value for p in parts)))
            self.globals["slice"] = None
            return self.call(out, ir.Global("slice"), parts)
        if isinstance(node, ast.Tuple):
            items = [self.index(e, out) for e in node.elts]
            if all(isinstance(i, ir.Const) for i in items):
                return ir.Const(tuple(i.value for i in items))
            return self.call(out, ir.Const(P.mktuple), items)
        return self.expr(node, out)

    def expr_Lambda(self, node: ast.Lambda, out: list, target: str) -> ir.Atom:
        result = target or self.tmp("f")
        if self._defaults_through_a_factory(node, result, out):
            return ir.Var(result)
        self._definition_time_globals(node)
        captured = self._captured(node)
        shared = self._shared_cells(captured, out)
        out.append(ir.MakeClosure(result, f"{result} = {ast.unparse(node)}", captured, line=self.line, shared=shared))
        return ir.Var(result)

    def expr_NamedExpr(self, node: ast.NamedExpr, out: list, target: str) -> ir.Atom:
        """``(name := value)``: the assignment, then the name's value (which a cell may hold)."""
        self.assign(node.target, self.expr(node.value, out), out)
        return self.expr(ast.Name(node.target.id, ast.Load()), out)

    def expr_Starred(self, node: ast.Starred, out: list, target: str) -> ir.Atom:
        raise self.error("a starred expression here", "build the sequence explicitly", node)

    # ---------------------------------------------------------------- assignment

    def assign(self, target: ast.expr, value: ir.Atom, out: list) -> None:
        if isinstance(target, ast.Name) and target.id in self.declared_globals:
            self.global_write(target.id, value, out)
        elif isinstance(target, ast.Name):
            cell = self._cell_of(target.id)
            if cell is not None:
                self.call(out, ir.Const(P.cell_set), [cell, value], None)
                return
            if target.id in self.free:
                raise self.error("assignment to a variable of an enclosing function", "return the value instead", target)
            self.locals.add(target.id)
            if not (isinstance(value, ir.Var) and value.name == target.id):
                out.append(ir.Copy(target.id, value, line=self.line))
        elif isinstance(target, ast.Subscript) and (key := self.globals_key(target)) is not None:
            self.global_write(key, value, out)  # globals()["G"] = value: as global G; G = value
        elif isinstance(target, ast.Subscript) and _is_flat(target.value):
            owner = self.expr(target.value.value, out)  # x.flat[i] = v: NumPy's flat write (repeats, any layout)
            index = self.index(target.slice, out)
            self.call(out, ir.Const(P.flat_assign), [owner, index, value], None)
        elif isinstance(target, ast.Subscript):
            obj = self.expr(target.value, out)
            index = self.index(target.slice, out)
            self.call(out, ir.Const(operator.setitem), [obj, index, value], None)
        elif isinstance(target, ast.Attribute):
            if self.module_attribute_write(target, value, out):
                return
            obj = self.expr(target.value, out)
            self.call(out, ir.Const(setattr), [obj, ir.Const(target.attr), value], None)
        elif isinstance(target, (ast.Tuple, ast.List)):
            self._unpack(target.elts, value, out)
        else:
            raise self.error(f"assignment to {type(target).__name__}", "assign to a name first", target)

    def _unpack(self, targets: list, value: ir.Atom, out: list) -> None:
        stars = [i for i, t in enumerate(targets) if isinstance(t, ast.Starred)]
        seq = self.call(out, ir.Const(P.as_sequence), [value])
        n = len(targets)
        self.call(out, ir.Const(P.check_unpack), [seq, ir.Const(n - len(stars)), ir.Const(bool(stars))], None)
        star = stars[0] if stars else None
        for i, t in enumerate(targets):
            if i == star:
                after = n - i - 1
                part = self.call(out, ir.Const(operator.getitem), [seq, ir.Const(slice(i, -after if after else None))])
                self.assign(t.value, self.call(out, ir.Global("list"), [part]), out)
                self.globals["list"] = None
            else:
                index = i if star is None or i < star else i - n
                self.assign(t, self.call(out, ir.Const(operator.getitem), [seq, ir.Const(index)]), out)

    # ---------------------------------------------------------------- statements

    def block(self, statements: list) -> list:
        out: list = []
        for i, s in enumerate(statements):
            self.statement(s, out)
            jumps = _NO_JUMPS if isinstance(s, _LEAF_STATEMENTS) else _jumps(s)
            if jumps and i + 1 < len(statements) and not isinstance(s, (ast.Return, ast.Break, ast.Continue)):
                rest = self.block(statements[i + 1:])
                out.append(self._guarded(rest, jumps))
                return out
            if isinstance(s, (ast.Return, ast.Break, ast.Continue)):
                return out  # anything after is unreachable
        return out

    def _guarded(self, rest: list, jumps: set) -> ir.Statement:
        """``rest`` wrapped so it is skipped once a break/continue/return has happened."""
        flags = []
        if self.loops:
            flags.append(self.loops[-1].exit)
        if "return" in jumps:
            flags.append("_returned")
        go = self.tmp("go")
        test = " or ".join(flags) if flags else "False"
        return _Seq([ir.Opaque(f"{go} = not ({test})", line=self.line, defines=(go,)),
                     ir.If(ir.Var(go), rest, [], line=self.line)])

    def statement(self, node: ast.stmt, out: list) -> None:
        self.line = node.lineno
        method = getattr(self, f"stmt_{type(node).__name__}", None)
        if method is None:
            raise self.error(f"{type(node).__name__} statements", "rewrite the statement", node)
        method(node, out)

    def stmt_Expr(self, node: ast.Expr, out: list) -> None:
        if isinstance(node.value, ast.Constant):
            return  # docstring or bare constant
        value = self.expr(node.value, out, target=None) if isinstance(node.value, ast.Call) else self.expr(node.value, out)
        del value

    def stmt_Assign(self, node: ast.Assign, out: list) -> None:
        if self.globals_alias_binding(node):  # g = globals(), g only read as its items: lowered where read
            return
        direct = len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
            and node.targets[0].id not in self.free and self._cell_of(node.targets[0].id) is None \
            and node.targets[0].id not in self.declared_globals
        if direct and _writes_target_last(node.value, node.targets[0].id):
            self.locals.add(node.targets[0].id)
            value = self.expr(node.value, out, target=node.targets[0].id)
            self.assign(node.targets[0], value, out)
            return
        value = self.expr(node.value, out)
        for t in node.targets:
            self.assign(t, value, out)

    def stmt_AnnAssign(self, node: ast.AnnAssign, out: list) -> None:
        if node.value is not None:
            self.stmt_Assign(ast.Assign([node.target], node.value, lineno=node.lineno), out)

    def stmt_AugAssign(self, node: ast.AugAssign, out: list) -> None:
        op = ir.Const(INPLACE[type(node.op)])
        t = node.target
        if isinstance(t, ast.Name) and t.id in self.declared_globals:
            new = self.call(out, op, [self.expr(t, out), self.expr(node.value, out)])
            self.assign(t, new, out)
        elif isinstance(t, ast.Name):
            cell = self._cell_of(t.id)
            if cell is not None:
                current = self.expr(t, out)
                new = self.call(out, op, [current, self.expr(node.value, out)])
                self.call(out, ir.Const(P.cell_set), [cell, new], None)
                return
            if t.id in self.free:
                raise self.error("augmented assignment to a variable of an enclosing function", "return the value instead", t)
            current = self.expr(t, out)
            self.locals.add(t.id)
            value = self.expr(node.value, out)
            self.call(out, op, [current, value], t.id)
        elif isinstance(t, ast.Subscript) and (self.globals_key(t) is not None or _is_flat(t.value)):
            # globals()["G"] += v, x.flat[i] += v: a read, then the write as an assignment makes it
            new = self.call(out, op, [self.expr(t, out), self.expr(node.value, out)])
            self.assign(t, new, out)
        elif isinstance(t, ast.Subscript):
            obj = self.expr(t.value, out)
            index = self.index(t.slice, out)
            current = self.call(out, ir.Const(operator.getitem), [obj, index])
            new = self.call(out, op, [current, self.expr(node.value, out)])
            self.call(out, ir.Const(operator.setitem), [obj, index, new], None)
        elif isinstance(t, ast.Attribute) and self.module_of_attribute(t) is not None:  # mod.G += x
            new = self.call(out, op, [self.expr(t, out), self.expr(node.value, out)])
            self.assign(t, new, out)
        elif isinstance(t, ast.Attribute):
            obj = self.expr(t.value, out)
            current = self.call(out, ir.Const(getattr), [obj, ir.Const(t.attr)])
            new = self.call(out, op, [current, self.expr(node.value, out)])
            self.call(out, ir.Const(setattr), [obj, ir.Const(t.attr), new], None)
        else:
            raise self.error("this augmented assignment target", "assign explicitly", t)

    def stmt_Return(self, node: ast.Return, out: list) -> None:
        value = self.expr(node.value, out) if node.value is not None else ir.Const(None)
        if self.uses_return_flag:
            out.append(ir.Copy("_retval", value, line=self.line))
            out.append(ir.Opaque("_returned = True", line=self.line, defines=("_returned",)))
            for loop in self.loops:
                out.append(ir.Opaque(f"{loop.exit} = {loop.stop} = True", line=self.line))
        else:
            out.append(ir.Return(value, line=self.line))

    def stmt_Pass(self, node: ast.Pass, out: list) -> None:
        pass

    def stmt_Global(self, node: ast.Global, out: list) -> None:
        pass  # a declaration: writes of these names go through global_set (assign)

    def stmt_Nonlocal(self, node: ast.Nonlocal, out: list) -> None:
        pass  # a declaration: reads and writes of these names go through their cells

    def stmt_Break(self, node: ast.Break, out: list) -> None:
        loop = self.loops[-1]
        out.append(ir.Opaque(f"{loop.exit} = {loop.stop} = True", line=self.line))

    def stmt_Continue(self, node: ast.Continue, out: list) -> None:
        out.append(ir.Opaque(f"{self.loops[-1].exit} = True", line=self.line))

    def stmt_If(self, node: ast.If, out: list) -> None:
        test = tested(self, node.test, out)
        line = node.lineno
        body = self.block(node.body)
        orelse = self.block(node.orelse)
        out.append(ir.If(test, body, orelse, line=line))

    def stmt_Raise(self, node: ast.Raise, out: list) -> None:
        if isinstance(node.exc, ast.Call) and any(not isinstance(a, (ast.Constant, ast.JoinedStr)) for a in
                                                  [*node.exc.args, *(k.value for k in node.exc.keywords)]):
            # raise E(x * 2.0): the exception is made by a call, whose rule keeps what it carries
            # with its derivative for the handler's reads (rules/exception_data.py)
            made = self.expr(node.exc, out)
            self._exception_class_call(node.exc.func, out[-1])
            node = ast.Raise(ast.Name(made.name, ast.Load()), node.cause)
        node = ast.Raise(self._cells_read(node.exc, out), self._cells_read(node.cause, out))
        node = ast.Raise(self.current_globals(node.exc, out), self.current_globals(node.cause, out))
        self._hoist_globals([e for e in (node.exc, node.cause) if e is not None])
        self.opaque(out, ast.unparse(node))

    def _exception_class_call(self, func: ast.expr, call: ir.Statement) -> None:
        """``raise E(...)`` where ``E`` names an exception class (a global or builtin): the call
        becomes ``made_exception(E, ...)``, a primitive with rules in every mode (third order takes
        it as a constant when nothing it is given carries a tangent); other callees (an attribute,
        a factory function) stay calls the runtimes dispatch."""
        if not isinstance(func, ast.Name) or func.id in self.locals or func.id in self.free or not isinstance(call, ir.Call):
            return
        value = self.module_globals.get(func.id, getattr(builtins, func.id, None))
        if isinstance(value, type) and issubclass(value, BaseException):
            call.args, call.func = [call.func, *call.args], ir.Const(P.made_exception)

    def _cells_read(self, node: ast.expr | None, out: list) -> ast.expr | None:
        """An expression of an opaque statement that reads a closure cell, evaluated first (the
        statement's text would read the cell's name, not its contents)."""
        if node is None or not any(isinstance(n, ast.Name) and (n.id in self.cell_backed or n.id in self.free)
                                   for n in ast.walk(node)):
            return node
        return ast.Name(str(self.expr(node, out)), ast.Load())

    def stmt_Assert(self, node: ast.Assert, out: list) -> None:
        node = asserted(self, node, out)  # (a user object's __bool__ may do float work)
        node = ast.Assert(self.current_globals(node.test, out), self.current_globals(node.msg, out))
        self._hoist_globals([e for e in (node.test, node.msg) if e is not None])
        self.opaque(out, ast.unparse(node))

    def stmt_Import(self, node: ast.Import, out: list) -> None:
        if self.import_into_globals(node, out):
            return
        names = tuple((a.asname or a.name).split(".")[0] for a in node.names)
        self.locals.update(names)
        self.opaque(out, ast.unparse(node), names)

    stmt_ImportFrom = stmt_Import

    def stmt_Delete(self, node: ast.Delete, out: list) -> None:
        for t in node.targets:
            if isinstance(t, ast.Name) and t.id in self.declared_globals:
                self.global_delete(t.id, out)
            elif isinstance(t, ast.Name):
                self.opaque(out, f"del {t.id}")
            elif isinstance(t, ast.Subscript) and (key := self.globals_key(t)) is not None:
                self.global_delete(key, out)  # del globals()[k]
            elif isinstance(t, ast.Subscript):
                obj = self.expr(t.value, out)
                self.call(out, ir.Const(operator.delitem), [obj, self.index(t.slice, out)], None)
            elif isinstance(t, ast.Attribute):
                obj = self.expr(t.value, out)
                self.call(out, ir.Const(delattr), [obj, ir.Const(t.attr)], None)
            else:
                raise self.error("del of this target", "delete items one by one", t)

    def stmt_Try(self, node: ast.Try, out: list) -> None:
        # The exception types are evaluated by the generated code as written, like ``with`` headers
        # (one reading a closure cell, ``except kind`` of a captured class, before the try: the
        # generated code's text would read the cell's name).
        line = node.lineno
        types_ = [self.current_globals(self._cells_read(h.type, out), out) for h in node.handlers]
        self._hoist_globals([t for t in types_ if t is not None])
        body = self.block(node.body)
        handlers = []
        for h, t in zip(node.handlers, types_):
            self.line = h.lineno
            h = self.global_handler(h)  # except ... as E, E declared global
            if h.name is not None:
                self.locals.add(h.name)
            handlers.append(ir.Handler(ast.unparse(t) if t is not None else "", h.name, self.block(h.body), line=h.lineno))
        orelse, finalbody = self.block(node.orelse), self.block(node.finalbody)
        out.append(ir.Try(body, handlers, orelse, finalbody, line=line))

    def _definition_time_globals(self, node: ast.FunctionDef | ast.Lambda) -> None:
        """Decorators, default values and annotations (unless the module makes them strings) run
        when the nested function is created, in the generated code: the globals they use must be hoisted there like any other (an
        annotation's were not: ``def _(v: np.ndarray)`` raised ``NameError: np``). (Decorators
        reading our variables or written globals, and defaults reading them, are lowered to
        calls: ``_decorators_as_calls``, ``_defaults_through_a_factory``.)"""
        self._hoist_globals(definition_time(node, runs_annotations(self.fn)))

    def _hoist_globals(self, exprs: list) -> None:
        """Globals read by source the generated code runs as is (definition-time expressions,
        ``with`` headers) are hoisted like any other global."""
        for e in exprs:
            for n in ast.walk(e):
                if isinstance(n, ast.Name) and n.id not in self.locals and n.id not in self.free:
                    self.globals[n.id] = None

    def stmt_FunctionDef(self, node: ast.FunctionDef, out: list) -> None:
        if self.global_definition(node, out):  # def H, H declared global
            return
        if self._decorators_as_calls(node, out):  # closures.py
            return
        if self._defaults_through_a_factory(node, node.name, out):
            return
        self._definition_time_globals(node)
        captured = self._captured(node)
        shared = self._shared_cells(captured, out)
        self.locals.add(node.name)
        text, lines = unparse_with_lines(rebound_before_decorators(node))
        out.append(ir.MakeClosure(node.name, text, captured, line=node.lineno, shared=shared, source_lines=lines))
        if node.name in self.cell_backed:  # the def wrote the cell; its derivative data goes in the cell's box too
            self.call(out, ir.Const(P.cell_set), [ir.Var(f"_cellobj_{node.name}"), ir.Var(node.name)], None)

    stmt_AsyncFunctionDef = stmt_FunctionDef  # made as written: rewritten when it is called (async_functions.py)

    def stmt_ClassDef(self, node: ast.ClassDef, out: list) -> None:
        # the class statement runs in the generated module, not the user's: the user's globals it
        # reads (decorators, bases, class attributes, its methods' bodies) are bound as locals
        # first, which the class body and its methods then see as enclosing variables
        if self.global_definition(node, out):  # class H, H declared global
            return
        node = self._lower_local_class(node, out)  # local_classes.py; before the globals join our locals
        read_here = self._read_by_the_class_statement(node)  # (methods reading written globals: the module's)
        self.refuse_written_globals("a class defined in a differentiated function", [read_here])
        loaded = {n.id for n in ast.walk(read_here) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        for name in sorted(loaded - self.locals - set(self.free)):
            if name in self.module_globals:
                self.opaque(out, f"{name} = _global(_G, {self.module_globals.key(name)!r})", (name,))
                self.locals.add(name)
        self.locals.add(node.name)
        self.opaque(out, ast.unparse(node), (node.name,))
        self.apply_class_decorators(node, out)  # (those reading our variables: local_classes.py)

    # ---------------------------------------------------------------- the function

    def _return_count(self, body_nodes: list, last: ast.stmt | None) -> int:
        """The ``return`` statements of the body, nested functions' counted too (the census
        answers without a walk when the tree holds none, or one that ends the body)."""
        if not isinstance(self.node, ast.Lambda):  # (a lambda's body is a made-up Return)
            if self.census.returns == 0:
                return 0
            if self.census.returns == 1 and isinstance(last, ast.Return):
                return 1
        return sum(isinstance(n, ast.Return) for s in body_nodes for n in [s, *_walk_own_scope(s)])

    def function(self) -> ir.Function:
        node = self.node
        if isinstance(node, ast.Lambda):
            body_nodes = [ast.Return(node.body, lineno=node.lineno, col_offset=0)]
        else:
            body_nodes = node.body
        last = body_nodes[-1] if body_nodes else None
        returns = self._return_count(body_nodes, last)
        simple = returns == 0 or (returns == 1 and isinstance(last, ast.Return))
        self.uses_return_flag = not simple
        body: list = []
        for name in self.free:
            if self._module_cell_is_global(name):
                # read as the global (see _module_cell_is_global): check that still holds
                body.append(ir.Opaque(
                    f"if _cell_{name}.cell_contents is not {name}: raise TypeError("
                    f"\"yuebing read the captured module '{name}' as the global of that name, "
                    f"but this closure captures a different one: rename it\")", line=self.line))
                self.globals[name] = None
        if self.uses_return_flag:
            body.append(ir.Copy("_retval", ir.Const(None), line=self.line))
            body.append(ir.Opaque("_returned = False", line=self.line, defines=("_returned",)))
            self.locals.update({"_retval", "_returned"})
        for name in self.cell_backed:
            if name in self.params():
                self.call(body, ir.Const(P.cell_set), [ir.Var(f"_cellobj_{name}"), ir.Var(name)], None)
        body += self.block(body_nodes)
        if self.uses_return_flag:
            body.append(ir.Return(ir.Var("_retval"), line=self.line))
        elif not returns:
            body.append(ir.Return(ir.Const(None), line=self.line))
        self.reassigned_captures = self._reassigned_captures(body)
        record_plain_reads(self.fn, map(self.module_globals.key, self.globals))
        return ir.Function(
            name=_identifier(self.fn.__name__),
            params=self.params(),
            body=_flatten(body),
            filename=self.filename,
            first_line=self.fn.__code__.co_firstlineno,
            free_vars=self.free,
            global_names=list(self.globals),
            cell_backed=list(self.cell_backed),
            user_names=dict(self.user_names),
            global_keys=self.renaming.global_keys(),
        )

    def params(self) -> list[str]:
        return self.renaming.parameters(self.fn.__code__)


def _writes_target_last(value: ast.expr, name: str) -> bool:
    """Whether ``name = value`` may be lowered with ``value`` built straight into ``name``.
    Comprehensions, dict displays, ``and``/``or`` and chained comparisons write their result
    before they have read all their operands, so they may not when they read ``name``
    (``xs = [2 * v for v in xs]``); everything else writes its target last."""
    early = isinstance(value, (ast.BoolOp, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)) \
        or isinstance(value, ast.Compare) and len(value.ops) > 1
    return not early or name not in {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}


#: statements no break, continue or return can leave (they hold no statements of this scope):
#: ``block`` need not walk them for jumps
_LEAF_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Pass, ast.Delete, ast.Raise,
                    ast.Assert, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.FunctionDef,
                    ast.AsyncFunctionDef, ast.ClassDef)
_NO_JUMPS: frozenset = frozenset()




def normalise(fn: types.FunctionType) -> ir.Function:
    """Stages 1-3 for ``fn``: source, fence, normal form."""
    node, filename = function_node(fn)
    found = Census(node)  # one walk: the passes below that have nothing to do are skipped
    node, found, helper_names = rename_helper_names(fn, node, found)  # (a user's _yb_x: the rewrites write such names)
    outside_generators = cleanup_generators_called(fn, node, found)  # (closed where dropped: generator_closing.py)
    called = called_generator_definitions(fn, node, found)  # (their eager copies: generator_eagerness.py)
    if found.may_be_rewritten(node) or outside_generators or called:
        rewritten = desugar(node, filename, outside_generators, called, shadowed_builtins(fn))
        if rewritten is not node:
            node, found = rewritten, Census(rewritten)
    if has_setattr_statements(node):  # setattr(mod, "G", x) as mod.G = x (setattr_statements.py)
        rewritten = setattr_as_assignments(node, shadowed_builtins(fn))
        if rewritten is not node:
            node, found = rewritten, Census(rewritten)
    if found.may_be_refused(node):
        fence(node, filename, fn.__qualname__)
    node, found, renaming = rename_underscore_names(fn, node, found, helper_names)  # the generated code's names are free
    normaliser = Normaliser(fn, node, filename, census=found, renaming=renaming)
    lowered = normaliser.function()
    if normaliser.reassigned_captures:
        # captured variables with several values: lowered again with them in cells (closures.py)
        lowered = Normaliser(fn, node, filename, cells=normaliser.reassigned_captures, census=found,
                             renaming=renaming).function()
    return lowered


def _is_flat(node: ast.expr) -> bool:
    """Whether ``node`` is ``<expr>.flat`` (written through with ``P.flat_assign``)."""
    return isinstance(node, ast.Attribute) and node.attr == "flat"
