"""Differentiation rules for primitives: ``rrule``/``frule`` registries grouped by domain
(builtins and operators, math, containers, objects, NumPy, linear algebra, SciPy). Filled by the
rule-system issue; see DESIGN.md §4."""
