"""The derived-rule corpus: every function through check_rule in reverse mode."""
import pytest

from yuebing.testing import check_rule

from .corpus import data, language, objects, programs
from .corpus import extra_data, extra_language, extra_objects, extra_programs

ENTRIES = [pytest.param(fn, args, options, id=f"{module.__name__.rsplit('.', 1)[-1]}:{fn.__name__}")
           for module in (language, data, objects, programs, extra_language, extra_data, extra_objects, extra_programs) for fn, args, options in module.CORPUS]


@pytest.mark.parametrize("fn, args, options", ENTRIES)
def test_reverse(fn, args, options):
    check_rule(fn, *args, mode=("rev",), **options)
