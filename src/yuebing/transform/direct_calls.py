"""Direct calls of Python functions from generated code: one Python frame per level of recursion.

A call site reaches a Python function through the runtime's dispatch (``call_rrule`` ->
``dispatch`` -> the derived rule's ``__call__`` -> its generated pass): five frames between two
levels of a recursive function, and a pullback closure between two levels of its reverse pass.
Python's recursion limit counts them all, so a recursion 2,000 levels deep would need a limit
of 12,000. Here a call site calls the callee's generated pass itself when its callee is

* a global name, or a module's attribute (``mod.f``), bound to a plain Python function when the
  code is generated (``rec`` inside ``rec``, a helper of a module); a call with keywords or with defaults filled is bound to its
  parameters then, as Python binds it (``Binding``), and valid while the name holds a function
  with that code object and defaults tuple (the defaults are read at each call);
* a variable read from a closure cell (a nested ``def`` calling itself) or as an item of a dict
  or list (``table['f']``, ``fs[0]``);
* a closure cell's or attribute's function called by the caller's own name with keywords or
  defaults filled: bound to the caller's parameter names (``Binding.by_names``), valid for a
  callee with the same names, none positional-only, and enough defaults; a method of the
  caller's own class called by another name so, bound to that method's names as found when the
  code is generated (``_sibling_names``), valid while the callee has those names;
* a variable read as an attribute (``self.walk``, ``child.evaluate``, ``super().walk``) holding a bound method:
  its function is called with the object first, the object's fdata and tangents taken from the
  method's and its rdata given back as the method's, as the runtimes' ``_call_method`` do;

and, at run time, the function's rule was derived before (``DirectTable``: per code object and
module, registered by the runtime's dispatch the first time it derives the rule), the call
passes exactly its parameters, and no rule is registered for that function (checked at every
call: one may be registered at any time). Anything else takes the general path, so what runs is
what dispatch would run:

* reverse mode: the callee's forward pass records on the caller's tape, followed by its reverse
  pass and ``DIRECT`` (as ``np.vectorize``'s element calls do in ``runtime.py``); the caller's
  reverse pass, meeting ``DIRECT``, runs that reverse pass on the same tape, which pops exactly
  what the callee pushed. No pullback closure is made. A call inside a ``try`` body keeps the
  general path: a handler must find the tape as the failing call's rule leaves it (undone);
* forward mode: the callee's generated function returns ``(value, tangent)``;
* second order: as reverse mode, with 4-tuples.

An error raised in a callee reached directly is annotated by the rule that catches it (the
outermost reached by dispatch), which names every generated frame of the traceback
(``user_line_notes``).
"""
from __future__ import annotations

import inspect
import linecache
import operator
import os
import types
from typing import Any, Callable

from ..frontend.underscore_names import user_spelling
from ..ir import nodes as ir
from ..ir.primitives import cell_get, super_getattr
from ..rules.core import FRULES, RRULES
from ..rules.second_order import _BY_FUNCTION as _SECOND_ORDER_DECLARATIONS
from ..rules.util import zero_fdata
from ..tangents import NoFData, NoRData, NoTangent, Tangent, fdata, zero_tangent
from .codegen import user_location, user_qualname

FUNCTION = types.FunctionType

#: Pushed after a direct call's reverse pass: the reverse code pops it, then that pass.
DIRECT = type("DirectCall", (), {"__repr__": lambda self: "<direct call>"})()
#: The same after a direct call of a bound method's function (its object's rdata goes to the method).
DIRECT_METHOD = type("DirectMethodCall", (), {"__repr__": lambda self: "<direct method call>"})()

#: False (``YUEBING_DIRECT_CALLS=0``): every call site takes the general path (to measure what
#: direct calls save, or to rule them out)
ENABLED = os.environ.get("YUEBING_DIRECT_CALLS", "1") != "0"

_MAX_LOCATION_NOTES = 8
_MORE_LEVELS = "  ... (outer calls omitted)"
_NOTED = "_yuebing_noted_frames"  # attribute of an exception: the generated frames already named


