"""Stage 2b: give the function's own names that begin with an underscore names no generated code
uses.

Every name the transforms generate begins with ``_``: their temporaries (``_p``, ``_b1``,
``_tape``), the runtime's globals (``_D``, ``_ND``, ``_global``) and the locals that hold the
user's globals. A user's ``_p`` would be the same variable as a template's ``_p`` (a wrong
derivative, silently) and a module's ``_D`` read by the function would hide the runtime's.
So before lowering, the function's own names that begin with ``_`` are renamed: ``_p`` becomes
``u_p`` (more ``u``s while that is taken), a name no generated code can use.

The function's own variables spelt as a builtin (``type = "linear"``, ``sum = 0.0``) are renamed
the same way (``utype``): the generated code calls ``type``, ``float``, ``len`` by name.

What is renamed, consistently, in the function's own scope and its comprehensions:
* its variables and parameters (the generated function takes its arguments by position;
  ``Function.user_names`` keeps the user's name for keyword binding and for messages);
* the globals it reads (``_EPS``, ``_helper``, ``_np.sin``): the new name is a local the
  generated code binds to the global, whose key ``Function.global_keys`` records;
* in nested functions and lambdas, the names that refer to the variables above (``nonlocal``
  declarations included), not their own locals nor their own global reads.

The user's own names spelt as the rewrites' names (``_yb_match``, ``_yb_len``: ``runtime_names``'
prefix) are renamed the same way (``u_yb_match``) before any rewrite runs (stage 1a,
``rename_helper_names``), since the rewrites of ``desugar.py`` write such names (a user's
``_yb_subject1`` was overwritten by a ``match`` statement's subject, silently); afterwards those
names are the rewrites' own.

What keeps its name: ``_`` itself, dunder names, the desugaring helpers (``_yb_*``), variables of
enclosing functions (read through their cells, ``_cell_<name>``, which no generated temporary
uses), names declared ``global`` or ``nonlocal``, and globals some function of the module writes
(read with ``global_get``: the generated code binds no local for them). Class attributes (names
bound in a class body) keep theirs: they are attribute names.
"""
from __future__ import annotations

import __future__
import ast
import builtins
import copy
import dataclasses
import re
import types
from typing import Any, Iterator

from .census import Census
from .global_writes import written_names
from .runtime_names import PREFIX, walk_own_scope

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@dataclasses.dataclass
class Renaming:
    """The new names: ``variables`` (the function's own, parameters included) and ``globals``
    (locals standing for the user's globals), each ``user name -> new name``."""

    variables: dict[str, str]
    globals: dict[str, str]

    def new(self, name: str) -> str:
        """The name ``name`` (a name of the user's code object) has in the lowered code."""
        return self.variables.get(name, name)

    def parameters(self, code: types.CodeType) -> list[str]:
        """The parameters of ``code``, by their new names: positional, keyword-only, ``*args``,
        ``**kwargs``."""
        n_params = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 4) + bool(code.co_flags & 8)
        return [self.new(p) for p in code.co_varnames[:n_params]]

    def user_names(self) -> dict[str, str]:
        """``new name -> user name`` of every renamed name (for messages and keyword binding)."""
        return {new: old for old, new in [*self.variables.items(), *self.globals.items()]}

    def global_keys(self) -> dict[str, str]:
        """``local -> the user's global`` for the renamed globals."""
        return {new: old for old, new in self.globals.items()}


NO_RENAMING = Renaming({}, {})


def user_parameter(parameters: Any, name: str) -> str:
    """The user's name of a generated function's parameter ``name``, given the user's
    ``parameters`` (names, or a signature's mapping): a renamed one (``u_k``, ``uu_k``) is the
    user's with its added ``u``s taken off (``_k``)."""
    return name if name in parameters else name.lstrip("u")


def _renamable(name: str) -> bool:
    return name.startswith("_") and name != "_" and not name.startswith(PREFIX) \
        and not (name.startswith("__") and name.endswith("__"))


def _helper_spelt(name: str) -> bool:
    return name.startswith(PREFIX)


#: the files of the programs yuebing compiles and differentiates again (plain forward programs,
#: their closures, third order's definitions), whose ``_yb_`` names are yuebing's own (a nested
#: plain program is recognised by its name, ``_yb_plain_...``)
_GENERATED_FILES = ("<yuebing", "<plain forward", "<third order")


