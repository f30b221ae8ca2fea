"""``match`` statements with star and ``**rest`` patterns (``frontend/match_statements.py``):
the rewritten if/elif chains behave as CPython's match (which subjects count as sequences and
mappings, what star and rest bind), and are differentiated in every mode."""
import array
import re
import collections
import types
from collections.abc import Mapping, Sequence

import numpy as np
import pytest

import yuebing as yb

from .all_modes import check_all_modes
from .syntax_rewriting import rewritten


def describe(subject):
    match subject:
        case []:
            return "empty"
        case [a]:
            return ("one", a)
        case [a, *rest, b] if len(rest) > 2:
            return ("long", a, rest, b)
        case [a, *_, 0]:
            return ("ends in 0", a)
        case [*rest, b]:
            return ("star first", rest, b)
        case {"k": v, **rest}:
            return ("k", v, rest)
        case {**rest}:
            return ("mapping", rest)
        case _:
            return "other"


class Triple(Sequence):
    def __len__(self):
        return 3

    def __getitem__(self, i):
        if not -3 <= i < 3:
            raise IndexError(i)
        return [10, 20, 30][i]


class Constants(Mapping):
    def __init__(self, **entries):
        self.entries = entries

    def __getitem__(self, key):
        return self.entries[key]

    def __iter__(self):
        return iter(self.entries)

    def __len__(self):
        return len(self.entries)


SUBJECTS = [
    [], [1], (1, 2), [1, 2, 3], [5, 0], (1, 2, 3, 4, 5), range(4), range(0), collections.deque([1, 2, 0]),
    array.array("d", [1.0, 2.0]), memoryview(b"ab"), Triple(),
    "ab", b"ab", bytearray(b"ab"), np.array([1.0, 2.0]), np.float64(1.0), 3, None,
    {"k": 1, "a": 2, "b": 3}, {"a": 2}, {}, collections.OrderedDict(k=0, z=1),
    collections.defaultdict(int, a=1), types.MappingProxyType({"k": 5}), Constants(k=1, j=2),
]


@pytest.mark.parametrize("subject", SUBJECTS, ids=[f"{type(s).__name__}{i}" for i, s in enumerate(SUBJECTS)])
def test_rewritten_match_binds_what_python_binds(subject):
    expected = describe(subject)
    got = rewritten(describe)(subject)
    assert got == expected and type(got) is type(expected)
    if isinstance(expected, tuple):  # star binds a list, **rest a dict, whatever the subject's type
        assert [type(part) for part in got] == [type(part) for part in expected]


def test_star_and_rest_are_new_objects():
    items, mapping = [1.0, 2.0, 3.0], {"k": 1.0, "j": 2.0}
    _, _, rest, _ = rewritten(describe)(items + [4.0, 5.0])
    rest.append(9.0)
    _, _, others = rewritten(describe)(mapping)
    others["z"] = 0.0
    assert items == [1.0, 2.0, 3.0] and mapping == {"k": 1.0, "j": 2.0}


def star_middle(x):
    match [x, 2.0 * x, x * x, 3.0]:
        case [first, *middle, last]:
            return first * sum(middle) * last + len(middle)
    return 0.0


def star_wildcard_and_tuple(x):
    match (x, np.sin(x), 3.0):
        case (a, *_):
            total = a * a
    match [x, x * x]:
        case [*init, b]:
            total += b * init[0]
    return total


def array_is_not_a_sequence(x):
    match np.array([x, x]):
        case [a, b]:
            return a * b  # not taken: CPython's match does not treat arrays as sequences
        case _:
            return np.cos(x)


def mapping_rest(x):
    d = {"a": x, "b": x * x, "c": 2.0 * x}
    match d:
        case {"a": a, **rest}:
            return a * rest["b"] + rest["c"] * len(rest)
    return 0.0


def range_and_nested(x):
    total = 0.0
    match range(3):
        case [0, *others]:
            total += x * len(others)
    match {"p": [x, x * x, x ** 3], "q": 1}:
        case {"p": [head, *tail], **more}:
            total += head * sum(tail) + len(more)
    return total


@pytest.mark.parametrize("f", [star_middle, star_wildcard_and_tuple, array_is_not_a_sequence, mapping_rest,
                               range_and_nested])
def test_match_star_and_rest_in_every_mode(f):
    assert rewritten(f)(0.7) == f(0.7)
    check_all_modes(f, 0.7)


def test_match_inside_a_nested_function_is_rewritten_when_called():
    def outer(x):
        def pick(values):
            match values:
                case [a, *rest]:
                    return a * sum(rest)
            return 0.0

        return pick([x, x * x, 3.0])

    check_all_modes(outer, 0.7)