class DirectTable:
    """One mode's generated passes that call sites may call directly: ``code -> (globals,
    number of parameters, *passes)``, for rules of functions without ``*args``, ``**kwargs`` or
    keyword-only parameters; and each generated pass's filename -> its rule (for error notes).

    Python compares code objects by value, so the same ``def`` text run in two namespaces (a
    template ``exec``-ed per module) gives equal code objects whose passes read different
    globals: ``entries`` holds the first namespace's (what call sites' guards read, one dict
    lookup), ``entry_of`` finds any namespace's."""

    def __init__(self, passes: Callable[[Any], tuple]) -> None:
        self.entries: dict = {}
        self._by_module: dict = {}  # (code, id(globals)) -> entry, for namespaces after the first
        self.rules_by_file: dict[str, Any] = {}
        self._passes = passes

    def note(self, fn: types.FunctionType, rule: Any) -> None:
        """Called by the runtime's dispatch when it runs ``rule``, derived for ``fn``."""
        code = fn.__code__
        first = self.entries.get(code)
        if first is not None and (first[0] is fn.__globals__ or (code, id(fn.__globals__)) in self._by_module) \
                or not rule.simple:
            return
        passes = self._passes(rule)
        self.rules_by_file[passes[0].__code__.co_filename] = rule
        entry = (fn.__globals__, rule.n_params, *passes)  # (its globals keep the id in use)
        if first is None:
            self.entries[code] = entry
        else:
            self._by_module[(code, id(fn.__globals__))] = entry

    def forget(self, code: types.CodeType) -> None:
        """Drop the passes generated from ``code`` (call sites take the general path, which notes new ones)."""
        self.entries.pop(code, None)
        for key in [key for key in self._by_module if key[0] == code]:
            del self._by_module[key]

    def entry_of(self, fn: types.FunctionType) -> tuple | None:
        """``(globals, number of parameters, *passes)`` of ``fn`` (its code in its namespace), or None."""
        entry = self.entries.get(fn.__code__)
        if entry is not None and entry[0] is fn.__globals__:
            return entry
        return self._by_module.get((fn.__code__, id(fn.__globals__))) if self._by_module else None


def direct_callee(generator: Any, s: ir.Call, taped: bool = True) -> str | None:
    """The callee's name when call site ``s`` may call a generated pass directly (its bindings
    then on ``s``: ``direct_binding``, ``direct_alternative``): a global name bound to a plain
    Python function now, or a variable read from a closure cell or an attribute (positionally,
    or by the caller's own parameter names when it calls itself), outside any ``try`` body when
    the generated code keeps a tape (``taped``)."""
    func = s.func
    s.direct_binding = s.direct_alternative = None  # type: ignore[attr-defined]
    if not ENABLED or s.star_args is not None or s.star_kwargs is not None:
        return None
    name, binding = None, None
    if isinstance(func, ir.Var) and func.name in _callee_reads(generator):
        kind, callee = _callee_reads(generator)[func.name]
        params = [generator.fn.user_names.get(p, p) for p in generator.fn.params]  # (as the user named them)
        by_names = callee == generator.fn.name.rsplit(".", 1)[-1] and (
            s.kwargs or len(s.args) + (kind is getattr) < len(params))
        if by_names:  # calling itself with keywords or defaults filled: bound as to its own parameters
            paths = [Binding.by_names(params, s, method=True)] if kind is getattr else []
            paths = [b for b in [*paths, Binding.by_names(params, s, method=False)] if b is not None]
        elif kind is getattr and (sibling := _sibling_names(generator, callee)) is not None and (
                s.kwargs or len(s.args) + 1 < len(sibling)):  # another method of the caller's class, by names
            paths = [b for b in [Binding.by_names(sibling, s, method=True)] if b is not None]
        elif s.kwargs:
            paths = []
        elif kind is getattr:  # a bound method (self.walk, child.evaluate), or a function stored there
            paths = [Binding(None, None, [OWNER, *((a,) for a in s.args)], method=True), positional(s)]
        else:
            paths = [positional(s)]
        if paths:
            name, binding = func.name, paths[0]
            s.direct_alternative = paths[1] if len(paths) > 1 else None  # type: ignore[attr-defined]
    elif isinstance(func, ir.Global) and generator.globals is not None:
        fn = _global_path(generator.globals, func.path, generator.fn.global_keys)  # a global name, or a module's attribute (mod.f)
        if type(fn) is FUNCTION and ("." not in func.path or fn not in RRULES.by_function):
            binding = Binding.of(fn, s)
            name = func.path if binding is not None else None
    if name is None or (taped and id(s) in _calls_in_try(generator)):
        return None
    s.direct_binding = binding if binding is not None and not binding.plain else None  # type: ignore[attr-defined]
    return name