def rename_helper_names(fn: types.FunctionType, node: ast.AST, census: Census) -> tuple[ast.AST, Census, Renaming]:
    """Stage 1a: ``node`` (a copy) with the user's own names that begin with ``_yb_`` renamed,
    before the rewrites write theirs; its census and the renaming (as ``rename_underscore_names``)."""
    if not any(map(_helper_spelt, census.all_names)) or fn.__code__.co_filename.startswith(_GENERATED_FILES):
        return node, census, NO_RENAMING
    renamed, renaming = _renamed(fn, node, census, _helper_spelt, NO_RENAMING, builtins_too=False)
    return (node, census, renaming) if renamed is node else (renamed, Census(renamed), renaming)


def rename_underscore_names(fn: types.FunctionType, node: ast.AST, census: Census,
                            earlier: Renaming = NO_RENAMING) -> tuple[ast.AST, Census, Renaming]:
    """``node`` (a copy) with its own underscore names renamed, its census, and the renaming
    (added to ``earlier``, ``rename_helper_names``'); ``node``, ``census`` and ``earlier`` when
    there is nothing to rename."""
    renamed, renaming = _renamed(fn, node, census, _renamable, earlier)
    return (node, census, renaming) if renamed is node else (renamed, Census(renamed), renaming)


#: builtins a local variable may hide: the generated code calls type, float, len... by name
_BUILTIN_NAMES = frozenset(n for n in dir(builtins) if not n.startswith("_"))


def _renamed(fn: types.FunctionType, node: ast.AST, census: Census, renamable: Any, earlier: Renaming,
             builtins_too: bool = True) -> tuple[ast.AST, Renaming]:
    code = fn.__code__
    if not any(map(renamable, census.all_names)) and (not builtins_too or _BUILTIN_NAMES.isdisjoint(code.co_varnames)
                                                       and _BUILTIN_NAMES.isdisjoint(code.co_cellvars)):
        return node, earlier
    bound = _bound_in_own_scope(node) | set(code.co_varnames) | set(code.co_cellvars)
    keep = set(code.co_freevars) | census.own_globals | census.own_nonlocals
    # the function's own variables spelt as a builtin (type = "linear", sum = 0.0) too
    variables = sorted(n for n in bound - keep if renamable(n) or builtins_too and n in _BUILTIN_NAMES)
    loaded = _loaded(node, runs_annotations(fn))
    read_globals = sorted(n for n in loaded - bound - keep if renamable(n))
    if read_globals:
        read_globals = [n for n in read_globals if n not in written_names(fn)]
    if not variables and not read_globals:
        return node, earlier
    taken = set(census.all_names) | set(code.co_varnames) | set(code.co_cellvars) | set(code.co_freevars)
    renaming = Renaming({}, {})
    for names, into in ((variables, renaming.variables), (read_globals, renaming.globals)):
        for name in names:
            new = "u" + name
            while new in taken or hasattr(builtins, new):
                new = "u" + new
            taken.add(new)
            into[name] = new
    renamed = copy.deepcopy(node)  # (the parsed file is cached: not renamed in place)
    _split_dotted_imports(renamed, renaming.variables, taken)
    _OwnScope({**renaming.variables, **renaming.globals}, renaming.variables,
              runs_annotations(fn)).generic_visit(renamed)  # (not a nested def)
    # (the earlier names were renamed in the tree before the rewrites, whose names they now are)
    return ast.fix_missing_locations(renamed), Renaming({**earlier.variables, **renaming.variables},
                                                        {**earlier.globals, **renaming.globals})