def _random_pattern(rng, names, depth=0):
    """Source of a random pattern; the capture names it binds are added to ``names``."""
    kind = rng.integers(8 if depth < 2 else 3)
    if kind == 0:
        name = f"n{len(names)}"
        names.append(name)
        return name
    if kind == 1:
        return "_"
    if kind == 2:
        return str(int(rng.integers(3)))
    if kind == 3:  # a sequence, with a star or not
        parts = [_random_pattern(rng, names, depth + 1) for _ in range(int(rng.integers(0, 3)))]
        if rng.random() < 0.6:
            star = "*_"
            if rng.random() < 0.7:
                star = f"*s{len(names)}"
                names.append(star[1:])
            parts.insert(int(rng.integers(len(parts) + 1)), star)
        opening, closing = ("[", "]") if rng.random() < 0.5 else ("(", ",)" if len(parts) == 1 else ")")
        return opening + ", ".join(parts) + closing
    if kind == 4:  # a mapping, with **rest or not
        keys = sorted({str(k) for k in rng.integers(3, size=int(rng.integers(0, 3)))})
        parts = [f"{k}: {_random_pattern(rng, names, depth + 1)}" for k in keys]
        if rng.random() < 0.5:
            parts.append(f"**r{len(names)}")
            names.append(parts[-1][2:])
        return "{" + ", ".join(parts) + "}"
    if kind == 5:
        inner = _random_pattern(rng, names, depth + 1)
        names.append(f"a{len(names)}")
        return f"({inner} as {names[-1]})"
    if kind == 6:  # a class pattern: positional (by __match_args__, or the subject itself) and keyword
        cls = ["Point", "int", "float", "str"][int(rng.integers(4))]
        positional = [_random_pattern(rng, names, depth + 1) for _ in range(int(rng.integers(0, 3 if cls == "Point" else 2)))]
        keywords = [f"{a}={_random_pattern(rng, names, depth + 1)}" for a in ("x", "z") if cls == "Point" and rng.random() < 0.3]
        return f"{cls}({', '.join(positional + keywords)})"
    bound = []  # an or-pattern: alternatives must bind the same names
    inner = _random_pattern(rng, bound, depth + 1)
    names += bound
    return f"{inner} | {inner}" if bound else f"{inner} | []"


def _random_subject(rng, depth=0):
    kind = rng.integers(6 if depth < 2 else 2)
    if kind == 0:
        return int(rng.integers(3))
    if kind == 1:
        return float(rng.integers(3)) + 0.5
    if kind == 2:
        return [_random_subject(rng, depth + 1) for _ in range(int(rng.integers(0, 4)))]
    if kind == 3:
        return tuple(_random_subject(rng, depth + 1) for _ in range(int(rng.integers(0, 4))))
    if kind == 4:
        return {int(k): _random_subject(rng, depth + 1) for k in rng.integers(3, size=int(rng.integers(0, 4)))}
    if kind == 5 and rng.random() < 0.5:
        return Point(_random_subject(rng, depth + 1), _random_subject(rng, depth + 1))
    return [range(int(rng.integers(4))), "ab", np.array([1.0, 2.0])][int(rng.integers(3))]


def _random_match(rng, k):
    lines = [f"def m{k}(subject):", "    match subject:"]
    for case in range(int(rng.integers(1, 4))):
        names = []
        pattern = _random_pattern(rng, names)
        lines += [f"        case {pattern}:", f"            return ({case}, {', '.join(names + [''])})"]
    lines += ["    return None"]
    return "\n".join(lines) + "\n"


def _result(fn, subject):
    try:
        return "returned", repr(fn(subject))
    except (ValueError, TypeError) as error:  # (an array compared with a literal, too many
        return "raised", str(error)  # positional sub-patterns: CPython raises too)


def test_random_match_statements_behave_as_python(tmp_path, monkeypatch):
    """Random patterns (captures, stars, **rest, or, as) against random subjects: the rewrite
    binds and chooses as CPython does."""
    rng = np.random.default_rng(2013)
    sources = []
    for k in range(80):
        text = _random_match(rng, k)
        try:
            compile(text, "<pattern>", "exec")
        except SyntaxError:  # (a name bound twice, an or-pattern binding names unequally)
            text = f"def m{k}(subject):\n    return None\n"
        sources.append(text)
    (tmp_path / "random_matches.py").write_text("from tests.test_match_patterns import Point\n\n" + "\n\n".join(sources))
    monkeypatch.syspath_prepend(str(tmp_path))
    import random_matches as module

    checked = 0
    for k, text in enumerate(sources):
        fn = getattr(module, f"m{k}")
        if "match" not in text:
            continue
        again = rewritten(fn)
        for _ in range(10):
            subject = _random_subject(rng)
            expected = _result(fn, subject)
            assert _result(again, subject) == expected, (text, subject)
            checked += expected[1] != "None"
    assert checked > 100  # patterns that matched something, not only misses


class Point:
    __match_args__ = ("x", "y")

    def __init__(self, x, y):
        self.x, self.y = x, y


class Bare:
    pass


def classify(subject):
    match subject:
        case bool(b):
            return ("bool", b)
        case int(i) | float(i):
            return ("number", i)
        case str() if len(subject) > 3:
            return ("long string",)
        case Point(0, y=y):
            return ("on the y axis", y)
        case Point(x, z=z):
            return ("has z", x, z)  # only when the attribute exists (else the match fails)
        case Point(x, y):
            return ("point", x, y)
        case Bare(missing=m):
            return ("bare", m)
        case _:
            return "other"


def too_many_positional(subject):
    match subject:
        case Point(a, b, c):
            return a
    return None


def builtin_with_two(subject):
    match subject:
        case int(a, b):
            return a
    return None


def _with_z():
    p = Point(1, 2)
    p.z = 3
    return p


@pytest.mark.parametrize("subject", [True, 3, 2.5, "ab", "abcd", Point(0, 4), Point(1, 2), _with_z(), Bare(), None],
                         ids=lambda s: type(s).__name__)
def test_class_patterns_bind_what_python_binds(subject):
    assert rewritten(classify)(subject) == classify(subject)


@pytest.mark.parametrize("fn, subject", [(too_many_positional, Point(1, 2)), (builtin_with_two, 3)])
def test_class_patterns_raise_what_python_raises(fn, subject):
    with pytest.raises(TypeError) as expected:
        fn(subject)
    with pytest.raises(TypeError, match=re.escape(str(expected.value))):
        rewritten(fn)(subject)


def class_patterns(x):
    total = 0.0
    match x:
        case float(v):
            total += v * v
    match Point(x, np.sin(x)):
        case Point(a, z=c):
            total += c  # not taken: no attribute z
        case Point(a, y=b):
            total += a * b
    return total


def test_class_patterns_in_every_mode():
    check_all_modes(class_patterns, 0.7)