class Binding:
    """How a call with keywords or defaults filled binds to the parameters of the function its
    global name holds when the code is generated, as Python would bind it: for each parameter the
    call's atom, or the index of its default. Valid while the name holds a function with that
    code object and that defaults tuple (``guard`` checks both at every call)."""

    def __init__(self, code: types.CodeType, defaults: tuple | None, sources: list, method: bool = False,
                 names: tuple | None = None) -> None:
        self.code, self.defaults, self.sources, self.method = code, defaults, sources, method
        self.names = names  # bound by these parameter names (the callee's must be the same)
        self.plain = code is None and not method and names is None  # the parameters, by position: no check

    @classmethod
    def by_names(cls, names: list, s: ir.Call, method: bool) -> "Binding | None":
        """The binding of call ``s`` to a function whose parameters are ``names`` (the caller's
        own: a function calling itself), the object first when ``method``, or None. Valid for
        any callee with those parameter names, enough defaults and none positional-only (``guard``
        checks them): Python binds by name. A default is indexed from the end of ``__defaults__``."""
        offset = 1 if method else 0
        if len(s.args) + offset > len(names):
            return None
        sources: list = [OWNER] * offset + [(a,) for a in s.args] + [None] * (len(names) - offset - len(s.args))
        for key, atom in s.kwargs:
            if key not in names[offset:] or sources[names.index(key)] is not None:
                return None
            sources[names.index(key)] = (atom,)
        sources = [j - len(names) if source is None else source for j, source in enumerate(sources)]
        return cls(None, None, sources, method, tuple(names))  # type: ignore[arg-type]

    def defaults_needed(self) -> int:
        """How many defaults the callee must have (the first default used, from the end)."""
        return max((-source for source in self.sources if type(source) is int and source < 0), default=0)

    @classmethod
    def of(cls, fn: types.FunctionType, s: ir.Call) -> "Binding | None":
        """The binding of call ``s`` to ``fn``'s parameters, or None (an error, or a signature
        with ``*args``, ``**kwargs`` or keyword-only parameters: the general path)."""
        code = fn.__code__
        if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) or code.co_kwonlyargcount:
            return None
        names = code.co_varnames[:code.co_argcount]
        if len(s.args) > len(names):
            return None
        sources: list = [(a,) for a in s.args] + [None] * (len(names) - len(s.args))
        for key, atom in s.kwargs:
            if key not in names[code.co_posonlyargcount:] or sources[names.index(key)] is not None:
                return None
            sources[names.index(key)] = (atom,)
        defaults = fn.__defaults__ or ()
        first_default = len(names) - len(defaults)
        for j, source in enumerate(sources):
            if source is None:
                if j < first_default:
                    return None
                sources[j] = j - first_default  # the index of its default
        if not s.kwargs and len(s.args) == len(names):
            return positional(s)
        return cls(code, fn.__defaults__, sources)

    def arguments(self, name: str, value: Callable[[ir.Atom], str], default: Callable[[str], str],
                  owner: Callable[[], str] = lambda: "") -> list[str]:
        """Each parameter's value, in order: ``value(atom)`` of the call's, ``default(expr)`` of a
        default, ``owner()`` of a bound method's object."""
        function = "_mf" if self.method else name
        return [value(source[0]) if isinstance(source, tuple) else owner() if source is OWNER
                else default(f"{function}.__defaults__[{source}]") for source in self.sources]

    def argument_slots(self) -> list[tuple[int, ir.Atom]]:
        """``(parameter index, call atom)`` of each argument the call passes."""
        return [(j, source[0]) for j, source in enumerate(self.sources) if isinstance(source, tuple)]


