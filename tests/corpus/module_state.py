"""A module whose global ``SCALE`` other code writes as an attribute (``module_state.SCALE = x``),
read by name in its own function: tests/test_containers_more.py."""
SCALE = 1.5


def scaled(x):
    return SCALE * x
