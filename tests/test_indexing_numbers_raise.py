"""Indexing a number raises Python's own error in differentiated code, so a handler probing for a
sequence runs as it does in Python (SciPy's splint tries ``c[0][0]``: ``spl.integral`` of a
spline of computed data met a refusal naming operator.getitem, fuzz_recent seed 96200), instead of
yuebing's refusal. Checked by ``fuzz.check_program``: reverse vs forward vs differences vs hvp."""
import numpy as np
import pytest

from yuebing.testing import fuzz

PROBES = {
    "numpy scalar": "v = np.sum(x * s)\n    try:\n        v[0]\n        w = 2.0\n    except IndexError:\n        w = 3.0",
    "python float": "v = float(np.sum(x)) * s\n    try:\n        v[0]\n        w = 2.0\n    except TypeError:\n        w = 3.0",
    "splint's probe": "c = np.sin(x) * s\n    try:\n        c[0][0]\n        w = 2.0\n    except Exception:\n        w = 3.0",
}


@pytest.mark.parametrize("probe", list(PROBES), ids=list(PROBES))
def test_a_handler_probing_a_number_runs_as_in_python(probe):
    source = f"import numpy as np\n\n\ndef f(x, s):\n    {PROBES[probe]}\n    return w * np.sum(np.sin(x)) * s ** 2\n"
    outcome = fuzz.check_program(source, (np.array([0.3, -0.5, 0.9]), 0.7))
    assert outcome.status == "right", str(outcome)


def test_indexing_a_number_unhandled_raises_pythons_error():
    import yuebing as yb

    def f(s):
        return (s * s)[0]

    with pytest.raises(TypeError, match="not subscriptable"):
        yb.grad(f)(0.7)
