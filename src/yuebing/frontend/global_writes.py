"""Globals that functions write with a ``global`` statement, per module.

A differentiated call may write a global (``global G; G = x * 2``) and read it later, in the
writer, a callee or a sibling function: the read must see the derivative as a local variable's
would. Such reads are lowered to ``global_get(fn, name)`` (whose rules look up the value's tangent
for the call, ``transform/global_writes.py``) and such writes to ``global_set``; every other global
load stays a plain load (a constant of the differentiation, and fast).

Which names a module writes is found once per module namespace and kept: the ``global``
statements in its source file, and the ``STORE_GLOBAL``/``DELETE_GLOBAL`` instructions of the
functions (and methods of classes) it holds, nested code included -- so functions without source
(``exec``, a notebook's cells sharing ``__main__``) count too. The namespace is scanned again when
it gained names (a new ``def``). A name found written only after some function was lowered
reading it as a plain load is *stale*: that function's compiled code treats it as a constant, so
a write carrying derivatives is refused then (``stale_reader``).
"""
from __future__ import annotations

import ast
import dis
import re
import types
from typing import Any

_STORES = frozenset({"STORE_GLOBAL", "DELETE_GLOBAL"})


class _Module:
    """What is known of one module namespace."""

    __slots__ = ("namespace", "size", "written", "plain_reads", "stale")

    def __init__(self, namespace: dict) -> None:
        self.namespace = namespace  # kept: its id stays its own
        self.size = -1
        self.written: set[str] = _names_in_source_file(namespace)
        self.plain_reads: dict[str, str] = {}  # name -> a function lowered reading it plainly
        self.stale: dict[str, str] = {}


_MODULES: dict[int, _Module] = {}
_CODE_STORES: dict[types.CodeType, frozenset] = {}


def written_names(fn: types.FunctionType) -> frozenset:
    """The globals of ``fn``'s module that some function of it writes with ``global`` (``fn``'s own
    nested code included)."""
    module = _known(fn.__globals__)
    own = _stored_in_code(fn.__code__)
    if not own <= module.written:
        _learn(module, own)
    return frozenset(module.written)


def written_in_module(module: types.ModuleType) -> frozenset:
    """The globals of ``module`` that some function of it writes with ``global``."""
    return frozenset(_known(vars(module)).written)


def _known(namespace: dict) -> _Module:
    """What is known of a module namespace, scanned again if it gained names since."""
    module = _module(namespace)
    if module.size != len(namespace):
        _rescan(module)
    return module


def learn_attribute_writes(module: types.ModuleType, names: Any) -> None:
    """Functions write ``names`` as attributes of ``module`` (``mod.G = x``): its globals of those
    names are read with ``global_get``, as ones written with ``global`` are."""
    _learn(_known(vars(module)), set(names))


def record_plain_reads(fn: types.FunctionType, names: Any) -> None:
    """``fn`` was lowered reading ``names`` as plain global loads (constants)."""
    reads = _module(fn.__globals__).plain_reads
    for name in names:
        reads.setdefault(name, fn.__qualname__)


def stale_reader(namespace: dict, name: str) -> str | None:
    """A function lowered reading global ``name`` as a constant before the name was found written
    (its code does not see the derivative a write gives), or None."""
    module = _MODULES.get(id(namespace))
    if module is None or module.namespace is not namespace:
        return None
    return module.stale.get(name)


def _module(namespace: dict) -> _Module:
    module = _MODULES.get(id(namespace))
    if module is None or module.namespace is not namespace:
        module = _MODULES[id(namespace)] = _Module(namespace)
    return module


def _rescan(module: _Module) -> None:
    module.size = len(module.namespace)
    found: set[str] = set()
    for value in list(module.namespace.values()):
        found |= _stored_by(value, module.namespace, 0)
    _learn(module, found)


def _learn(module: _Module, names: set) -> None:
    for name in set(names) - module.written:
        if name in module.plain_reads:
            module.stale[name] = module.plain_reads[name]
        module.written.add(name)


def _stored_by(value: Any, namespace: dict, depth: int) -> set:
    """Names that the code of ``value`` (a function, or a class of this module) stores in
    ``namespace``. Only a function whose globals are ``namespace`` can: one a module imported
    from another (``from numpy.linalg._linalg import cholesky``: all of ``numpy.linalg``) writes
    the globals of its own, and is not disassembled for this one."""
    if depth > 4 or isinstance(value, types.ModuleType):
        return set()
    if isinstance(value, (staticmethod, classmethod)):
        return _stored_by(value.__func__, namespace, depth + 1)
    if isinstance(value, property):
        return set().union(*(_stored_by(f, namespace, depth + 1) for f in (value.fget, value.fset, value.fdel)))
    if isinstance(value, type):
        if getattr(value, "__module__", None) != namespace.get("__name__") or not value.__flags__ & _HEAP_TYPE:
            return set()  # (a class made in C holds no Python code: numpy.ndarray, whose module is numpy)
        return set().union(*(_stored_by(v, namespace, depth + 1) for v in list(vars(value).values())))
    found = set(_stored_in_code(value.__code__)) \
        if isinstance(value, types.FunctionType) and value.__globals__ is namespace else set()
    wrapped = _wrapped(value)  # (a wrapper made elsewhere may wrap a function of this module)
    return found | _stored_by(wrapped, namespace, depth + 1) if wrapped is not None else found


