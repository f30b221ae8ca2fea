"""Class statements inside the differentiated function (part of ``normalise.Normaliser``).

The class statement itself runs as Python runs it (its metaclass, decorators, ``super()`` and
``__init_subclass__`` are Python's), with two changes that carry the function's derivatives
into it:

* Values the class body computes from the function's variables (``scale = a * 3``, a
  dataclass field's ``w: float = a`` or ``field(default=a)``) are computed by the function's
  own code, just before the class statement, each wrapped in ``class_level`` (its derivative
  then follows reads of the class attribute: ``rules/local_classes.py``); the class body
  assigns the result (``scale = _Model_scale3``). Names the class body assigned earlier are
  read from those results, as the class body would read them.
* The variables its methods read (``def __call__(self, t): return self.w * t * a``) are kept
  in cells, as those of a nested ``def``: a method sees the variable's current value (late
  binding), writes it with ``nonlocal``, and ``class_cells`` tells the method's rules each cell's
  tangent box, since a method is called through the class, not through the closure made here.

A method's default values that read the function's variables become class-body values of the
first kind, which the method reads when the caller gives no value (``_defaults_as_class_values``).
So are the values and defaults reading a global the module writes with ``global`` (read with
its derivative, ``global_writes.py``); a method reading one when it runs is refused
(``refuse_written_globals``). A class decorator or class keyword reading the function's
variables is computed by the function and called by it after the class statement
(``_hoist_decorators``, ``_defer_init_subclass``: ``super(C, C).__init_subclass__(k=...)``),
differentiated. What else the class statement reads of the function's variables when it runs (a
base class, a nested class's decorator) must hold no derivative: that is checked when the class
is made, with an error naming the variable and the line.
"""
from __future__ import annotations

import ast
import copy
import symtable

from ..ir import nodes as ir
from ..ir.local_classes import MISSING, DEFERRED, class_cells, class_level, class_stored, defer_init_subclass
from .fence import UnsupportedSyntaxError
from .parsing import parse as parse_source
from .runtime_names import located

