"""``np.seterr(all='raise')`` set before yuebing is imported (ir/float_errors.py): the state in force
at import is then not passed over as NumPy's default, so a derivative's floating-point error is
ignored and the primal's raises, as under a later ``np.errstate``. Run in a fresh interpreter,
since the state at import is what is tested."""
import os
import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent("""
    import numpy as np
    np.seterr(divide="raise", invalid="raise")
    import yuebing as yb

    def f(x):
        return np.sum(np.sqrt(x * x))  # at 0, sqrt's derivative divides by zero: the derivative's error

    x = np.array([0.0, 1.0])
    value, tangent = yb.jvp(f, (x,), (np.ones(2),))
    assert value == 1.0
    yb.grad(f)(np.array([0.5, 1.0]))

    def g(x):
        return np.sum(1.0 / (x - x))  # the primal divides by zero

    for run in (lambda: yb.grad(g)(x), lambda: yb.jvp(g, (x,), (x,))):
        try:
            run()
        except FloatingPointError:
            continue
        raise AssertionError("the primal's division by zero did not raise")
    print("ok")
""")


def test_a_raising_state_set_before_import():
    result = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
