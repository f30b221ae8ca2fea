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
reading it as a plain load makes that function's compiled code out of date: what was generated
from it is dropped (``RELOWER``, set by ``transform/global_writes.py``), so its next call lowers
it again reading the name with ``global_get`` (a notebook cell defining a writer after a reader
was differentiated). Only when that function is running at that moment (its old code on the
stack, as when it writes ``globals()[k]`` with ``k`` computed and reads the name after) is it
*stale* for the rest of that call: a write carrying derivatives is refused then
(``stale_reader``), and the function's next lowering clears it.
"""
from __future__ import annotations

import ast
import copy
import dis
import operator
import re
import sys
import types
from typing import Any, Callable

_STORES = frozenset({"STORE_GLOBAL", "DELETE_GLOBAL"})


class _Module:
    """What is known of one module namespace."""

    __slots__ = ("namespace", "size", "written", "plain_reads", "stale")

    def __init__(self, namespace: dict) -> None:
        self.namespace = namespace  # kept: its id stays its own
        self.size = -1
        self.written: set[str] = _names_in_source_file(namespace)
        self.plain_reads: dict[str, dict] = {}  # name -> {qualname: code} of functions lowered reading it plainly
        self.stale: dict[str, str] = {}  # name -> a function running old code reading it plainly


_MODULES: dict[int, _Module] = {}
_CODE_STORES: dict[types.CodeType, frozenset] = {}

#: ``RELOWER(readers)``: drops what was generated from the readers' code (``{qualname: code}``)
#: and names one of them running now (None: none is); set by ``transform/global_writes.py`` (a
#: higher layer, which knows the caches). Unset, a name found written makes its readers stale.
RELOWER: Callable[[dict], str | None] | None = None


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


def record_plain_reads(fn: types.FunctionType, names: Any, namespace: dict | None = None) -> None:
    """``fn`` was lowered reading ``names`` as plain global loads (constants), of its module or of
    module ``namespace`` (``mod.G``): a name found written from now on makes this lowering out of
    date. A lowering of ``fn`` that reads a stale name with ``global_get`` ends its staleness."""
    module = _module(fn.__globals__ if namespace is None else namespace)
    names = set(names)
    for name in names:
        module.plain_reads.setdefault(name, {})[fn.__qualname__] = fn.__code__
    if namespace is None:
        for name in [n for n, reader in module.stale.items() if reader == fn.__qualname__ and n not in names]:
            del module.stale[name]


def _reads_written(fn: types.FunctionType, namespace: dict, name: str) -> None:
    """``fn`` is lowered reading ``name`` of module ``namespace`` with ``global_get``: no longer stale."""
    module = _module(namespace)
    if module.stale.get(name) == fn.__qualname__:
        del module.stale[name]


def note_written(namespace: dict, name: str) -> None:
    """A global written at run time (``globals()[k] = v`` with ``k`` computed, an item of
    ``globals().update(mapping)``): the module learns the name, so functions lowered from now on
    read it with ``global_get``; one lowered before, reading it as a constant, is then stale."""
    module = _module(namespace)
    if name not in module.written:
        _learn(module, {name})


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
        module.written.add(name)
        readers = module.plain_reads.pop(name, None)
        running = (next(iter(readers)) if RELOWER is None else RELOWER(readers)) if readers else None
        if running is not None:
            module.stale[name] = running


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
    globals_aliases: Any = frozenset()  # variables only bound to globals() (learn_module_attribute_writes)
    module_aliases: Any = frozenset()  # variables only bound to sys.modules[__name__] (the same)

    def global_read(self, name: str | ast.expr, out: list, target: str) -> Any:
        """A read of a global that functions of the module write: ``global_get`` (its derivative is
        the one the write gave it in this call, if any). ``name``: a key of ``globals()`` computed when
        it runs may be an expression (``globals_key``)."""
        from ..ir import nodes as ir
        from ..ir import primitives as P

        return self.call(out, ir.Const(P.global_get), [ir.Const(self.fn), self._global_name(name, out)], target)  # type: ignore[attr-defined]

    def global_write(self, name: str | ast.expr, value: Any, out: list) -> None:
        """``global name; name = value``: the module's global is written (``global_set``, which
        gives the value's derivative to later reads). The generated code has no variable of that
        name: a nested function reading it reads the module's global, as in Python."""
        from ..ir import nodes as ir
        from ..ir import primitives as P

        self.call(out, ir.Const(P.global_set), [ir.Const(self.fn), self._global_name(name, out), value], None)  # type: ignore[attr-defined]

    def module_global_read(self, path: str, out: list, target: str) -> Any:
        """``mod.G`` where functions of module ``mod`` write ``G`` with ``global``: ``global_get`` on
        the module (its derivative is the one a write in this call gave it); else None."""
        from ..ir import nodes as ir
        from ..ir import primitives as P

        *owner_path, name = path.split(".")
        owner: Any = self.module_globals.get(owner_path[0])  # type: ignore[attr-defined]
        for part in owner_path[1:]:
            owner = getattr(owner, part, None)
        if not isinstance(owner, types.ModuleType):
            return None
        if name not in written_in_module(owner):  # a constant: out of date if the name is found written
            record_plain_reads(self.fn, (name,), vars(owner))
            return None
        _reads_written(self.fn, vars(owner), name)
        return self.call(out, ir.Const(P.global_get), [ir.Const(owner), ir.Const(name)], target)  # type: ignore[attr-defined]

    def own_module_by_sys_modules(self, node: ast.expr) -> Any:
        """This function's module when ``node`` is ``sys.modules[__name__]`` (``sys`` a module global,
        ``__name__`` not a local), else None."""
        if isinstance(node, ast.Name) and node.id in self.module_aliases:  # mod = sys.modules[__name__]
            return sys.modules.get(self.fn.__globals__.get("__name__"))
        if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Name) and node.slice.id == "__name__"
                and node.slice.id not in self.locals):  # type: ignore[attr-defined]
            return None
        path = self._module_path(node.value)  # type: ignore[attr-defined]
        if path is None or path.count(".") != 1:
            return None
        owner = getattr(self.module_globals.get(path.split(".")[0]), path.split(".")[1], None)  # type: ignore[attr-defined]
        if owner is not sys.modules:
            return None
        module = sys.modules.get(self.fn.__globals__.get("__name__"))
        return module if module is not None and vars(module) is self.fn.__globals__ else None

    def own_module_read(self, node: ast.Attribute, out: list, target: str) -> Any:
        """``sys.modules[__name__].G`` where functions of this module write ``G``: ``global_get``
        (``module_global_read``); else None."""
        from ..ir import nodes as ir
        from ..ir import primitives as P

        owner = self.own_module_by_sys_modules(node.value)
        if owner is None or node.attr not in written_in_module(owner):
            return None
        return self.call(out, ir.Const(P.global_get), [ir.Const(owner), ir.Const(node.attr)], target)  # type: ignore[attr-defined]

    def module_of_attribute(self, target: ast.expr) -> Any:
        """The module whose attribute ``target`` (``mod.G``, ``pkg.mod.G``, ``sys.modules[__name__].G``)
        names, or None."""
        if not isinstance(target, ast.Attribute):
            return None
        own = self.own_module_by_sys_modules(target.value)
        if own is not None:
            return own
        path = self._module_path(target.value)  # type: ignore[attr-defined]
        if path is None:
            return None
        owner: Any = self.module_globals.get(path.split(".")[0])  # type: ignore[attr-defined]
        for part in path.split(".")[1:]:
            owner = getattr(owner, part, None)
        return owner if isinstance(owner, types.ModuleType) else None

    def learn_module_attribute_writes(self, node: ast.AST) -> None:
        """Before lowering: ``mod.G = ...`` (``globals()["G"] = ...``, ``g["G"] = ...`` with ``g =
        globals()``, ``globals().update(G=...)``) anywhere in ``node`` makes ``G`` a global of ``mod``
        (of this module) that is written, so every read of it (here, before the write too, and in
        that module's functions) takes the derivative the write gives it (``global_get``)."""
        self.globals_aliases = _pure_globals_aliases(node, self.is_globals_call)
        self.module_aliases = _own_module_aliases(node, self.own_module_by_sys_modules)
        views = {n.targets[0].id for n in ast.walk(node) if isinstance(n, ast.Assign) and len(n.targets) == 1
                 and isinstance(n.targets[0], ast.Name) and self.is_globals_call(n.value)}
        for n in ast.walk(node):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AugAssign) else []
            for t in targets:
                owner = self.module_of_attribute(t)
                if owner is not None:
                    learn_attribute_writes(owner, {t.attr})
                elif isinstance(key := self.globals_key(t), str):
                    _learn(_known(self.fn.__globals__), {key})
                elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in views \
                        and _plain_name(getattr(t.slice, "value", None)):  # g["G"] = x, g = globals() passed on too
                    _learn(_known(self.fn.__globals__), {t.slice.value})
            if isinstance(n, ast.Call) and self._globals_update(n):
                _learn(_known(self.fn.__globals__), {k for k, _ in _constant_items(n) if k is not None})

    def globals_view(self, out: list, target: str) -> Any:
        """``globals()`` used otherwise than through its items (passed on, iterated, measured): a
        ``GlobalsView`` of this module's globals, whose reads and writes are ``global_get`` and
        ``global_set``."""
        from ..ir import nodes as ir
        from ..ir.globals_view import GlobalsView

        return self.call(out, ir.Const(GlobalsView), [ir.Const(self.fn)], target)  # type: ignore[attr-defined]

    def is_globals_call(self, node: ast.AST) -> bool:
        """Whether ``node`` is ``globals()`` (the builtin)."""
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "globals" \
            and not node.args and not node.keywords and self.builtin_unshadowed("globals")  # type: ignore[attr-defined]

    def _is_globals(self, node: ast.AST) -> bool:
        """``globals()``, or a variable only ever bound to it and read as its items (``g = globals()``)."""
        return self.is_globals_call(node) or isinstance(node, ast.Name) and node.id in self.globals_aliases

    def globals_key(self, node: ast.expr) -> str | ast.expr | None:
        """The key of ``globals()[key]`` (or ``g[key]``, ``g = globals()``): a constant name not
        beginning with ``_`` as a str (the global ``K``, read and written as ``global K`` would,
        known to be written before lowering), any other key as its expression, computed when the
        statement runs (a write teaches the module the name then: ``note_written``); None for
        anything else (other uses of ``globals()`` are refused by its rule)."""
        if not isinstance(node, ast.Subscript) or not self._is_globals(node.value) or isinstance(node.slice, ast.Slice):
            return None
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.isidentifier() \
                and not key.value.startswith("_"):
            return key.value
        return key

    def globals_alias_binding(self, node: ast.Assign) -> bool:
        """``g = globals()`` where ``g`` is such an alias: nothing to run (its uses are lowered)."""
        return len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
            and node.targets[0].id in self.globals_aliases and self.is_globals_call(node.value)

    def _globals_update(self, node: ast.Call) -> bool:
        f = node.func
        return isinstance(f, ast.Attribute) and f.attr == "update" and self._is_globals(f.value) \
            and len(node.args) <= 1 and all(k.arg is not None for k in node.keywords)

    def globals_update(self, node: ast.Call, out: list) -> Any:
        """``globals().update(...)``: each item written as ``globals()[k] = v`` writes it, after
        every argument is computed, as the call does; a mapping or pairs not written out as a
        dict display with constant keys are taken as ``dict(...)`` and written in a loop over its
        items (their keys computed). None (nothing emitted) for any other call."""
        from ..ir import nodes as ir

        if self._globals_get(node):
            return self._lowered_get(node, out)
        if not self._globals_update(node):
            return None
        items = _constant_items(node)
        pairs = None
        if node.args and any(k is None for k, _ in items):  # a mapping, or pairs: written in a loop
            pairs = self.call(out, ir.Const(dict), [self.expr(node.args[0], out)])  # type: ignore[attr-defined]
            items = [(k.arg, k.value) for k in node.keywords]
        values = [(k, self.expr(v, out)) for k, v in items]  # type: ignore[attr-defined]
        if pairs is not None:
            key, value = self.tmp("key"), self.tmp("value")  # type: ignore[attr-defined]
            loop = ast.parse(f"for {key}, {value} in {pairs.name}.items(): globals()[{key}] = {value}").body[0]
            self.statement(ast.fix_missing_locations(_located(loop, node)), out)  # type: ignore[attr-defined]
        for k, v in values:
            self.global_write(k if _plain_name(k) else ast.Constant(k), v, out)
        return ir.Const(None)

    def _globals_get(self, node: ast.Call) -> bool:
        f = node.func
        return isinstance(f, ast.Attribute) and f.attr == "get" and self._is_globals(f.value) \
            and 1 <= len(node.args) <= 2 and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args)

    def _lowered_get(self, node: ast.Call, out: list) -> Any:
        """``globals().get(k, d)``: the global ``k`` as ``globals()[k]`` reads it if the module
        defines it (``global_defined``), else ``d`` (computed first, as the call's argument is)."""
        from ..ir import nodes as ir
        from ..ir import primitives as P

        key = self.expr(node.args[0], out)  # type: ignore[attr-defined]
        default = self.expr(node.args[1], out) if len(node.args) == 2 else ir.Const(None)  # type: ignore[attr-defined]
        result = self.tmp("got")  # type: ignore[attr-defined]
        defined = self.call(out, ir.Const(P.global_defined), [ir.Const(self.fn), key])  # type: ignore[attr-defined]
        found: list = []
        self.global_read(key, found, result)
        out.append(ir.If(defined, found, [ir.Copy(result, default, line=self.line)], line=self.line))  # type: ignore[attr-defined]
        return ir.Var(result)

    def globals_contains(self, key: Any, node: ast.expr, negated: bool, result: str, out: list) -> bool:
        """``k in globals()`` (``not in``): whether the module defines ``k`` (``global_defined``),
        into ``result``; False (nothing emitted) when ``node`` is not ``globals()``."""
        from ..ir import nodes as ir
        from ..ir import primitives as P

        if not self._is_globals(node):
            return False
        if not negated:
            self.call(out, ir.Const(P.global_defined), [ir.Const(self.fn), key], result)  # type: ignore[attr-defined]
            return True
        inside = self.call(out, ir.Const(P.global_defined), [ir.Const(self.fn), key])  # type: ignore[attr-defined]
        self.call(out, ir.Const(operator.not_), [inside], result)  # type: ignore[attr-defined]
        return True

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

    def global_definition(self, node: ast.FunctionDef | ast.ClassDef, out: list) -> bool:
        """``global H`` then ``def H`` or ``class H``: made under a temporary name (a variable of the
        generated code, which must not shadow the global), given the name ``H`` (``__name__``,
        ``__qualname__`` as Python gives it), and written to the global as ``H = that`` writes
        it; False (nothing emitted) when ``node`` binds no declared global."""
        from ..ir import nodes as ir

        name = node.name
        if name not in self.declared_globals:  # type: ignore[attr-defined]
            return False
        temp = self.tmp("def")  # type: ignore[attr-defined]
        renamed = copy.copy(node)
        renamed.name = temp
        self.statement(renamed, out)  # type: ignore[attr-defined]
        qualname = f"{self.fn.__qualname__}.<locals>.{name}"
        self.opaque(out, f"{temp}.__name__ = {name!r}; {temp}.__qualname__ = {qualname!r}")  # type: ignore[attr-defined]
        self.global_write(name, ir.Var(temp), out)
        return True

    def global_handler(self, handler: ast.ExceptHandler) -> ast.ExceptHandler:
        """``global E`` then ``except ValueError as E``: as CPython runs it, the exception bound to a
        temporary and written to the global, which is deleted when the handler is left
        (``E = None; del E`` in a ``finally``); the handler itself when it binds no declared global."""
        name = handler.name
        if name is None or name not in self.declared_globals:  # type: ignore[attr-defined]
            return handler
        temp = self.tmp("error")  # type: ignore[attr-defined]

        def at(statement: ast.stmt) -> ast.stmt:
            return ast.fix_missing_locations(ast.copy_location(statement, handler))

        store, load = ast.Name(name, ast.Store()), ast.Name(temp, ast.Load())
        cleanup = [at(ast.Assign([ast.Name(name, ast.Store())], ast.Constant(None))),
                   at(ast.Delete([ast.Name(name, ast.Del())]))]
        body = [at(ast.Assign([store], load)), at(ast.Try(handler.body, [], [], cleanup))]
        return ast.copy_location(ast.ExceptHandler(handler.type, temp, body), handler)

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

    def global_delete(self, name: str | ast.expr, out: list) -> None:
        """``global name; del name`` (``del globals()[k]``)."""
        from ..ir import nodes as ir
        from ..ir import primitives as P

        self.call(out, ir.Const(P.global_del), [ir.Const(self.fn), self._global_name(name, out)], None)  # type: ignore[attr-defined]

    def _global_name(self, name: Any, out: list) -> Any:
        """A global's name for the primitives: a constant, a key expression computed here, or an
        atom already computed (``globals().get(k)``)."""
        from ..ir import nodes as ir

        if isinstance(name, str):
            return ir.Const(name)
        return self.expr(name, out) if isinstance(name, ast.AST) else name  # type: ignore[attr-defined]


