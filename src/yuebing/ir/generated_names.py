"""The names generated programs bind themselves, which the normal form's temporaries must not take.

The normal form (frontend/normalise.py) names its temporaries ``_<hint><n>``: they always end
in a digit, and a hint may be a user's variable name (a comprehension's ``g`` becomes ``_g7``,
its ``_`` becomes ``_v1``). The generators (transform/) write code into the same function and
namespace, so a name of theirs that also ends in a digit could be one of those temporaries:
a lambda the normal form named ``_f64`` made the float blocks' ``np.float64`` a local (fuzzer
seeds 1007 and 50606), and a comprehension over ``_`` names its variable ``_v1``, which the
reverse templates pop operands into.

Two rules keep the two sets apart:

- the generators' own fresh names and constants skip every name of the function they
  transform (``transform/generated_text.ConstantNames``);
- the fixed names and name patterns below, which generated code writes without asking,
  are never given to a temporary. A test (tests/test_generated_names.py) checks that every
  quoted name in ``transform/`` ending in a digit is covered here.
"""
from __future__ import annotations

import re

#: namespace entries of the generated programs whose names end in a digit
RESERVED_NAMES = frozenset({
    "_f64", "_F64",  # np.float64, called by the float blocks (templates, dual blocks)
    "_rrule2",  # second order's rule call (second_order.py)
    "_over0",  # the strong-zero templates' operand (templates.py)
    "_FASTI0", "_FASTI1", "_FASTI01", "_FASTM0", "_FASTM1",  # the templates' fast-path flags
})

#: names generated code builds by formatting: a template's popped operands ``_v0``, ``_v1``
#: (templates.py), an array block's quotient ``_q_<target>`` (array_blocks.py), the plain
#: forward programs' names with a per-depth prefix ``_n<depth>_`` and their runtime's ``_pf_``
#: (plain_forward.py), the direct calls' tables (direct_calls.py)
RESERVED_PATTERN = re.compile(r"_(v\d+|q_\w+|n\d+_\w*|pf_\w*|DNAMES\d+|RULES\d+|DCODE\d+|DDEF\d+|FAST\w*)")


def reserved(name: str) -> bool:
    """Whether generated code may bind ``name`` on its own (a temporary must not take it; the
    plain ``_t<n>`` never is)."""
    return name in RESERVED_NAMES or RESERVED_PATTERN.fullmatch(name) is not None
