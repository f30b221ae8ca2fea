"""Helpers of the array-block tests (``test_array_blocks.py``, ``test_product_blocks.py``): a
block guard that counts the runs it let through, and a directional central difference."""
from yuebing.transform import array_blocks


def counting_guard(monkeypatch, name: str, guard) -> list:
    """Replace guard ``name`` (``_array_shapes``, ``_product_shapes``) of the blocks compiled from
    now on by one that calls ``guard`` and records the shapes it accepted: one entry per block
    run on the fast path."""
    ran: list = []

    def counted(*args):
        shapes = guard(*args)
        if shapes is not None:
            ran.append(shapes)
        return shapes

    monkeypatch.setitem(array_blocks.NAMESPACE, name, counted)
    return ran


def directional_fd(f, args, direction, h=1e-6):
    """The central difference of ``f`` at ``args`` along ``direction`` (one entry per argument)."""
    plus = [a + h * d for a, d in zip(args, direction)]
    minus = [a - h * d for a, d in zip(args, direction)]
    return (f(*plus) - f(*minus)) / (2 * h)