def _one_import(node: ast.Import | ast.ImportFrom, alias: ast.alias) -> ast.stmt:
    """``node`` importing ``alias`` alone."""
    if isinstance(node, ast.Import):
        return ast.Import([alias])
    return ast.ImportFrom(node.module, [alias], node.level)


def _plain_name(key: Any) -> bool:
    """A key of ``globals()`` known before lowering: an identifier not beginning with ``_``."""
    return isinstance(key, str) and key.isidentifier() and not key.startswith("_")


def _constant_items(call: ast.Call) -> list:
    """``(key, value node)`` of each item ``globals().update(...)`` writes: its keywords, and the
    items of a dict display given (key None where it is not a constant string, or for an
    argument that is not a display: one item, the argument)."""
    items = []
    for arg in call.args:
        if isinstance(arg, ast.Dict):
            items += [(k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None, v)
                      for k, v in zip(arg.keys, arg.values)]
        else:
            items.append((None, arg))
    return items + [(k.arg, k.value) for k in call.keywords]


def _located(statement: ast.stmt, at: ast.AST) -> ast.stmt:
    for n in ast.walk(statement):
        if isinstance(n, (ast.stmt, ast.expr)):
            ast.copy_location(n, at)
    return statement


def _pure_globals_aliases(node: ast.AST, is_globals_call: Any) -> set:
    """The variables of ``node``'s own scope bound once, to ``globals()``, and only read as
    ``g[key]`` (read, written, deleted) or ``g.update(...)``, never in a nested function: their
    uses are lowered as the same uses of ``globals()`` (any other use leaves ``g = globals()`` to
    its rule, which refuses it)."""
    own = list(_own_scope(node))
    arguments = getattr(node, "args", None)
    parameters = {a.arg for a in ast.walk(arguments) if isinstance(a, ast.arg)} if isinstance(arguments, ast.arguments) else set()
    bound = {n.targets[0].id for n in own if isinstance(n, ast.Assign) and len(n.targets) == 1
             and isinstance(n.targets[0], ast.Name) and is_globals_call(n.value)} - parameters
    if not bound:
        return set()
    parents = {id(child): parent for parent in own for child in ast.iter_child_nodes(parent)}
    kept = set()
    for name in bound:
        uses = [n for n in own if isinstance(n, ast.Name) and n.id == name]
        everywhere = [n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name]
        stores = [n for n in uses if not isinstance(n.ctx, ast.Load)]
        if len(everywhere) != len(uses) or len(stores) != 1:
            continue
        if all(_item_or_update(n, parents) for n in uses if isinstance(n.ctx, ast.Load)):
            kept.add(name)
    return kept