class LocalClassLowering:
    """The class-statement helpers of ``Normaliser`` (a mixin: it uses the normaliser's
    ``locals``, ``free``, ``cell_backed``, ``expr``, ``call``, ``tmp`` and ``_captured``)."""

    def _lower_local_class(self, node: ast.ClassDef, out: list) -> ast.ClassDef:
        """``node`` rewritten to read the values it computes from ours (emitted into ``out``),
        with the cells its methods read declared; the names its methods read are noted in
        ``class_captures`` (``closures._reassigned_captures`` keeps them in cells)."""
        ours = self.locals | set(self.free)
        node = copy.deepcopy(node)
        _factories_in_post_init(node, ours)
        for statement in node.body:
            for call in (n for n in ast.walk(statement) if isinstance(n, ast.Call) and _is_field_call(n)):
                self._refuse_default_factory(call, ours, statement)
        # (a global the module writes with ``global``: a class value or default reading it is
        # computed by the function too, which reads its current value and derivative)
        written = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and self._written_global(n.id)}
        _rebind_global_readers(node, {name for name in written if self._written_global(name)})
        self.class_decorators, self.lowered_class = self._hoist_decorators(node, ours | written, out), node
        bases = self._hoist_bases(node, ours | written, out)
        held = self._defer_init_subclass(node, ours | written, out)
        self._lower_class_body(node, ours | written, out)
        methods = sorted({name for fn in _methods(node) for name in self._captured(fn)})
        self.class_captures = sorted({*getattr(self, "class_captures", ()), *methods})
        cells = {name: cell for name in methods if (cell := self._class_cell(name)) is not None}
        if cells:
            self._shared_cells(tuple(cells), out)  # (one of a function further out: a cell here too)
            share = self.tmp("cells")
            self.call(out, ir.Const(class_cells), [ir.Const(tuple(cells)), *cells.values()], share)
            node.decorator_list.append(ast.Name(share, ast.Load()))  # applied first: the methods get the cells
        self._check_class_level_reads(node, sorted(_class_level_names(node) & ours - {node.name, held}), out)
        self._check_class_level_reads(node, sorted(bases), out, bases)
        return node

    def _lower_class_body(self, node: ast.ClassDef, ours: set, out: list) -> None:
        """The values ``node``'s body (and the bodies of the classes nested in it, in the body's
        order) computes from ``ours``, and its methods' default values reading them, computed by
        the function (``_hoist_class_values``), each class checked to keep them."""
        node.body = _defaults_as_class_values(node.body, ours)
        computed, kept = self._hoist_class_values(node, ours, out)
        if kept:
            self._check_stored(node, kept, out)
        if read := sorted(_class_level_names(node, nested=False) & computed):
            raise self.error(f"a class body reading its value {read[0]!r}, computed from the function's variables, "
                             "outside an assignment (a decorator, a default value, a condition: they see plain values)",
                             f"read it through the class or the instance (self.{read[0]}) in the method", node)

    def _hoist_bases(self, node: ast.ClassDef, ours: set, out: list) -> dict[str, str]:
        """A base class computed from ``ours`` (``class Sub(make_base(a))``) computed by the
        function, before the class body's values as Python evaluates it: what it makes (a class
        whose body stores ``a``) carries the derivative, where the class statement would call it
        with plain values. Returns each variable now holding a base with the base's source, for
        the check that it holds no derivative of its own (a class does not). (Class keywords:
        ``_defer_init_subclass``.)"""
        hoisted = {}
        for i, base in enumerate(node.bases):
            if not isinstance(base, ast.Name) and not _deferred_bases(node, base) and _all_names_read(base) & ours:
                target = self.tmp("base")
                self.statement(_at(ast.Assign([ast.Name(target, ast.Store())], base), base), out)
                node.bases[i] = ast.Name(target, ast.Load())
                hoisted[target] = ast.unparse(base)
        return hoisted

    def _hoist_decorators(self, node: ast.ClassDef, ours: set, out: list) -> list[tuple[str, bool]]:
        """The decorators from the outermost down to the last one reading ``ours`` (``@scaled(a)``),
        each computed by the function (top to bottom, before the bases, as Python evaluates them)
        and taken out of the class statement: ``apply_class_decorators`` applies them after it.
        Returns each one's variable, and whether it reads ``ours``: such a one is called by the
        function, differentiated, where the class statement would call it with plain values (a
        write ``cls.factor = k`` is followed: ``rules/local_classes.class_write_rrule``); another
        (``@dataclass`` above it) is called as the class statement would."""
        reading = [i for i, d in enumerate(node.decorator_list) if self._reads_our_variables(d, ours)]
        if not reading:
            return []
        moved, node.decorator_list = node.decorator_list[:reading[-1] + 1], node.decorator_list[reading[-1] + 1:]
        held = []
        for decorator in moved:
            held.append((self.tmp("decorator"), self._reads_our_variables(decorator, ours)))
            self.statement(_at(ast.Assign([ast.Name(held[-1][0], ast.Store())], decorator), decorator), out)
        return held

    def _reads_our_variables(self, decorator: ast.expr, ours: set) -> bool:
        """Whether ``decorator`` reads a variable of the user's function (not a global the class
        statement bound as ours before: a module, ``dataclass``), other than a dataclass's
        (``@dataclass(frozen=flag)``: Python's, called as the class statement calls it)."""
        code = self.fn.__code__
        variables = {*code.co_varnames, *code.co_cellvars, *code.co_freevars}
        read = {self.user_names.get(name, name) for name in _all_names_read(decorator) & ours}
        return bool(read & variables) and not _is_dataclass_decorator(decorator)

    def apply_class_decorators(self, node: ast.ClassDef, out: list) -> None:
        """After the class statement (``normalise.stmt_ClassDef``): ``C = decorator(C)`` for each
        decorator ``_hoist_decorators`` took out of it, innermost first, then the check that the
        class kept its computed values (``_check_stored``), which the statement applies otherwise."""
        name = node.name
        self._init_subclass_call(node, out)
        for held, differentiated in reversed(getattr(self, "class_decorators", [])):
            if differentiated:
                call = ast.Call(ast.Name(held, ast.Load()), [ast.Name(name, ast.Load())], [])
                self.statement(_at(ast.Assign([ast.Name(name, ast.Store())], call), node), out)
            else:
                self.opaque(out, f"{name} = {held}({name})", (name,))
        if getattr(self, "class_decorators", None) and getattr(self, "stored_check", None):
            self.opaque(out, f"{name} = {self.stored_check}({name})", (name,))
        self.class_decorators, self.stored_check = [], None

    def _defer_init_subclass(self, node: ast.ClassDef, ours: set, out: list) -> str | None:
        """Class keywords reading the function's variables (``class Sub(Base, k=a)``, handed to
        ``Base.__init_subclass__``, which the class statement would call with plain values):
        computed by the function, taken out of the statement, and handed to
        ``super(Sub, Sub).__init_subclass__(k=...)`` called by the function after it, differentiated
        (its ``cls.k = k`` followed). The statement's own call is skipped: its bases go through
        ``ir.local_classes.defer_init_subclass`` (refusing a metaclass that may read keywords), and
        its body marks the class (``DEFERRED``). Returns the variable holding the bases, or None."""
        keywords = [k for k in node.keywords if k.arg != "metaclass"]
        if len(keywords) < len(node.keywords) or not any(self._reads_our_variables(k.value, ours) for k in keywords):
            return None  # (none, or an explicit metaclass: checked as plain reads)
        if any(k.arg is None for k in keywords):
            raise self.error("class keywords passed with ** reading the function's variables",
                             "write each keyword out (class Sub(Base, k=a))", node)
        self.init_subclass_keywords = []
        for keyword in keywords:
            held = self.tmp(f"keyword_{keyword.arg}")
            self.statement(_at(ast.Assign([ast.Name(held, ast.Store())], keyword.value), keyword.value), out)
            self.init_subclass_keywords.append((keyword.arg, held))
        bases = self.expr(ast.Tuple(node.bases, ast.Load()), out)
        held = self.tmp("bases")
        message = str(UnsupportedSyntaxError(
            "a class defined in this function whose class keywords read its variables, with a metaclass that "
            "may read them itself", "pass the values to the class as arguments (to __init__ or the method)",
            self.filename, node.lineno, self.fn.__qualname__))
        self.call(out, ir.Const(defer_init_subclass), [ir.Const(message), bases], held)
        node.bases, node.keywords = [ast.Starred(ast.Name(held, ast.Load()), ast.Load())], []
        docstring = node.body[:1] if ast.get_docstring(node, clean=False) is not None else []
        mark = parse_source(f"{DEFERRED} = True").body
        node.body = [*docstring, *located(mark, node), *node.body[len(docstring):]]
        return held

    def _init_subclass_call(self, node: ast.ClassDef, out: list) -> None:
        """After the class statement: the mark taken off (as plain Python: a class holds it), then
        ``super(C, C).__init_subclass__(k=...)`` (``_defer_init_subclass``)."""
        keywords = getattr(self, "init_subclass_keywords", None)
        if not keywords:
            return
        name = node.name
        self.opaque(out, f"delattr({name}, {DEFERRED!r})", ())
        owner = ast.Call(ast.Name("super", ast.Load()), [ast.Name(name, ast.Load())] * 2, [])
        call = ast.Call(ast.Attribute(owner, "__init_subclass__", ast.Load()), [],
                        [ast.keyword(arg, ast.Name(held, ast.Load())) for arg, held in keywords])
        self.statement(_at(ast.Expr(call), node), out)
        self.init_subclass_keywords = []

    def _read_by_the_class_statement(self, node: ast.ClassDef) -> ast.ClassDef:
        """``node`` without the bodies of the methods that read the module's globals themselves
        (``without_rebound_bodies``), for ``normalise.stmt_ClassDef``."""
        return without_rebound_bodies(node)

    def _check_stored(self, node: ast.ClassDef, kept: dict, out: list) -> None:
        """The class decorator (applied last) refusing a class that did not keep a computed value
        as its attribute (``ir.local_classes.class_stored``)."""
        message = str(UnsupportedSyntaxError(
            f"a class whose metaclass or decorators turn its attribute <yb-attribute>, computed from the function's "
            "variables, into something else (a member of an Enum with a mixin type, class Mode(float, Enum), say): its "
            "derivative would be lost",
            "pass the value to the class as an argument, or compute it in a method",
            self.filename, node.lineno, self.fn.__qualname__))
        names = sorted(kept)
        check = self.tmp("stored")
        self.call(out, ir.Const(class_stored), [ir.Const(tuple(names)), ir.Const(message),
                                                *(ir.Var(kept[name]) for name in names)], check)
        if getattr(self, "class_decorators", None) and node is self.lowered_class:  # (applied after them)
            self.stored_check = check
        else:
            node.decorator_list.insert(0, ast.Name(check, ast.Load()))

    def _class_cell(self, name: str) -> ir.Var | None:
        """The cell holding our variable ``name`` in the generated code (None in the first
        lowering, before ``name`` is kept in a cell)."""
        cell = self._cell_of(name)
        if cell is None and name in self.free and not self._module_cell_is_global(name):
            return ir.Var(f"_cell_{name}")
        return cell

    def _hoist_class_values(self, node: ast.ClassDef, ours: set, out: list) -> tuple[set[str], dict[str, str]]:
        """Compute in the function the values the class body assigns from our variables (see the
        module docstring), in the class body's order. A constant it assigned earlier (``n = 2``)
        and such a value reads is computed there too. Returns the names so assigned, and those the
        class body does not bind again otherwise, each with the variable holding its value."""
        hoisted: dict[str, str] = {}  # the class body's name -> the variable holding its value
        bound_here: set[str] = set()  # names the class body binds otherwise (defs, imports...)
        plain: dict[str, ast.stmt] = {}  # names assigned values that read no name of the class
        computed: set[str] = set()
        for statement in node.body:
            value, names = _assigned_value(statement)
            reads = _names_read(value) if value is not None else set()
            if value is not None and reads & (ours | set(hoisted)):
                for name in sorted(reads & set(plain)):
                    self._hoist(plain.pop(name), node.name, hoisted, bound_here, ours, out)
                if reads & bound_here:
                    raise self.error(f"a class body value computed from the function's variables and the class's "
                                     f"own {sorted(reads & bound_here)[0]!r}",
                                     "compute it in a method, or outside the class", statement)
                self._hoist(statement, node.name, hoisted, bound_here, ours, out)
                computed |= set(hoisted)
                continue
            if isinstance(statement, ast.ClassDef):  # (its body sees our variables, not this class's names)
                self._lower_class_body(statement, ours, out)
            written = _bound_names(statement)
            for name in written:
                hoisted.pop(name, None)
                plain.pop(name, None)
            if value is not None and not reads & bound_here:
                plain.update(dict.fromkeys(names, statement))
            else:
                bound_here |= written
        return computed, hoisted

    def _hoist(self, statement: ast.stmt, cls: str, hoisted: dict, bound_here: set, ours: set, out: list) -> None:
        """One class-body assignment computed by the function (``_hoist_class_values``)."""
        value, names = _assigned_value(statement)
        if isinstance(value, ast.Call) and _is_field_call(value):
            if not any(k.arg == "default" for k in value.keywords):
                raise self.error("a field(...) of a class body reading the function's variables other than "
                                 "through default=", "use field(default=...)", statement)
            keyword = next(k for k in value.keywords if k.arg == "default")
            keyword.value = self._class_value(keyword.value, hoisted, cls, names[0], out)
        else:
            statement.value = self._class_value(value, hoisted, cls, names[0], out)
        for name in names:
            hoisted[name] = statement_value_name(statement)
            bound_here.discard(name)

    def _class_value(self, value: ast.expr, hoisted: dict, cls: str, name: str, out: list) -> ast.Name:
        """``class_level(value)`` computed by the function into a fresh variable, read by name."""
        self.line = getattr(value, "lineno", self.line)
        target = self.tmp(f"{cls}_{name}".lstrip("_"))
        atom = self.expr(_ClassNames(hoisted).visit(copy.deepcopy(value)), out)
        self.call(out, ir.Const(class_level), [atom], target)
        return ast.Name(target, ast.Load())

    def _refuse_default_factory(self, call: ast.Call, ours: set, statement: ast.stmt) -> None:
        """The dataclass calls a ``default_factory`` as plain Python: one reading our variables is
        refused."""
        for keyword in call.keywords:
            if keyword.arg == "default_factory" and _all_names_read(keyword.value) & ours:
                raise self.error("a dataclass field's default_factory reading the function's variables, in a class "
                                 "with no decorator spelled dataclass (the dataclass calls it as plain Python)",
                                 "decorate the class with @dataclass or @dataclasses.dataclass(...) where it is "
                                 "defined, give the field its value as an argument when the instance is made, or "
                                 "use field(default=...)", statement)

    def _check_class_level_reads(self, node: ast.ClassDef, names: list, out: list, shown: dict | None = None) -> None:
        """What the class statement still reads of our variables when it runs (bases, decorators,
        keywords) sees plain values: each must hold no derivative (None, a bool, an int, a
        string, a class, a module, or a function capturing nothing) when the class is made, or a
        clear error is raised, never a derivative dropped. ``shown``: how to name a variable the
        function computed (a base's source)."""
        for name in names:
            user = (shown or {}).get(name) or self.user_names.get(name, name)
            message = str(UnsupportedSyntaxError(
                f"a class defined in this function whose decorators, bases or keywords read its "
                f"variable {user!r}, which may carry a derivative (they see plain values)",
                f"pass {user!r} to the class as an argument (to __init__ or the method)",
                self.filename, node.lineno, self.fn.__qualname__))
            value = self.expr(ast.Name(name, ast.Load()), out)
            self.opaque(out, f"if not ({value} is None or type({value}) in (bool, int, str, bytes) or isinstance("
                             f"{value}, type) or type({value}).__name__ == 'module' or type({value}).__name__ == "
                             f"'function' and {value}.__closure__ is None): raise TypeError({message!r})")