OWNER = "owner"  # a binding's source: the bound method's object


def positional(s: ir.Call) -> Binding:
    """The binding of a call passing exactly its callee's parameters, positionally."""
    return Binding(None, None, [(a,) for a in s.args])  # type: ignore[arg-type]


def binding_of(s: ir.Call) -> Binding:
    """Call site ``s``'s binding (``direct_callee`` made it)."""
    return getattr(s, "direct_binding", None) or positional(s)


def _sibling_names(generator: Any, name: str) -> list | None:
    """The parameter names of method ``name`` of the class whose method is being generated (a
    method calling another of its class by keywords, or with defaults filled), or None. Only a
    guess at what the attribute will hold: ``guard`` checks the names at every call."""
    cls = _own_class(generator)
    function = inspect.getattr_static(cls, name, None) if cls is not None else None
    if type(function) is not FUNCTION:
        return None
    code = function.__code__
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) or code.co_kwonlyargcount or code.co_posonlyargcount:
        return None
    return list(code.co_varnames[:code.co_argcount])


def _own_class(generator: Any) -> type | None:
    """The module-level class that holds the function being generated as a method, or None
    (found once per generator)."""
    if "_direct_own_class" not in generator.__dict__:
        fn, generator._direct_own_class = generator.fn, None
        for value in list((generator.globals or {}).values()):
            method = value.__dict__.get(fn.name) if isinstance(value, type) else None
            code = getattr(method, "__code__", None)
            if code is not None and code.co_filename == fn.filename and code.co_firstlineno == fn.first_line:
                generator._direct_own_class = value
                break
    return generator._direct_own_class


#: the reads whose result a direct call may call: ``super().f`` is a bound method, as ``self.f``
_CALLEE_READS = (cell_get, getattr, operator.getitem, super_getattr)


def _global_path(namespace: dict, path: str, keys: dict) -> Any:
    """The value of global ``path`` (``f``, ``mod.f``) in a function's globals now, or None
    (``keys``: the function's ``global_keys``, ``u_helper`` for the module's ``_helper``)."""
    name, *attributes = path.split(".")
    value = namespace.get(keys.get(name, name))
    for attribute in attributes:
        if not isinstance(value, types.ModuleType):  # a class's attribute may be a descriptor
            return None
        value = getattr(value, attribute, None)
    return value


def _callee_reads(generator: Any) -> dict[str, Any]:
    """The variables of the generator's function assigned a closure cell's contents (->
    ``cell_get``), an attribute (-> ``getattr``) or an item (``table['f']``, ``fs[0]`` ->
    ``operator.getitem``): callees a direct call may reach."""
    found = getattr(generator, "_direct_callee_reads", None)
    if found is None:
        found = {}
        _collect_callee_reads(generator.fn.body, found)
        generator._direct_callee_reads = found
    return found


def _collect_callee_reads(body: list, found: dict) -> None:
    for s in body:
        if isinstance(s, ir.Call) and s.target and isinstance(s.func, ir.Const) and s.func.value in _CALLEE_READS:
            what = s.args[2] if s.func.value is super_getattr else s.args[1] if len(s.args) > 1 else s.args[0]  # its name, or the cell (_cell_go)
            callee = what.value if isinstance(what, ir.Const) else str(what).removeprefix("_cellobj_").removeprefix("_cell_")
            found[s.target] = (getattr if s.func.value is super_getattr else s.func.value, callee)
        for block in ir.child_blocks(s):
            _collect_callee_reads(block, found)


