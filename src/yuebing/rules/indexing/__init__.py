"""Indexing rules, by sub-domain: ``items`` (``[]``: ``operator.getitem``/``setitem``/``delitem``
and the item methods of ``np.ndarray``, ``list``, ``tuple``, ``dict``, ``str``...) and
``gather_scatter`` (NumPy's ``take``, ``put``, ``take_along_axis``, ``put_along_axis``,
``ufunc.at``, ``compress``, ``extract``, ``choose``, ``select``); ``common`` holds what they
share (element slots, values written into arrays and lists, index classification) and describes
the data model.

This module only imports: ``rules.rule_modules`` finds the rule modules themselves.
"""
