"""The external corpus: functions written by others (installed test-only packages from PyPI),
differentiated by yuebing and checked against central differences and, where a ``jax.numpy``
twin of the same code runs, against ``jax.grad``/``jax.hessian``.

``cases`` enumerates the functions (their code stays in their packages: nothing is copied here),
``oracle`` holds the finite-difference and jax oracles, ``classify`` runs one case and sorts it
into right / refused / wrong, ``report`` renders the summary and ``docs/external-corpus.md``.
"""
