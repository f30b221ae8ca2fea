"""What yuebing's function objects pickle in place of the user's function (docs/scale-out.md).

A function that plain ``pickle`` sends by name (defined at the top level of an importable module,
a bound method of a picklable object) is pickled as itself: the other process imports it, with
its source file. A function that ``cloudpickle`` sends by value (a lambda, a closure, anything
defined in ``__main__`` or a notebook) arrives without its source: cloudpickle rebuilds its code
with the file name ``<dynamic-code>``, and yuebing differentiates from source. So such a function
travels with the source text of its file -- and of the files of the by-value functions it reaches
through its closure, defaults and globals -- and, when it is loaded, its code gets its file name
back and the text is put in ``linecache`` under that name (under ``<name> (as pickled)`` if a
different file of that name exists there). Yuebing then checks, as for any function, that the
text compiles to exactly the code that runs (``frontend/source.py``).
"""
from __future__ import annotations

import linecache
import sys
import types
from typing import Any, Callable

from ..frontend.source import names_used

#: the file name cloudpickle gives the code of a function it pickles by value
DYNAMIC_CODE = "<dynamic-code>"
#: at most this many functions are followed from one function (a guard against huge graphs)
_MAX_FUNCTIONS = 200


def by_reference(fn: Any) -> bool:
    """Whether pickle sends ``fn`` by name: ``fn`` is what its module's attribute path names (an
    importable module other than ``__main__``)."""
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    if module is None or module.__name__ == "__main__":
        return False
    obj: Any = module
    for part in getattr(fn, "__qualname__", "<locals>").split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return False
    return obj is fn


def _reached_functions(f: Any) -> list[types.FunctionType]:
    """The Python functions sent by value (not by reference) from ``f``: ``f`` itself (or a
    bound method's function) and those reachable from it through closures, defaults and the
    globals its code names."""
    start = getattr(f, "__func__", f)
    found: list = []
    seen: set = set()
    stack = [start]
    while stack and len(found) < _MAX_FUNCTIONS:
        fn = stack.pop()
        if not isinstance(fn, types.FunctionType) or id(fn) in seen or by_reference(fn):
            continue
        seen.add(id(fn))
        found.append(fn)
        stack.extend(cell.cell_contents for cell in fn.__closure__ or () if _filled(cell))
        stack.extend(fn.__defaults__ or ())
        stack.extend(fn.__globals__.get(name) for name in names_used(fn.__code__))
    return found


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents
    except ValueError:  # an empty cell
        return False
    return True


class _WithSource:
    """``f`` as pickled with the source text of its by-value functions' files; loads as ``f``."""

    def __init__(self, f: Callable, sources: dict) -> None:
        self.f, self.sources = f, sources

    def __reduce__(self) -> tuple:
        return restore_sources, (self.f, self.sources)

    # a copy in this process stays itself (copy.copy would otherwise go through __reduce__ and
    # hand back the bare function, to be pickled later without its source)
    def __copy__(self) -> "_WithSource":
        return self

    def __deepcopy__(self, memo: dict) -> "_WithSource":
        return self


def portable(f: Callable) -> Any:
    """What a yuebing object's ``__reduce__`` puts in place of ``f``: ``f`` when pickle sends it by
    name, else ``f`` together with the text of its files (loaded as ``f``, source restored)."""
    functions = _reached_functions(f)
    if not functions:
        return f
    sources = {}
    for fn in functions:
        filename = fn.__code__.co_filename
        if filename not in sources and filename != DYNAMIC_CODE:
            lines = linecache.getlines(filename, fn.__globals__)
            if lines:
                sources[filename] = lines
    return _WithSource(f, {"files": sources, "functions": {fn_key(fn): fn.__code__.co_filename for fn in functions}})


class Shipped:
    """A function handed to an executor's tasks: it pickles with its source (``portable``) every
    time it is pickled, also after a first loading -- Dask's scheduler loads a task's arguments
    and pickles them again for the worker, where a bare function would arrive without its
    source. The task takes the function out with ``loaded``."""

    def __init__(self, f: Callable) -> None:
        self.f = f

    def __reduce__(self) -> tuple:
        return Shipped, (portable(self.f),)


def loaded(obj: Any) -> Any:
    """``obj`` as a task uses it: the function of a ``Shipped``, else ``obj`` itself."""
    return obj.f if isinstance(obj, Shipped) else obj


def fn_key(fn: types.FunctionType) -> tuple:
    code = fn.__code__
    return (getattr(code, "co_qualname", fn.__qualname__), code.co_firstlineno)


def restore_sources(f: Callable, sources: dict) -> Callable:
    """``f`` loaded: each of its by-value functions whose code came with the file name
    ``<dynamic-code>`` gets its own file name back, and that file's text is in ``linecache``."""
    names = {}
    for filename, lines in sources["files"].items():
        names[filename] = _register(filename, lines)
    for fn in _reached_functions(f):
        code = fn.__code__
        filename = sources["functions"].get(fn_key(fn))
        if code.co_filename == DYNAMIC_CODE and filename in names:
            fn.__code__ = _with_filename(code, names[filename])
    return f


def _register(filename: str, lines: list) -> str:
    """The ``linecache`` name under which ``lines`` (the text of ``filename`` where ``f`` was
    pickled) can be read here: ``filename`` itself unless a different text is found under it."""
    here = linecache.getlines(filename)
    if here and here != lines:
        filename = f"{filename} (as pickled)"
    elif here:
        return filename
    linecache.cache[filename] = (sum(map(len, lines)), None, list(lines), filename)
    return filename


def _with_filename(code: types.CodeType, filename: str) -> types.CodeType:
    consts = tuple(_with_filename(c, filename) if isinstance(c, types.CodeType) and c.co_filename == DYNAMIC_CODE
                   else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)
