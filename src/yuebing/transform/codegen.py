"""Stage 6: compile generated source into functions, with the source registered in
``linecache`` so tracebacks and ``yb.show`` point at real, readable generated lines."""
from __future__ import annotations

import itertools
import linecache
import types
from typing import Any

from ..rules.core import CoDual
from ..tangents import NoFData, NoRData
from . import array_blocks, ir, runtime, templates

_counter = itertools.count()


def runtime_namespace() -> dict[str, Any]:
    """Names every generated module can use."""
    return {
        "_CD": CoDual,
        "_NF": NoFData,
        "_NR": NoRData,
        "_rrule": runtime.call_rrule,
        "_acc": runtime.acc,
        "_global": runtime.global_value,
        "_global_fdata": runtime.global_fdata,
        "_cell_fdata": runtime.cell_fdata,
        "_closure_fdata": runtime.closure_fdata,
        "_closure_rdata": runtime.closure_rdata,
        "_with_user_globals": runtime.with_user_globals,
        "_SHARED": runtime.SharedBox,
        "_new_cell_box": runtime.new_cell_box,
        "_STAR": runtime.Star,
    }


def compile_generated(generated: Any, fn: types.FunctionType, function_ir: ir.Function) -> tuple[Any, Any]:
    filename = f"<yuebing reverse {fn.__qualname__} #{next(_counter)}>"
    source = generated.source
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = runtime_namespace()
    namespace.update(templates.NAMESPACE)
    namespace.update(array_blocks.NAMESPACE)
    namespace.update(generated.constants)
    namespace["_G"] = fn.__globals__
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own generated code
    forward = namespace[generated.forward_name]
    reverse = namespace[generated.reverse_name]
    forward.__yuebing_line_map__ = generated.line_map
    return forward, reverse
