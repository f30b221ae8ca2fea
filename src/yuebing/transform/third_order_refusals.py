"""Refusals of third order (``third_order.jvp_rule``) that name what the user wrote.

* A global carrying derivatives: ``global_writes.check_third_order`` finds it, with the
  ``TypeError`` the other orders raise for a global they cannot follow; here it is a
  ``NestedDifferentiationError`` (still a ``TypeError``, for callers catching that), naming the
  global as written by any of its forms (``global G``, ``setattr(module, "G", v)``,
  ``globals()["G"] = v``), the user's line added as for every refusal.
* A class defined in the function under ``yb.grad`` that reads its variables: the helper of
  ``ir/local_classes.py`` its class statement calls says which part of the class reads them.
"""
from __future__ import annotations

from typing import Any

from ..ir import local_classes
from .global_writes import check_third_order, global_get, global_set
from .plain_forward import _refusal as restructure
from .protocols import NestedDifferentiationError


class GlobalNotFollowed(NestedDifferentiationError, TypeError):
    """Third order does not follow a global written a value carrying derivatives."""


_GLOBAL_ADVICE = ("return the value instead of writing it to a global (or to the module), or take the Hessian of "
                  "the gradient's function itself")


def check_global(f: Any, values: list) -> None:
    """Raise ``GlobalNotFollowed`` for a global read or written with derivatives in third order."""
    if f is not global_get and f is not global_set:
        return
    try:
        check_third_order(f, values)
    except TypeError:
        name = values[1]
        if f is global_set:
            what = (f"the global {name!r} written a value carrying derivatives (by a global statement, through the "
                    "module or through globals())")
        else:
            what = f"the global {name!r} read after a differentiation around this one wrote it a value carrying derivatives"
        raise GlobalNotFollowed(*restructure(what, _GLOBAL_ADVICE).args) from None


#: what of a class defined in the function reads its variables, by the helper its statement calls
_CLASS_PARTS = {
    local_classes.defer_init_subclass: ("its class keywords read them: class Sub(Base, k=...)",
                                        "pass the value to the class as an argument (to __init__ or a method) "
                                        "instead of a class keyword"),
    local_classes.class_level: ("its class body computes values from them",
                                "pass the values to the class as arguments (to __init__ or a method)"),
}
_CLASS_DEFAULT = ("through cells; a class reading none works",
                  "define the class at module level and pass what it needs as arguments")


def local_class_refusal(f: Any) -> Exception:
    """The refusal of a class defined in the function under ``yb.grad`` reading its variables."""
    what, advice = _CLASS_PARTS.get(f, _CLASS_DEFAULT)
    return restructure(f"classes defined inside it that read its variables ({what})", advice)


__all__ = ["GlobalNotFollowed", "check_global", "local_class_refusal"]