def _calls_in_try(generator: Any) -> set[int]:
    """The ids of the call statements inside ``try`` statements of the generator's function."""
    found = getattr(generator, "_direct_calls_in_try", None)
    if found is None:
        found = set()
        _collect_try_calls(generator.fn.body, False, found)
        generator._direct_calls_in_try = found
    return found


def _collect_try_calls(body: list, inside: bool, found: set) -> None:
    for s in body:
        if inside and isinstance(s, ir.Call):
            found.add(id(s))
        for block in ir.child_blocks(s):
            _collect_try_calls(block, inside or isinstance(s, ir.Try), found)


def guard(generator: Any, name: str, table: DirectTable, rule_tables: tuple, binding: Binding) -> str:
    """The run-time test of a direct call of ``name`` bound by ``binding``; it binds ``_dr`` to
    the callee's entry (and ``_mf`` to a bound method's function). A binding with keywords or
    defaults also needs the same code object and defaults tuple as when it was made."""
    entries = named(generator, "_DIRECT_PASSES", table.entries)
    tables = [named(generator, f"_RULES{k}", t) for k, t in enumerate(rule_tables)]
    function = named(generator, "_FUNCTION", FUNCTION)
    if binding.method:  # a bound method: its function, not registered either way
        test = f"type({name}) is {named(generator, '_METHOD', types.MethodType)} and type(_mf := {name}.__func__) is {function} and "
        test += "".join(f"{name} not in {t} and " for t in tables)
        name = "_mf"
    else:
        test = f"type({name}) is {function} and "
    if binding.names is not None:
        names = named(generator, f"_DNAMES{len(generator.constants)}", binding.names)
        test += f"{name}.__code__.co_varnames[:{len(binding.names)}] == {names} and not {name}.__code__.co_posonlyargcount and "
        if binding.defaults_needed():
            test += f"len({name}.__defaults__ or ()) >= {binding.defaults_needed()} and "
    if binding.code is not None:
        n = len(generator.constants)
        test += f"{name}.__code__ is {named(generator, f'_DCODE{n}', binding.code)} and "
        if any(not isinstance(source, tuple) for source in binding.sources):
            test += f"{name}.__defaults__ is {named(generator, f'_DDEF{n}', binding.defaults)} and "
    not_registered = " and ".join(f"{name} not in {t}" for t in tables)
    return (test + f"(_dr := {entries}.get({name}.__code__)) is not None "
            f"and _dr[0] is {name}.__globals__ and _dr[1] == {len(binding.sources)} and {not_registered}")


def method_self_fdata(method_fdata: Any) -> Any:
    """A bound method's object's fdata, from the method's (reverse mode's ``_call_method``)."""
    return method_fdata.fields.get("__self__", NoFData) if isinstance(method_fdata, Tangent) else NoFData


def method_rdatas(rdatas: tuple) -> tuple:
    """A method's parameters' rdata with the object's first made the bound method's."""
    owner = rdatas[0]
    return (NoRData if owner is NoRData else Tangent(types.MethodType, {"__self__": owner}), *rdatas[1:])


def method_self_tangent(method: types.MethodType, tangent: Any) -> Any:
    """A bound method's object's tangent in forward mode, from the method's."""
    if isinstance(tangent, Tangent) and "__self__" in tangent.fields:
        return tangent.fields["__self__"]
    return default_tangent(method.__self__)


def method_owner(method: types.MethodType, f: Any, t: Any, fd: Any) -> tuple:
    """A bound method's object's 4-tuple in second order, from the method's."""
    return (method.__self__, getattr(f, "__self__", NoFData), getattr(t, "__self__", NoTangent),
            getattr(fd, "__self__", NoFData))


def default_fdata(value: Any) -> Any:
    """A default value's fdata in reverse mode, as the general path gives it."""
    return fdata(zero_tangent(value))


#: forward mode's fresh zero tangent of a value (``forward_runtime.zero_tangent_of``), set by
#: ``forward_runtime.py``: a hook, as that module imports this one
FORWARD_ZERO: list = []