def _rebind_global_readers(node: ast.ClassDef, written: set) -> None:
    """The methods of ``node`` (and of the classes nested in it) whose bodies read a global of
    ``written`` (the module writes it with ``global``) rebound to the user's globals first
    (``@_user_globals(_G)``, innermost): their code then reads the module's global when the
    method runs, with its current value and derivative, as a method of a module-level class does
    (``global_writes.py``), where the class statement's copy would hold a value of before."""
    for statement in node.body:
        if isinstance(statement, ast.ClassDef):
            _rebind_global_readers(statement, written)
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and _globals_read(statement) & written:
            rebind = ast.Call(ast.Name("_user_globals", ast.Load()), [ast.Name("_G", ast.Load())], [])
            statement.decorator_list.append(ast.copy_location(rebind, statement))


def _globals_read(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names ``function``'s body (and the functions in it) reads or writes as globals, were it
    defined at module level: not its parameters nor its own variables."""
    bare = copy.copy(function)
    bare.decorator_list = []
    bare.args = copy.copy(function.args)  # (its defaults are the class statement's reads)
    bare.args.defaults, bare.args.kw_defaults = [], [None] * len(function.args.kwonlyargs)
    # (in a function binding the names it declares nonlocal: a method alone would not compile)
    nonlocals = sorted({name for n in ast.walk(bare) if isinstance(n, ast.Nonlocal) for name in n.names})
    binds = [ast.Assign([ast.Name(name, ast.Store()) for name in nonlocals], ast.Constant(None))] if nonlocals else []
    scope = ast.FunctionDef("_yb_scope", ast.arguments([], [], None, [], [], None, []), [*binds, bare], [])
    table = symtable.symtable(ast.unparse(ast.fix_missing_locations(ast.Module([scope], []))), "<yuebing method>",
                              "exec")
    found, pending = set(), list(table.get_children())
    while pending:
        scope = pending.pop()
        found |= {s.get_name() for s in scope.get_symbols() if s.is_global() and (s.is_referenced() or s.is_assigned())}
        pending.extend(scope.get_children())
    return found


def without_rebound_bodies(node: ast.ClassDef) -> ast.ClassDef:
    """``node`` with the bodies of the methods ``_rebind_global_readers`` rebound left out: what
    the class statement reads of the user's globals itself (bound as its locals first, or
    refused when the module writes them: ``normalise.stmt_ClassDef``)."""
    node = copy.deepcopy(node)
    for n in ast.walk(node):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and d.func.id == "_user_globals"
                for d in n.decorator_list):
            n.body = [ast.Pass()]
    return node


def _defaults_as_class_values(body: list, ours: set) -> list:
    """``body`` (a class body) with its methods' default values that read our variables or the
    class's names assigned before (``scale = a * 3``, then ``k=scale``) made class values."""
    made: list = []
    for statement in body:
        made += _method_defaults(statement, ours | {n for s in made for n in _bound_names(s)})
    return made