def _wrapped(value: Any) -> Any:
    """What a decorator wrapped (``functools.wraps``, ``lru_cache``), or None."""
    if not callable(value):
        return None
    attributes = getattr(value, "__dict__", None)  # (most builtins have none: no exception raised for them)
    return attributes.get("__wrapped__") if isinstance(attributes, dict) else None


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: set for classes created by a class statement


def _stored_in_code(code: types.CodeType) -> frozenset:
    found = _CODE_STORES.get(code)
    if found is None:
        names = {i.argval for i in dis.get_instructions(code) if i.opname in _STORES} \
            if _may_store(code) else set()
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                names |= _stored_in_code(const)
        found = _CODE_STORES[code] = frozenset(names)
    return found


def _may_store(code: types.CodeType) -> bool:
    """A quick test before disassembling: a global store names one of ``co_names``."""
    return bool(code.co_names) and any(op in code.co_code[::2] for op in _STORE_OPCODES)


_STORE_OPCODES = bytes(dis.opmap[name] for name in _STORES)


def _names_in_source_file(namespace: dict) -> set:
    """Names in the ``global`` statements of the module's source file (functions that the
    namespace does not hold, such as ones kept only in a registry, count too). Read by a pattern,
    not parsed (a large module costs a scan, not a parse): a ``global`` line in a string adds a
    name read through ``global_get`` for nothing, which is only slower."""
    filename = namespace.get("__file__")
    if not isinstance(filename, str) or not filename.endswith(".py"):
        return set()
    try:
        with open(filename, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, ValueError, UnicodeDecodeError):
        return set()
    return {name for names in _GLOBAL_STATEMENT.findall(text) for name in re.findall(r"\w+", names)}


_GLOBAL_STATEMENT = re.compile(r"^[ \t]*global[ \t]+(\w+(?:[ \t]*,[ \t]*\w+)*)", re.MULTILINE)


