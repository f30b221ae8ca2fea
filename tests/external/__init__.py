"""The external corpus: functions written by others (installed test-only packages from PyPI),
differentiated by yuebing and checked against central differences, against a ``jax.numpy`` twin
of the same code where it runs under jax (``jax.grad``/``jax.hessian``), and by complex step where
differences cannot resolve the derivative.

``cases`` and ``cases_filterpy`` enumerate the functions (their code stays in their packages:
nothing is copied here), ``oracle`` holds the oracles, ``classify`` runs one case and sorts it into
right / refused / wrong / unverified / unusable, ``repros`` holds the minimal reproduction of each
failure mechanism found, ``report`` renders the summary and ``docs/external-corpus.md``.
"""