def _method_defaults(method: ast.stmt, names: set) -> list:
    """``method`` (a class-body statement) and, before it, its default values that read
    ``names``, each as a class attribute the class body assigns (computed by the function, with
    its derivative, when it reads our variables: ``_hoist_class_values``); the method reads it through ``__class__``
    (the class defining it, as zero-argument ``super()`` finds it) when the caller gave none::

        def scaled(self, v, k=2 * a):             _yb_default_scaled_k = 2 * a
            return v * k                 ->       def scaled(self, v, k=MISSING):
                                                      if k.__class__ is str and k == MISSING:
                                                          k = __class__._yb_default_scaled_k
                                                      return v * k"""
    if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [method]
    positional = [*method.args.posonlyargs, *method.args.args]
    with_defaults = positional[len(positional) - len(method.args.defaults):]
    values: list = []
    checks: list = []
    for defaults, owners in ((method.args.defaults, with_defaults), (method.args.kw_defaults, method.args.kwonlyargs)):
        for i, (default, owner) in enumerate(zip(defaults, owners)):
            if default is None or not _all_names_read(default) & names:
                continue
            attribute = f"_yb_default_{method.name}_{owner.arg}"
            values.append(ast.copy_location(ast.Assign([ast.Name(attribute, ast.Store())], default), default))
            defaults[i] = ast.Constant(MISSING)
            checks += parse_source(f"if {owner.arg}.__class__ is str and {owner.arg} == {MISSING!r}:\n"
                                   f"    {owner.arg} = __class__.{attribute}").body
    if not values:
        return [method]
    docstring = method.body[:1] if ast.get_docstring(method, clean=False) is not None else []
    method.body = [*docstring, *located(checks, method), *method.body[len(docstring):]]
    return [*values, method]


