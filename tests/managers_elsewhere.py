"""Context manager classes of a module other than the functions using them
(``tests/test_managers_elsewhere.py``)."""


class Holding:
    """Keeps a value carrying a derivative and returns a scaled copy."""

    def __init__(self, scale):
        self.scale = scale

    def __enter__(self):
        self.doubled = 2.0 * self.scale
        return self.doubled

    def __exit__(self, kind, error, traceback):
        return kind is not None and issubclass(kind, ValueError)  # suppresses a ValueError

