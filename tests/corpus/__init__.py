"""The derived-rule corpus: Python functions, each registered with example arguments by
``@case(*args, **check_rule_options)``, run through ``check_rule`` by tests/test_corpus.py."""


def corpus_registry():
    """``(entries, case)``: a list of ``(function, args, options)`` and its registering decorator."""
    entries = []

    def case(*args, **options):
        def register(fn):
            entries.append((fn, args, options))
            return fn

        return register

    return entries, case