def _factories_in_post_init(node: ast.ClassDef, ours: set) -> None:
    """A dataclass field's ``default_factory`` reading our variables, called by the class's
    ``__post_init__`` (which the construction differentiates) instead of by the generated
    ``__init__`` (which calls it as plain Python)::

        w: list = field(default_factory=lambda: [a])     _yb_factory_w = lambda: [a]
                                                   ->    w: list = field(default=MISSING)
                                                         def __post_init__(self, *initvars):
                                                             <_FILL: each field holding MISSING
                                                              gets type(self)._yb_factory_<name>()>
                                                             super().__post_init__(*initvars)  # (if any)

    The factory is a class value (a lambda reading our variables through the cells its class
    gets, as a method does), called once per instance that is given no value, after the fields
    are set and before the class's own ``__post_init__`` body, as ``__init__`` would have called
    it. The filling is written with ``object.__setattr__`` (a frozen class's ``frozen=`` may be
    computed) and looks the factory up on ``type(self)``; a subclass's own ``__post_init__``
    starts with it too, since it replaces the one that would have filled the inherited fields.
    Left as it is (and refused) for a class with no decorator spelled ``dataclass``."""
    if not _is_dataclass_statement(node):
        return
    fields = [(s, k) for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
              and isinstance(s.value, ast.Call) and _is_field_call(s.value)
              for k in s.value.keywords if k.arg == "default_factory" and _all_names_read(k.value) & ours]
    post_init = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__post_init__"), None)
    inherits = bool(node.bases or node.keywords)
    if not fields and not (inherits and post_init is not None):
        return
    for statement, keyword in fields:
        name = statement.target.id
        node.body.insert(node.body.index(statement), ast.copy_location(
            ast.Assign([ast.Name(f"_yb_factory_{name}", ast.Store())], keyword.value), statement))
        keyword.arg, keyword.value = "default", ast.Constant(MISSING)
    if post_init is None:
        post_init = parse_source(f"def __post_init__(self, *_yb_initvars):\n    pass{_NEXT if inherits else ''}").body[0]
        node.body.append(located([post_init], node)[0])
    first = [*post_init.args.posonlyargs, *post_init.args.args][0].arg
    docstring = post_init.body[:1] if ast.get_docstring(post_init, clean=False) is not None else []
    fill = parse_source(_FILL.format(self=first, missing=MISSING)).body
    post_init.body = [*docstring, *located(fill, post_init), *post_init.body[len(docstring):]]