def default_tangent(value: Any) -> Any:
    """A default value's tangent in forward mode, as the general path gives it."""
    return FORWARD_ZERO[0](value)


def default_dual(value: Any) -> tuple:
    """A default value's 4-tuple in second order, as the general path gives it."""
    return value, zero_fdata(value), default_tangent(value), zero_fdata(value)


def named(generator: Any, name: str, value: Any) -> str:
    """``value`` in the generated code's namespace as ``name`` (its constants)."""
    generator.constants[name] = value
    return name


#: yuebing's runtime differentiated like user code (lazy generators, the event loop): its frames
#: are not the user's lines, and would crowd those out of the eight notes
_RUNTIME_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ir") + os.sep


def _runtime_file(rule: Any) -> bool:
    filename = getattr(getattr(rule, "ir", None), "filename", None)
    return isinstance(filename, str) and os.path.abspath(filename).startswith(_RUNTIME_DIR)


def user_line_notes(error: BaseException, stage: str, rule_of: Callable[[str], Any], describe: Callable) -> None:
    """Name, on ``error``, the user's line of every generated frame in its traceback not named
    yet (``rule_of(filename)``: the rule whose generated code that is, or None), innermost
    first (``describe(rule, line, stage)`` words one): the eight innermost, then the outermost."""
    add_note = getattr(error, "add_note", None)
    if add_note is None:
        return
    noted = getattr(error, _NOTED, None)
    if noted is None:
        noted = set()
        try:
            setattr(error, _NOTED, noted)
        except (AttributeError, TypeError):
            pass
    frames = []
    tb = error.__traceback__
    while tb is not None:
        rule = rule_of(tb.tb_frame.f_code.co_filename)
        if rule is not None and id(tb.tb_frame) not in noted:
            frames.append((tb.tb_frame, rule, rule.generated.line_map.get(tb.tb_lineno)))
        tb = tb.tb_next
    if frames:  # an unbound variable the renaming renamed is named as the user wrote it
        user_spelling(error, frames[-1][1].ir.user_names)
    for frame, rule, line in reversed(frames):
        noted.add(id(frame))
        if line is None or _runtime_file(rule):
            continue
        notes = getattr(error, "__notes__", [])
        if len(notes) < _MAX_LOCATION_NOTES:
            add_note(describe(rule, line, stage))
        else:
            _note_outermost(error, add_note, notes, describe(rule, line, stage))


def _note_outermost(error: BaseException, add_note: Callable, notes: list, note: str) -> None:
    """Past the first eight levels (deep recursion, or a deep library call), the levels between are
    left out, but the outermost seen so far is kept after the ellipsis: the one a caller further
    out would reach last is the user's own line, inside the function they differentiate."""
    if _MORE_LEVELS not in notes:
        add_note(_MORE_LEVELS)
        add_note(note)
        return
    position = notes.index(_MORE_LEVELS) + 1
    if position < len(notes):
        error.__notes__[position] = note
    else:
        add_note(note)