class GlobalLowering:
    """The normaliser's reads, writes and deletions of globals written with ``global``."""

    fn: types.FunctionType

    def global_read(self, name: str, out: list, target: str) -> Any:
        """A read of a global that functions of the module write: ``global_get`` (its derivative is
        the one the write gave it in this call, if any)."""
        from ..ir import nodes as ir
        from ..ir import primitives as P

        return self.call(out, ir.Const(P.global_get), [ir.Const(self.fn), ir.Const(name)], target)  # type: ignore[attr-defined]

    def global_write(self, name: str, value: Any, out: list) -> None:
        """``global name; name = value``: the module's global is written (``global_set``, which
        gives the value's derivative to later reads). The generated code has no variable of that
        name: a nested function reading it reads the module's global, as in Python."""
        from ..ir import nodes as ir
        from ..ir import primitives as P

        self.call(out, ir.Const(P.global_set), [ir.Const(self.fn), ir.Const(name), value], None)  # type: ignore[attr-defined]

    def module_global_read(self, path: str, out: list, target: str) -> Any:
        """``mod.G`` where functions of module ``mod`` write ``G`` with ``global``: ``global_get`` on
        the module (its derivative is the one a write in this call gave it); else None."""
        from ..ir import nodes as ir
        from ..ir import primitives as P

        *owner_path, name = path.split(".")
        owner: Any = self.module_globals.get(owner_path[0])  # type: ignore[attr-defined]
        for part in owner_path[1:]:
            owner = getattr(owner, part, None)
        if not isinstance(owner, types.ModuleType) or name not in written_in_module(owner):
            return None
        return self.call(out, ir.Const(P.global_get), [ir.Const(owner), ir.Const(name)], target)  # type: ignore[attr-defined]

    def module_of_attribute(self, target: ast.expr) -> Any:
        """The module whose attribute ``target`` (``mod.G``, ``pkg.mod.G``) names, or None."""
        if not isinstance(target, ast.Attribute):
            return None
        path = self._module_path(target.value)  # type: ignore[attr-defined]
        if path is None:
            return None
        owner: Any = self.module_globals.get(path.split(".")[0])  # type: ignore[attr-defined]
        for part in path.split(".")[1:]:
            owner = getattr(owner, part, None)
        return owner if isinstance(owner, types.ModuleType) else None

    def learn_module_attribute_writes(self, node: ast.AST) -> None:
        """Before lowering: ``mod.G = ...`` (``globals()["G"] = ...``) anywhere in ``node`` makes
        ``G`` a global of ``mod`` (of this module) that is written, so every read of it (here,
        before the write too, and in that module's functions) takes the derivative the write gives
        it (``global_get``)."""
        for n in ast.walk(node):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AugAssign) else []
            for t in targets:
                owner = self.module_of_attribute(t)
                if owner is not None:
                    learn_attribute_writes(owner, {t.attr})
                elif (key := self.globals_key(t)) is not None:
                    _learn(_known(self.fn.__globals__), {key})

    def globals_key(self, node: ast.expr) -> str | None:
        """``K`` of ``globals()["K"]`` (the builtin, a constant name not beginning with ``_``: the
        generated code's own names do), or None: such an item is the global ``K``, read and written
        as ``global K`` would (any other use of ``globals()`` is refused by its rule)."""
        if not isinstance(node, ast.Subscript) or not isinstance(node.value, ast.Call):
            return None
        call, key = node.value, node.slice
        if not (isinstance(call.func, ast.Name) and call.func.id == "globals" and not call.args and not call.keywords
                and self.builtin_unshadowed("globals")):  # type: ignore[attr-defined]
            return None
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.isidentifier() \
                and not key.value.startswith("_"):
            return key.value
        return None

    def module_attribute_write(self, target: ast.Attribute, value: Any, out: list) -> bool:
        """``mod.G = value``: the module's global is written as ``global G; G = value`` in ``mod``
        writes it (``global_set`` on the module); False when ``target`` is no module's attribute."""
        from ..ir import nodes as ir
        from ..ir import primitives as P

        owner = self.module_of_attribute(target)
        if owner is None:
            return False
        self.call(out, ir.Const(P.global_set), [ir.Const(owner), ir.Const(target.attr), value], None)  # type: ignore[attr-defined]
        return True

    def import_into_globals(self, node: ast.Import | ast.ImportFrom, out: list) -> bool:
        """``global M; import math as M`` (or ``from m import x as M``): the import binds a temporary
        and the module's global is written from it; False (nothing emitted) when the statement binds
        no declared global."""
        from ..ir import nodes as ir

        bound = [(a, (a.asname or a.name).split(".")[0]) for a in node.names]
        if not any(name in self.declared_globals for _, name in bound):  # type: ignore[attr-defined]
            return False
        for alias, name in bound:
            if name not in self.declared_globals:  # type: ignore[attr-defined]
                self.locals.add(name)  # type: ignore[attr-defined]
                self.opaque(out, ast.unparse(_one_import(node, alias)), (name,))  # type: ignore[attr-defined]
                continue
            temp = self.tmp("import")  # type: ignore[attr-defined]
            if isinstance(node, ast.Import) and alias.asname is None and "." in alias.name:
                self.opaque(out, f"{temp} = __import__({alias.name!r})", (temp,))  # binds the top package  # type: ignore[attr-defined]
            else:
                self.opaque(out, ast.unparse(_one_import(node, ast.alias(alias.name, temp))), (temp,))  # type: ignore[attr-defined]
            self.global_write(name, ir.Var(temp), out)
        return True

    def refuse_global_binding(self, name: str | None, what: str, node: ast.AST) -> None:
        """A ``def``, ``class`` or ``except ... as`` binding a name declared ``global`` would bind a
        variable of the generated code, not the module's global: refused, with the rewrite."""
        if name is not None and name in self.declared_globals:  # type: ignore[attr-defined]
            raise self.error(f"{what} binding the global {name!r} (declared with a global statement)",  # type: ignore[attr-defined]
                             f"bind it under another name, then assign it: {name} = that name", node)

    def current_globals(self, expr: ast.expr | None, out: list) -> ast.expr | None:
        """``expr`` (source the generated code runs as it is: a ``raise``, an ``assert``, a ``with``
        header, an exception type) reading the written globals' current values: a copy reading
        temporaries that ``global_get`` binds just before (a plain global is hoisted at entry)."""
        from .renaming import _Renamer, _copy

        names = sorted({n.id for n in ast.walk(expr) if isinstance(n, ast.Name) and self._written_global(n.id)}) \
            if expr is not None else []
        if not names:
            return expr
        renames = {name: self.global_read(name, out, "").name for name in names}
        return _Renamer(renames).visit(_copy(expr))

    def refuse_written_globals(self, what: str, exprs: list) -> None:
        """A class statement or a decorator runs as it is in the generated code, reading globals as
        they were at entry, without derivatives: one reading a global written with ``global`` is
        refused (its value may have changed, or carry a derivative)."""
        for expr in exprs:
            for n in ast.walk(expr):
                if isinstance(n, ast.Name) and self._written_global(n.id):
                    raise self.error(  # type: ignore[attr-defined]
                        f"{what} reading the global {n.id!r}, which functions of its module write with a global "
                        "statement", f"pass {n.id!r} in as an argument, or define it at module level", n)

    def _written_global(self, name: str) -> bool:
        return name in self.written_globals and name not in self.locals and name not in self.free  # type: ignore[attr-defined]

    def global_delete(self, name: str, out: list) -> None:
        """``global name; del name``."""
        from ..ir import nodes as ir
        from ..ir import primitives as P

        self.call(out, ir.Const(P.global_del), [ir.Const(self.fn), ir.Const(name)], None)  # type: ignore[attr-defined]


def _one_import(node: ast.Import | ast.ImportFrom, alias: ast.alias) -> ast.stmt:
    """``node`` importing ``alias`` alone."""
    if isinstance(node, ast.Import):
        return ast.Import([alias])
    return ast.ImportFrom(node.module, [alias], node.level)