#: the fields a factory of ``_factories_in_post_init`` is still to fill (of this class or a base)
_FILL = """\
for _yb_name in {self}.__dataclass_fields__:
    if getattr({self}, _yb_name, None).__class__ is str and getattr({self}, _yb_name) == {missing!r}:
        object.__setattr__({self}, _yb_name, getattr(type({self}), '_yb_factory_' + _yb_name)())
"""


#: what an inherited ``__post_init__`` the one ``_factories_in_post_init`` adds replaces would do
#: (``super()`` is followed as ``super().attribute``, and the base may have none)
_NEXT = """
    for _yb_base in __class__.__mro__[1:]:
        if '__post_init__' in vars(_yb_base):
            vars(_yb_base)['__post_init__'](self, *_yb_initvars)
            break
"""


def _is_dataclass_statement(node: ast.ClassDef) -> bool:
    """Whether a decorator of the class is spelled ``dataclass`` (``@dataclass``,
    ``@dataclasses.dataclass(frozen=...)``)."""
    return any(_is_dataclass_decorator(decorator) for decorator in node.decorator_list)


def _is_dataclass_decorator(decorator: ast.expr) -> bool:
    called = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (called.id if isinstance(called, ast.Name) else getattr(called, "attr", None)) == "dataclass"


def statement_value_name(statement: ast.stmt) -> str:
    """The variable a hoisted class-body statement now assigns from."""
    value = statement.value
    if isinstance(value, ast.Call):  # field(default=_Model_w3)
        value = next(k.value for k in value.keywords if k.arg == "default")
    return value.id