class DirectCalls:
    """Direct call sites for the reverse generator and second order's (``reverse.py``,
    ``second_order.py``): the forward pass tries the callee's passes first, the reverse pass
    recognises ``DIRECT``. A generator says which table, which rule tables, and how its values
    are passed (``direct_*``)."""

    direct_table: DirectTable  # set below
    direct_rule_tables: tuple = (RRULES.by_function,)

    def direct_forward(self, s: ir.Call, out: list, indent: int) -> bool:
        """Emit call site ``s`` with its direct path, if it has one (then True)."""
        name = direct_callee(self, s)
        s.direct = name is not None  # type: ignore[attr-defined]
        if name is None:
            return False
        keyword = "if"
        for binding, marker in _branches(self, s):
            test = guard(self, name, self.direct_table, self.direct_rule_tables, binding)
            self.emit(out, indent, f"{keyword} {test}:  # direct: {ir._call_text(s)}", s.line)
            for text in self.direct_call_lines(s, name, binding):
                self.emit(out, indent + 1, text, s.line)
            self.emit(out, indent + 1, f"_push(_dr[3]); _push({marker})", s.line)
            keyword = "elif"
        self.emit(out, indent, "else:", s.line)
        self._generic_call(s, out, indent + 1)
        return True

    def direct_reverse(self, s: ir.Call, out: list, indent: int) -> bool:
        """Undo call site ``s`` with its direct path, if the forward pass had one (then True)."""
        if not getattr(s, "direct", False):
            return False
        self.emit(out, indent, f"_e = _pop()  # undo line {s.line}: {ir._call_text(s)}", s.line)
        keyword = "if"
        for binding, marker in _branches(self, s):
            self.emit(out, indent, f"{keyword} _e is {marker}:", s.line)
            self.emit(out, indent + 1, self.direct_reverse_line(s), s.line)
            if binding.method:  # the object's rdata, as the bound method's (what getattr's pullback reads)
                self.emit(out, indent + 1, self.direct_method_rdata(named(self, "_method_rdatas", method_rdatas)), s.line)
                self._accumulate(s.func, self.direct_rdata(0), out, indent + 1, s.line)
            for k, a in binding.argument_slots():
                self._accumulate(a, self.direct_rdata(k), out, indent + 1, s.line)
            keyword = "elif"
        self.emit(out, indent, "else:", s.line)
        self._generic_reverse(s, "_e", "", out, indent + 1)
        return True

    # reverse mode's values; second order overrides these five
    def direct_call_lines(self, s: ir.Call, name: str, binding: Binding) -> list[str]:
        default = named(self, "_default_fdata", default_fdata)
        owner = named(self, "_method_self_fdata", method_self_fdata)
        args = "".join(", " + v for v in binding.arguments(
            name, lambda a: f"{self.primal(a)}, {self.fdata(a)}", lambda d: f"(_dv := {d}), {default}(_dv)",
            lambda: f"{name}.__self__, {owner}({self.fdata(s.func)})"))
        function = f"_mf, {named(self, '_DNF', NoFData)}" if binding.method else f"{name}, {self.fdata(s.func)}"
        call = f"_dr[2](_tape, {function}{args})"
        return [f"{s.target}, {self.fd(s.target)} = {call}" if s.target else call]

    def direct_reverse_line(self, s: ir.Call) -> str:
        if s.target:
            r = self.rd(s.target)
            return f"_rs = _pop()(_tape, {r}); {r} = _NR"
        return "_rs = _pop()(_tape, _NR)"

    def direct_rdata(self, k: int) -> str:
        return f"_rs[{k}]"

    def direct_method_rdata(self, wrap: str) -> str:
        return f"_rs = {wrap}(_rs)"


class DualDirectCalls(DirectCalls):
    """Direct call sites of second order's generator: values are 4-tuples ``(primal, fdata,
    tangent, fdata tangent)``, the reverse pass takes and returns rdata and its tangent."""

    def direct_call_lines(self, s: ir.Call, name: str, binding: Binding) -> list[str]:
        parts = (self.primal, self.fdata, self.tangent, self.fdata_tangent)
        default = named(self, "_default_dual", default_dual)
        owner = named(self, "_method_owner", method_owner)
        no_f, no_t = named(self, "_DNF", NoFData), named(self, "_DNT", NoTangent)
        function = f"_mf, {no_f}, {no_t}, {no_f}" if binding.method else ", ".join(part(s.func) for part in parts)
        values = "".join(", " + v for v in [function] + binding.arguments(
            name, lambda a: ", ".join(part(a) for part in parts), lambda d: f"*{default}({d})",
            lambda: f"*{owner}({', '.join(part(s.func) for part in parts)})"))
        call = f"_dr[2](_tape{values})"
        return [f"{self._four(s.target)} = {call}" if s.target else call]

    def direct_reverse_line(self, s: ir.Call) -> str:
        if s.target:
            r, rd = self.rd(s.target), self.rdd(s.target)
            return f"_rs, _rsd = _pop()(_tape, {r}, {rd}); {r} = {rd} = _NR"
        return "_rs, _rsd = _pop()(_tape, _NR, _NR)"

    def direct_rdata(self, k: int) -> str:
        return str(k)

    def direct_method_rdata(self, wrap: str) -> str:
        return f"_rs, _rsd = {wrap}(_rs), {wrap}(_rsd)"


