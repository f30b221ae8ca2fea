"""Every rule module's CASES, each through check_rule (autograd's test_systematic, Mooncake's
test_rule): one line per case in the rule file, one test here per case."""
import pytest

from yuebing.rules import rule_modules

CASES = [
    pytest.param(case, id=f"{module.__name__.rsplit('.', 1)[-1]}:{case.name}")
    for module in rule_modules()
    for case in getattr(module, "CASES", ())
]


@pytest.mark.parametrize("case", CASES)
def test_rule(case):
    case.run()


def test_every_rule_module_loads():
    from yuebing.rules import LOAD_ERRORS

    assert not LOAD_ERRORS, "\n".join(f"{name}: {error!r}" for name, error in LOAD_ERRORS.items())


def test_docs_rule_table_is_current():
    from pathlib import Path

    from yuebing.rules.table import rule_table

    path = Path(__file__).parent.parent / "docs" / "rules.md"
    assert path.read_text() == rule_table(), "regenerate with: python -m yuebing.rules.table > docs/rules.md"