def _assigned_value(statement: ast.stmt) -> tuple[ast.expr | None, list[str]]:
    """``(value, names)`` of ``a = b = value`` or ``a: T = value`` at the class body's top level."""
    if isinstance(statement, ast.Assign) and all(isinstance(t, ast.Name) for t in statement.targets):
        return statement.value, [t.id for t in statement.targets]
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value is not None:
        return statement.value, [statement.target.id]
    return None, []


def _is_field_call(call: ast.Call) -> bool:
    """``field(...)`` or ``dataclasses.field(...)``."""
    func = call.func
    return isinstance(func, ast.Name) and func.id == "field" or isinstance(func, ast.Attribute) and func.attr == "field"


def _deferred_bases(node: ast.ClassDef, base: ast.expr) -> bool:
    """``*held``, the bases ``_defer_init_subclass`` left in a class it marked: the class statement
    of a plain forward program, normalised again in third order (hoisting it refused a starred
    expression the user did not write)."""
    marked = any(isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == DEFERRED for t in s.targets)
                 for s in node.body)
    return marked and isinstance(base, ast.Starred) and isinstance(base.value, ast.Name)


def _all_names_read(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _names_read(node: ast.AST) -> set[str]:
    """Names a class-body value reads, not counting the bodies of lambdas in it: a lambda stays in
    the class body, a method whose captures are ``class_cells``' (a comprehension is computed by
    the function)."""
    found, pending = set(), [node]
    while pending:
        n = pending.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            found.add(n.id)
        pending.extend(ast.iter_child_nodes(n) if not isinstance(n, ast.Lambda)
                       else [*n.args.defaults, *(d for d in n.args.kw_defaults if d)])
    return found


def _bound_names(statement: ast.stmt) -> set[str]:
    """Names a class-body statement binds in the class (not inside its methods)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    found = {n.id for n in _class_scope_nodes(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    found |= {(a.asname or a.name).split(".")[0] for n in _class_scope_nodes(statement)
              if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    return found


def _class_scope_nodes(node: ast.AST):
    """The nodes of ``node`` the class body runs itself (not the bodies of nested scopes: of a
    method, its decorators and default values; of a comprehension, its first iterable)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        parts = [*getattr(node, "decorator_list", []), *node.args.defaults, *(d for d in node.args.kw_defaults if d)]
    elif isinstance(node, ast.ClassDef):
        parts = [*node.decorator_list, *node.bases, *node.keywords, *node.body]
    elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        parts = [node.generators[0].iter]
    else:
        yield node
        parts = list(ast.iter_child_nodes(node))
    for part in parts:
        yield from _class_scope_nodes(part)


def _class_level_names(node: ast.ClassDef, nested: bool = True) -> set[str]:
    """Names the class statement reads when it runs: bases, keywords, decorators, its body's
    statements outside methods, the methods' decorators and default values (and those of the
    classes nested in its body, unless ``nested`` is False)."""
    if not nested:
        node = copy.copy(node)
        node.body = [s for s in node.body if not isinstance(s, ast.ClassDef)]
    return {n.id for n in _class_scope_nodes(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _at(statement: ast.stmt, node: ast.AST) -> ast.stmt:
    """``statement`` (made by us) at the user's ``node``, for errors and the line maps."""
    for n in ast.walk(statement):
        n.lineno, n.end_lineno = node.lineno, getattr(node, "end_lineno", node.lineno)
        n.col_offset, n.end_col_offset = node.col_offset, getattr(node, "end_col_offset", node.col_offset)
    return statement


def _methods(node: ast.ClassDef) -> list:
    """The functions (and lambdas) the class statement makes, at any depth of the class body
    (a nested class's too), not those inside them (their captures are the outer one's)."""
    found = []
    pending = list(node.body) + list(node.decorator_list) + list(node.bases)
    while pending:
        n = pending.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            found.append(n)
            continue
        pending.extend(ast.iter_child_nodes(n))
    return found


class _ClassNames(ast.NodeTransformer):
    """A class-body value with the class's earlier names read from where the function put them
    (not inside nested scopes, which do not see the class's names)."""

    def __init__(self, hoisted: dict[str, str]) -> None:
        self.hoisted = hoisted

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.hoisted and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Name(self.hoisted[node.id], ast.Load()), node)
        return node

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            first = node.generators[0]  # (evaluated in the class body: it sees the class's names)
            first.iter = self.visit(first.iter)
            return node
        if isinstance(node, ast.Lambda):
            return node
        return super().generic_visit(node)