def _passes(rule: Any) -> tuple:
    return rule.forward, rule.reverse


REVERSE = DirectTable(_passes)
FORWARD = DirectTable(lambda rule: (rule.forward,))
SECOND = DirectTable(_passes)
DirectCalls.direct_table = REVERSE
DualDirectCalls.direct_table = SECOND
DualDirectCalls.direct_rule_tables = (RRULES.by_function, _SECOND_ORDER_DECLARATIONS)


def forward_direct(generator: Any, s: ir.Call, out: list, indent: int) -> bool:
    """Forward mode's call site ``s`` with its direct path, if it has one (then True): the
    callee's generated function returns ``(value, tangent)``."""
    name = direct_callee(generator, s, taped=False)
    if name is None:
        return False
    default = named(generator, "_default_tangent", default_tangent)
    owner = named(generator, "_method_self_tangent", method_self_tangent)
    keyword = "if"
    for binding, _ in _branches(generator, s):
        test = guard(generator, name, FORWARD, (FRULES.by_function,), binding)
        args = "".join(", " + v for v in binding.arguments(
            name, lambda a: f"{generator.primal(a)}, {generator.tangent(a)}", lambda d: f"(_dv := {d}), {default}(_dv)",
            lambda: f"{name}.__self__, {owner}({name}, {generator.tangent(s.func)})"))
        function = f"_mf, {named(generator, '_DNT', NoTangent)}" if binding.method else f"{name}, {generator.tangent(s.func)}"
        call = f"_dr[2]({function}{args})"
        generator.emit(out, indent, f"{keyword} {test}:  # direct: {ir._call_text(s)}", s.line)
        generator.emit(out, indent + 1, f"{s.target}, {generator.td(s.target)} = {call}" if s.target else call, s.line)
        keyword = "elif"
    generator.emit(out, indent, "else:", s.line)
    generator._generic_call(s, out, indent + 1)
    return True


def _branches(generator: Any, s: ir.Call) -> list[tuple[Binding, str]]:
    """The direct paths of call site ``s``, each with the marker its reverse pass recognises: an
    attribute read may hold a bound method or a plain function (a static method, a function
    stored on the object or its class), so it has one path for each."""
    binding, alternative = binding_of(s), getattr(s, "direct_alternative", None)
    marker = named(generator, "_DIRECT_METHOD", DIRECT_METHOD) if binding.method else named(generator, "_DIRECT", DIRECT)
    if alternative is None:
        return [(binding, marker)]
    return [(binding, marker), (alternative, named(generator, "_DIRECT", DIRECT))]


def note_user_lines(rule: Any, error: BaseException, table: "DirectTable", how: str) -> None:
    """Notes on ``error`` naming the user's line of each generated frame of ``rule`` (and of the
    rules of ``table`` its code called directly) in the traceback; ``how``: how it ran
    (`` (second order)``)."""
    own = rule.forward.__code__.co_filename
    user_line_notes(error, how, lambda name: rule if name == own else table.rules_by_file.get(name), describe_line)


def describe_line(rule: Any, line: int, what: str) -> str:
    """A note naming the user's line ``line`` of ``rule``'s function (``what``: how it ran)."""
    filename, line = user_location(rule.ir.filename, line)
    code = linecache.getline(filename, line).strip()
    return f'  in {user_qualname(rule.ir.filename, rule.name)}{what}\n    File "{filename}", line {line}\n      {code}'


__all__ = ["DIRECT", "FORWARD_ZERO", "DirectCalls", "DualDirectCalls", "DirectTable", "FORWARD", "REVERSE", "SECOND", "direct_callee", "guard", "user_line_notes", "note_user_lines", "describe_line", "forward_direct"]
