"""Rules for the methods of ``list``, ``dict`` and ``set``, and for ``copy.copy`` /
``copy.deepcopy``, by sub-domain: ``lists``, ``dicts``, ``sets``, ``copies``; ``common`` holds
the element slots and the argument handling they share, and describes the mutation convention.

Methods are ``(type, name)`` rules with ``self`` first. ``list.index``/``count`` and
``tuple.index``/``count`` are in ``nondifferentiable.py``; operators (``+``, ``[]``, ``+=``) belong
to the operator and indexing rules, so dunder methods are not registered here.

This module only imports: ``rules.rule_modules`` finds the rule modules themselves. It names what
other rule files (``objects``) build on.
"""
from .common import _NOT_PASSED, _counted, _element_fdata, _overwriting_slot, _reinsert, _restored, _slot

__all__ = ["_NOT_PASSED", "_counted", "_element_fdata", "_overwriting_slot", "_reinsert", "_restored", "_slot"]