def _own_module_aliases(node: ast.AST, own_module: Any) -> set:
    """The variables bound once, by a statement of the function's body itself, to
    ``sys.modules[__name__]`` (``own_module`` tells), and read only after it and never in a nested
    function: ``mod.G`` is then the module's global ``G``, as ``sys.modules[__name__].G`` is."""
    own = list(_own_scope(node))
    found = set()
    body = getattr(node, "body", None)
    for statement in body if isinstance(body, list) else []:  # (a lambda's body is an expression)
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name) and own_module(statement.value) is not None):
            continue
        name = statement.targets[0].id
        uses = [n for n in own if isinstance(n, ast.Name) and n.id == name]
        everywhere = [n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name]
        stores = [n for n in uses if not isinstance(n.ctx, ast.Load)]
        if len(everywhere) == len(uses) and stores == [statement.targets[0]] \
                and all(n.lineno > statement.lineno for n in uses if isinstance(n.ctx, ast.Load)):
            found.add(name)
    return found


def _item_or_update(name: ast.Name, parents: dict) -> bool:
    """Whether this read of a ``globals()`` alias is one lowered as ``globals()``'s: ``g[k]``,
    ``g.update(...)``, ``g.get(k[, d])``, ``k in g``."""
    parent = parents.get(id(name))
    if isinstance(parent, ast.Subscript) and parent.value is name and not isinstance(parent.slice, ast.Slice):
        return True
    if isinstance(parent, ast.Compare) and len(parent.ops) == 1 and isinstance(parent.ops[0], (ast.In, ast.NotIn)) \
            and parent.comparators[0] is name:
        return True
    if isinstance(parent, ast.Attribute) and parent.attr in ("update", "get") and parent.value is name:
        call = parents.get(id(parent))
        if not isinstance(call, ast.Call) or call.func is not parent:
            return False
        if parent.attr == "get":
            return 1 <= len(call.args) <= 2 and not call.keywords and not any(isinstance(a, ast.Starred) for a in call.args)
        return len(call.args) <= 1 and all(k.arg is not None for k in call.keywords)
    return False


def _own_scope(node: ast.AST):
    """The nodes of a function's own scope (not those of functions, lambdas, classes or
    comprehensions nested in it, which would read the variable from a cell)."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        yield child
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
                                  ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            stack.extend(ast.iter_child_nodes(child))
