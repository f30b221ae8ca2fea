"""Every rule module's CASES, each through check_rule (autograd's test_systematic, Mooncake's
test_rule): one line per case in the rule file, one test here per case."""
import pytest

from yuebing.rules import rule_modules
from yuebing.testing.cases import run_case

CASES = [
    pytest.param(case, id=f"{module.__name__.removeprefix('yuebing.rules.')}:{case.name}")
    for module in rule_modules()
    for case in getattr(module, "CASES", ())
]


@pytest.mark.parametrize("case", CASES)
def test_rule(case):
    run_case(case)


def test_every_rule_module_loads():
    from yuebing.rules import LOAD_ERRORS

    assert not LOAD_ERRORS, "\n".join(f"{name}: {error!r}" for name, error in LOAD_ERRORS.items())


def test_docs_rule_table_is_current():
    from pathlib import Path

    from yuebing.rules.table import document

    path = Path(__file__).parent.parent / "docs" / "rules.md"
    assert path.read_text() == document(), "regenerate with: python -m yuebing rules > docs/rules.md"


def test_call_site_keywords_bind_to_rule_parameters():
    import builtins

    from yuebing.rules.core import CoDual, RuleArgumentError, rrule
    from yuebing.tangents import NoFData

    def call(*args, **kwargs):
        wrap = lambda v: CoDual(v, NoFData)  # noqa: E731
        return rrule(wrap(builtins.pow), *map(wrap, args), **{k: wrap(v) for k, v in kwargs.items()})[0].primal

    assert call(2.0, exp=3.0) == 8.0
    assert call(exp=3.0, base=2.0) == 8.0  # keywords in any order, a required one after another
    with pytest.raises(RuleArgumentError, match="missing argument 'base'"):
        call(exp=3.0)
    with pytest.raises(RuleArgumentError, match="multiple values for argument 'base'"):
        call(2.0, base=3.0)
    with pytest.raises(RuleArgumentError, match="keyword argument 'power'"):
        call(2.0, power=3.0)