def _loaded(node: ast.AST, annotations_run: bool) -> set[str]:
    """Names read in the function's own scope, in the class statements there (which the
    generated code runs with the globals they read bound to locals of ours), and in what a nested
    function's definition runs there (decorators, defaults, annotations)."""
    own = list(walk_own_scope(node))
    classes = [n for c in own if isinstance(c, ast.ClassDef) for n in ast.walk(c)]
    defined = [n for f in own if isinstance(f, _FUNCTIONS) for e in definition_time(f, annotations_run)
               for n in ast.walk(e)]
    return {n.id for n in [*own, *classes, *defined] if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def runs_annotations(fn: types.FunctionType) -> bool:
    """Whether ``fn``'s module evaluates annotations (no ``from __future__ import annotations``)."""
    return not fn.__code__.co_flags & __future__.annotations.compiler_flag


def definition_time(node: Any, annotations_run: bool) -> list[ast.expr]:
    """What defining the nested function ``node`` evaluates where it is defined: decorators,
    default values, and annotations when ``annotations_run`` (else they stay strings)."""
    args = node.args
    annotations = [a.annotation for a in _own_parameters(node)] + [getattr(node, "returns", None)]
    return [e for e in [*getattr(node, "decorator_list", []), *args.defaults, *args.kw_defaults,
                        *(annotations if annotations_run else [])] if e is not None]


def _bound_in_own_scope(node: ast.AST) -> set[str]:
    """Names the function binds in its own scope (its comprehensions' variables included):
    parameters, assignments, loop and ``with`` targets, ``except ... as``, imports, nested
    ``def`` and ``class`` names, ``match`` captures."""
    names = {a.arg for a in _own_parameters(node)}
    for n in walk_own_scope(node):
        names.update(_binds(n))
    return names


def _own_parameters(node: ast.AST) -> Iterator[ast.arg]:
    args = node.args  # type: ignore[attr-defined]
    yield from (*args.posonlyargs, *args.args, *args.kwonlyargs)
    yield from (a for a in (args.vararg, args.kwarg) if a is not None)


def _binds(n: ast.AST) -> tuple:
    """The names statement or expression node ``n`` itself binds in the scope it is in."""
    if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
        return (n.id,)
    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return (n.name,)
    if isinstance(n, ast.ExceptHandler) and n.name:
        return (n.name,)
    if isinstance(n, (ast.Import, ast.ImportFrom)):
        return tuple((a.asname or a.name).split(".")[0] for a in n.names if a.name != "*")
    if isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
        return (n.name,)
    if isinstance(n, ast.MatchMapping) and n.rest:
        return (n.rest,)
    return ()


def _split_dotted_imports(node: ast.AST, renames: dict, taken: set) -> None:
    """``import _a.b`` binds ``_a``, which no ``as`` can rename: it becomes ``import _a.b as
    u_a_b, _a as u_a`` (the first imports the submodule, the second binds the package, as
    Python's statement does)."""
    for n in walk_own_scope(node):
        if not isinstance(n, ast.Import):
            continue
        names = []
        for a in n.names:
            head = a.name.split(".")[0]
            if a.asname is not None or "." not in a.name or head not in renames:
                names.append(a)
                continue
            submodule = renames[head] + "_" + "_".join(a.name.split(".")[1:])
            while submodule in taken:
                submodule = "u" + submodule
            taken.add(submodule)
            names += [ast.alias(a.name, submodule), ast.alias(head, renames[head])]
        n.names = names


def _nested_bound(scope: ast.AST) -> set[str]:
    """Names a nested function, lambda or class binds itself (its parameters, its locals, its
    ``global`` names), which its body's references then mean rather than ours. Its
    comprehensions' variables are renamed with ours (a renaming applied to every scope alike
    keeps Python's scoping), so they do not count; ``:=`` in them binds in the scope itself."""
    names = {a.arg for a in _own_parameters(scope)} if not isinstance(scope, ast.ClassDef) else set()
    targets = {id(t) for n in walk_own_scope(scope) if isinstance(n, ast.comprehension) for t in ast.walk(n.target)}
    declared_nonlocal: set[str] = set()
    for n in walk_own_scope(scope):
        if id(n) in targets:
            continue
        if isinstance(n, ast.Nonlocal):
            declared_nonlocal.update(n.names)
        elif isinstance(n, ast.Global):
            names.update(n.names)
        else:
            names.update(_binds(n))
    return names - declared_nonlocal


class _OwnScope(ast.NodeTransformer):
    """Renames ``renames`` in a scope; a nested scope gets ``nested`` (the variables, not the
    globals) less what it binds itself."""

    def __init__(self, renames: dict[str, str], nested: dict[str, str], annotations_run: bool) -> None:
        self.renames = renames
        self.nested = nested
        self.annotations_run = annotations_run  # (strings, the user's spelling, where they do not)

    def visit_Name(self, node: ast.Name) -> ast.Name:
        new = self.renames.get(node.id)
        return node if new is None else ast.copy_location(ast.Name(new, node.ctx), node)

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.arg = self.renames.get(node.arg, node.arg)
        return node

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.AST:
        if node.name:
            node.name = self.renames.get(node.name, node.name)
        return self.generic_visit(node)

    def visit_alias(self, node: ast.alias) -> ast.alias:
        bound = node.asname or node.name
        if bound in self.renames and node.name != "*":
            node.asname = self.renames[bound]
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        """``v: T = value``: ``T`` is renamed where Python evaluates it (a class body's), and
        kept as the user spelt it where the module makes it a string (``"_T"``, not ``"u_T"``)."""
        node.target = self.visit(node.target)
        node.value = node.value and self.visit(node.value)
        if self.annotations_run:
            node.annotation = self.visit(node.annotation)
        return node

    def visit_Nonlocal(self, node: ast.Nonlocal) -> ast.AST:
        node.names = [self.renames.get(n, n) for n in node.names]
        return node

    def visit_MatchAs(self, node: ast.MatchAs) -> ast.AST:
        if node.name:
            node.name = self.renames.get(node.name, node.name)
        return self.generic_visit(node)

    visit_MatchStar = visit_MatchAs

    def visit_MatchMapping(self, node: ast.MatchMapping) -> ast.AST:
        if node.rest:
            node.rest = self.renames.get(node.rest, node.rest)
        return self.generic_visit(node)

    def _inner(self, scope: ast.AST, renames: dict | None = None) -> "_OwnScope":
        bound = _nested_bound(scope)
        inner = {k: v for k, v in (self.nested if renames is None else renames).items() if k not in bound}
        return _OwnScope(inner, inner, self.annotations_run)

    def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
        node.name = self.renames.get(node.name, node.name)  # type: ignore[attr-defined]
        return self._function(node)

    def _function(self, node: Any) -> ast.AST:
        """A nested function: decorators, defaults and annotations are read where it is defined
        (our names), its body and parameters are its own scope."""
        args = node.args
        node.decorator_list = [self.visit(d) for d in getattr(node, "decorator_list", [])]
        args.defaults = [self.visit(d) for d in args.defaults]
        args.kw_defaults = [d if d is None else self.visit(d) for d in args.kw_defaults]
        if self.annotations_run:
            for a in _own_parameters(node):
                a.annotation = a.annotation and self.visit(a.annotation)
            if getattr(node, "returns", None) is not None:
                node.returns = self.visit(node.returns)
        inner = self._inner(node)
        if isinstance(node, ast.Lambda):
            node.body = inner.visit(node.body)
        else:
            node.body = [inner.visit(s) for s in node.body]
        return node

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        """A class statement: its name, bases and decorators are ours; its body is a scope whose
        bindings are attributes (kept), and its methods see our scope, not the class's. The
        generated code binds the globals the class reads to locals of their names, which the
        class then sees as enclosing variables (``stmt_ClassDef``): our globals' new names too."""
        node.name = self.renames.get(node.name, node.name)
        node.bases = [self.visit(b) for b in node.bases]
        node.keywords = [self.visit(k) for k in node.keywords]
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        body_scope = self._inner(node, self.renames)
        methods = _OwnScope(self.renames, self.renames, self.annotations_run)
        node.body = [methods._method(s) if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                     else body_scope.visit(s) for s in node.body]
        return node

    def _method(self, node: Any) -> ast.AST:
        """A method: its name is a class attribute (kept)."""
        return self._function(node)


class UserGlobals:
    """The user's module globals as the renamed code names them (``u_EPS`` for ``_EPS``): what the
    normaliser asks of a global (is it a module? does it exist?)."""

    def __init__(self, namespace: dict, keys: dict[str, str]) -> None:
        self.namespace = namespace
        self.keys = keys

    def key(self, name: str) -> str:
        return self.keys.get(name, name)

    def get(self, name: str, default: Any = None) -> Any:
        return self.namespace.get(self.keys.get(name, name), default)

    def __contains__(self, name: str) -> bool:
        return self.keys.get(name, name) in self.namespace


def user_spelling(error: BaseException, user_names: dict[str, str]) -> None:
    """``error`` (raised by generated code) naming the user's variable rather than its new name:
    ``UnboundLocalError: cannot access local variable '_p'``, as Python says it."""
    if not isinstance(error, NameError) or not error.args or not isinstance(error.args[0], str):
        return
    named = re.search(r"'(\w+)'", error.args[0])  # (an UnboundLocalError has no ``name``)
    if named is None or named.group(1) not in user_names:
        return
    user = user_names[named.group(1)]
    error.args = (error.args[0].replace(named.group(0), f"'{user}'", 1), *error.args[1:])
    if getattr(error, "name", None) == named.group(1):
        error.name = user
