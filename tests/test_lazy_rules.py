"""The rules for SciPy load when SciPy is imported, not with yuebing (``rules/lazy.py``): a fresh
``import yuebing`` imports no SciPy, and a first derivative of a SciPy function works whichever
of the two was imported first, in every mode. Each check runs in a fresh interpreter, since this
one has imported everything already."""
from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _run(code: str) -> str:
    """Run ``code`` in a fresh interpreter from the repository root; its standard output."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_import_yuebing_imports_no_scipy():
    loaded = json.loads(_run("""
        import json, sys
        import yuebing
        print(json.dumps(sorted(m for m in sys.modules if m == "scipy" or m.startswith("scipy."))))
    """))
    assert loaded == []


_GAMMALN_OF_SIN = """
    def f(x):
        return scipy.special.gammaln(2.0 + np.sin(x)).sum()

    check_every_mode(f, np.array([0.3, -1.2, 2.0]))
    print("ok")
"""


@pytest.mark.parametrize("imports", [
    "import numpy as np\nimport yuebing as yb\nimport scipy.special",
    "import numpy as np\nimport scipy.special\nimport yuebing as yb",
], ids=["yuebing first", "scipy first"])
def test_first_derivative_of_scipy_special_in_a_fresh_process(imports):
    code = imports + "\nfrom tests.modes import check_every_mode\n" + textwrap.dedent(_GAMMALN_OF_SIN)
    assert _run(code).strip().endswith("ok")


def test_a_distribution_met_first_as_an_argument():
    """A distribution reaches the tangent classification (an argument) before any rule lookup:
    its type is declared non-differentiable by the stats rules, which load first."""
    out = _run("""
        import numpy as np
        import yuebing as yb
        import scipy.stats
        from tests.modes import check_every_mode
        from yuebing.tangents import kinds

        assert kinds.primal_kind(scipy.stats.norm) == kinds.NONDIFF
        check_every_mode(lambda x: scipy.stats.norm.logpdf(x, 0.5, 2.0) * x, 0.7)
        print("ok")
    """)
    assert out.strip().endswith("ok")


def test_a_users_rule_is_not_replaced_by_a_later_load():
    out = _run("""
        import numpy as np
        import yuebing as yb
        import scipy.special
        from yuebing.rules import CoDual
        from yuebing.tangents import NoFData, NoRData

        def doubled_rule(x):
            def pullback(g):
                x.fdata += 2.0 * g
                return NoRData, NoRData

            return CoDual(scipy.special.logsumexp(x.primal), NoFData), pullback

        yb.register_rrule(scipy.special.logsumexp, doubled_rule)
        print(yb.grad(lambda x: scipy.special.logsumexp(x))(np.zeros(2)).tolist())
    """)
    assert json.loads(out) == [2.0, 2.0]


def test_deferred_modules_register_only_what_cannot_exist_before_their_trigger():
    """A deferred module may register rules only for functions and types defined under its
    trigger package (or in itself): those exist only once the trigger is imported, which is what
    loads the module. Eager modules register nothing under a trigger (a later load would
    replace their rule)."""
    problems = json.loads(_run("""
        import builtins, json, sys, types
        import yuebing
        before = set(sys.modules)
        from yuebing.rules import load_all_rules, lazy
        from yuebing.rules.core import FRULES, RRULES
        load_all_rules()
        triggers = set(lazy.DEFERRED.values())

        def under(name, package):
            return name == package or name.startswith(package + ".")

        def defined_in(target):
            # the module defining target; for a ufunc, which has no __module__, the first
            # extension module holding it in import order (the one that made it, or imported it)
            obj = target[0] if isinstance(target, tuple) else target
            name = getattr(obj, "__module__", None)
            # a C type that names no module says "builtins" (SuperLU): found by its holder below
            if isinstance(name, str) and not (name == "builtins" and getattr(builtins, obj.__name__, None) is not obj):
                return name
            holders = [m for m, module in list(sys.modules.items())
                       if not (getattr(module, "__file__", None) or ".py").endswith(".py")
                       if any(v is obj for v in vars(module).values())]
            return holders[0] if holders else "unknown"

        problems = []
        for table in (RRULES, FRULES):
            for target, origin in table.origin.items():
                where = defined_in(target)
                trigger = lazy.DEFERRED.get(origin)
                if trigger is not None:
                    if not (under(where, trigger) or (where.startswith("yuebing.") and where not in before)):
                        problems.append(f"{origin} registers {target!r}, defined in {where}, not under {trigger}")
                elif any(under(where, t) for t in triggers):
                    problems.append(f"eager {origin} registers {target!r}, defined under a trigger ({where})")
        print(json.dumps(problems))
    """))
    assert problems == []


@pytest.mark.parametrize("trigger", ["scipy.ndimage", "scipy.stats"])
def test_loading_a_packages_rules_imports_no_other_scipy_package(trigger):
    """The rules of a SciPy package load at the next derivative after the package is imported, so
    that derivative pays their import: loading them imports no SciPy package the user's own import
    did not. The ndimage rules imported scipy.signal (all of it, and with it the signal rules):
    with autograd's scipy.stats imported, the next first gradient of plain Python code took 153 ms
    (the bench's _sum_1000), 20-40 ms of it without scipy.signal. scipy.stats imports
    scipy.ndimage, so its rules are checked too."""
    new = json.loads(_run(f"""
        import json, sys
        import yuebing
        from yuebing.rules import lazy
        import {trigger}

        def packages():
            return {{".".join(m.split(".")[:2]) for m in sys.modules
                     if m.startswith("scipy.") and not m.startswith("scipy._")}}

        before = packages()
        assert lazy.load_imported()
        print(json.dumps(sorted(packages() - before)))
    """))
    assert new == []


def test_a_deferred_module_imported_directly_after_scipy_loads_its_siblings_whole():
    """``from yuebing.rules.scipy_stats import UnsupportedDistributionError`` after SciPy is imported
    (a test module, a user catching the error) imports a deferred module by a plain import: its
    siblings must not load while it is half made (they import names from it: the multivariate
    rules failed to load, and multivariate_normal.logpdf was differentiated through SciPy's code)."""
    script = (
        "import warnings; warnings.simplefilter('error', RuntimeWarning)\n"
        "import numpy as np, scipy.stats as st\n"
        "import yuebing as yb\n"
        "from yuebing.rules.scipy_stats import UnsupportedDistributionError\n"
        "from yuebing.rules import LOAD_ERRORS\n"
        "assert not LOAD_ERRORS, LOAD_ERRORS\n"
        "try:\n"
        "    yb.grad(lambda s: np.sum(st.multivariate_normal.cdf(np.ones(2), None, s)))(2.0)\n"
        "except UnsupportedDistributionError:\n"
        "    print('refused')\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "refused", out.stderr
