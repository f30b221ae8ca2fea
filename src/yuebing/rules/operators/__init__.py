"""Rules for the ``operator`` module (DESIGN.md §2, §4), by sub-domain: ``arithmetic`` (``add sub
mul truediv floordiv mod pow neg pos abs concat``, dispatching on the operand types: numbers and
arrays, sequence concatenation and repetition) and ``in_place`` (``iadd isub imul ... iconcat``);
``common`` holds the classification of operands and the element helpers (``Elements``, ``ref``,
``list_output``...) that build new lists and tuples.

This module only imports: ``rules.rule_modules`` finds the rule modules themselves. It names what
other rule files (``builtins``) build on, and it imports ``in_place`` too, so that importing
``rules.operators`` registers every operator rule: ``second_order.py`` reads the in-place
operators' partials (``declare.ELEMENTWISE_PARTIALS``) when it is imported, and ``builtins``
imports this package before it.
"""
from . import in_place  # noqa: F401 - see below
from .arithmetic import ABS_RULES, POW_RULES, _pow_dbase, _pow_dexp
from .common import (
    Elements, fit_element, forward_elements, forward_sequence, fresh_tangent, list_output, rdata_part, ref, send,
    tangent_free, tuple_of, tuple_output,
)

__all__ = [
    "ABS_RULES", "Elements", "POW_RULES", "_pow_dbase", "_pow_dexp", "fit_element", "forward_elements",
    "forward_sequence", "fresh_tangent", "list_output", "rdata_part", "ref", "send", "tangent_free", "tuple_of",
    "tuple_output",
]
