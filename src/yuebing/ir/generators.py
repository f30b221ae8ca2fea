"""What a lazy generator is under differentiation: ordinary Python objects, whose methods the
transforms differentiate like user code (``frontend/generators.py`` makes the state machines).

A generator function that cannot be evaluated eagerly into a list (it uses ``yield``'s value,
returns a value, yields inside a ``while`` loop, or is consumed by ``next``/``send``) is rewritten
into a function that returns a ``Generator``: its local variables are attributes of a ``Frame``,
and ``resume(sent, thrown=None)``, a nested function of the rewritten one, runs it from the
frame's ``state`` (raising ``thrown`` there first, for ``throw``/``close``) to its next ``yield``
and returns ``(True, value)``, ``(False, value)`` when it returns, or ``(None, None)`` when it
left with ``GeneratorExit`` (not raised out of ``resume``: reverse mode would drop the work of a
call that raised a ``BaseException`` that is not an ``Exception``, such as a finally block's). The
engine already differentiates attribute reads and writes (undone on the reverse pass) and calls of
Python functions, in every mode, so nothing here is new derivative machinery.

``resume`` is the protocol without exceptions (``yield from``, loops and ``drain`` call it, as
``step`` does for other callers); ``__next__``/``send``/``throw`` raise ``StopIteration`` as
Python's do, ``close`` runs the finally blocks. A ``for`` loop over
a ``Generator`` walks a ``LazySequence``: items are fetched one at a time as the loop reaches them
(``frontend/loops.py``), so ``break`` out of an endless generator works.

The rest serves rewrites of the code around a generator: ``stop_value`` reads a returned value
from the generator kept with it rather than from ``StopIteration`` (``frontend/stop_values.py``);
``managed`` makes a ``with`` header around a yield, run without derivatives when handed no floats
(``PlainManager``); ``held``, ``close_held``, ``kept_in`` and ``close_made`` close generators where
CPython drops them (``frontend/generator_closing.py``), and ``watch`` keeps those with cleanup so
that one dropped elsewhere, unclosed, is refused at the end of the pass (``unclosed``);
``assigned`` is a walrus whose variable lives on the frame.
"""
from __future__ import annotations

import linecache
import sys
import threading
from typing import Any, Callable

from .dict_views import dict_of_view, mapping_kind
from .primitives import EAGER_ITEMS_LIMIT, _holds_float_data, as_sequence, python_iterable, with_bound


class Frame:
    """A lazy generator's local variables (attributes) and where it resumes (an attribute whose
    name the rewrite chose apart from the generator's own names: ``state``, or ``state1`` when
    the generator has a variable ``state``)."""

    def __init__(self, variables: tuple = ()) -> None:
        self.__yuebing_variables__ = frozenset(variables)  # (no user variable is so named)

    def __getattr__(self, name: str) -> Any:
        """Only called for an attribute not set: a variable read before it is assigned, or after
        ``del`` (an ``except ... as e`` clause's name once it is left), as Python says it. Other
        names (``hasattr(frame, "primal")`` as the machinery asks of any object) are not there."""
        if name.startswith("__") or name not in self.__dict__.get("__yuebing_variables__", ()):
            raise AttributeError(name)
        raise UnboundLocalError(f"cannot access local variable '{name}' where it is not associated with a value")


#: the class attribute by which a loop's plain code tells a lazy generator (``frontend/loops.py``)
LAZY_MARK = "__yuebing_lazy_generator__"
#: the class attribute of iterators stepped by ``advance()`` (``step_iterator``, ``next``)
STEPS_BY_ADVANCE = "__yuebing_steps_by_advance__"


class Generator:
    """A generator object under differentiation: ``resume`` runs its body to the next yield."""

    __yuebing_lazy_generator__ = True

    def __init__(self, resume: Callable, name: str, where: str = "", frame: Frame | None = None,
                 state: str = "") -> None:
        self.resume = resume  # a finished generator's returns (False, None), or raises what is thrown in
        self.frame = frame  # and the name of its attribute that says where it resumes (0: not started);
        self.state = state  # the other attributes are the generator's variables, a user's `state` too
        self.name = name
        self.where = where  # the generator function's file and line, for errors
        self.stopped = None  # the StopIteration it raised on returning, and the value it returned:
        self.returned = None  # read with its derivative by ``stop_value``

    def __iter__(self) -> Generator:
        return self

    def step(self, sent: Any, thrown: Any = None) -> tuple:
        """``(True, value)`` for the next value yielded, ``(False, value)`` once it returned,
        ``(None, None)`` when it left with ``GeneratorExit``; ``thrown``: an exception raised
        where it is suspended (``throw``). (Generated code calls ``resume`` itself: one call
        less per item under differentiation.)"""
        return self.resume(sent, thrown)

    def __next__(self) -> Any:
        more, value = self.resume(None, None)
        if more:
            return value
        self._ended(more, value)

    def send(self, sent: Any) -> Any:
        if sent is not None and self.frame is not None and getattr(self.frame, self.state) == 0:
            raise TypeError("can't send non-None value to a just-started generator")
        more, value = self.resume(sent, None)
        if more:
            return value
        self._ended(more, value)

    def throw(self, error: Any, instance: Any = None, traceback: Any = None) -> Any:
        """Raise ``error`` (an exception or its class) where the generator is suspended: its
        ``except``/``finally`` blocks run; the next value it yields is returned. (``instance``:
        the older ``throw(type, value, traceback)`` form, which contextlib uses before 3.12.)"""
        if instance is not None:
            error = instance if isinstance(instance, BaseException) else error(instance)
        more, value = self.resume(None, error)
        if more:
            return value
        self._ended(more, value)

    def _ended(self, more: Any, value: Any) -> None:
        """Raise what leaving a generator raises: ``GeneratorExit`` (``more`` None) or
        ``StopIteration``, kept with the value returned (``stop_value`` reads it from here)."""
        if more is None:
            raise GeneratorExit
        error = StopIteration() if value is None else StopIteration(value)
        self.stopped = error
        self.returned = value
        raise error

    def close(self) -> None:
        """Raise ``GeneratorExit`` where the generator is suspended, as Python's ``close`` does
        (its ``finally`` blocks and ``with`` exits run; nothing for a finished one)."""
        try:
            more, value = self.resume(None, GeneratorExit)  # (the class: raising makes the exception)
        except (GeneratorExit, StopIteration):
            return None
        if more:
            raise RuntimeError("generator ignored GeneratorExit")
        return None


def next_closed(generator: Any, *default: Any) -> Any:
    """``next(g(...))`` of a generator with cleanup that nothing keeps: CPython drops it at
    once, closing it (its finally blocks run); so does this."""
    try:
        value = next(generator, *default)
    finally:
        generator.close()
    return value


def stop_value(stop: BaseException, *generators: Any) -> Any:
    """``stop.value`` in an ``except`` clause whose ``try`` calls ``next``/``send``/``throw`` on
    ``generators`` (``frontend/stop_values.py`` rewrites the read): the value returned by the one
    that raised ``stop``, read from it with its derivative (an exception carries none); any other
    exception's ``value`` as it is (a float there is refused by the attribute rule)."""
    for generator in generators:
        if type(generator) is Generator and generator.stopped is stop:
            return generator.returned
    return stop.value


def kept_in(made: list, generator: Any) -> Any:
    """A generator made in a comprehension nested in another, kept to be closed when the
    statement is done (``frontend/generator_closing.py``)."""
    made.append(generator)
    return generator


def close_made(made: list) -> None:
    for generator in made:
        if type(generator) is Generator:
            generator.close()


def held(owned: dict, name: str, value: Any) -> Any:
    """``name = value`` (``value`` None: ``del name``) where ``name`` holds a generator with
    cleanup, or a list or tuple of them, that it never lets escape: what it held before is
    dropped, so closed, as CPython's reference counting closes it
    (``frontend/generator_closing.py``)."""
    previous = owned.pop(name, None)
    if type(value) in (Generator, list, tuple):
        owned[name] = value
    if previous is not None and previous is not value:
        _dropped(previous)
    return value


def close_held(owned: dict, names: tuple) -> None:
    """The function ends: the generators its ``names`` still hold are dropped with its frame,
    in the order of ``names`` (the order CPython clears the frame's locals)."""
    for name in names:
        if name in owned:
            _dropped(owned.pop(name))


def _dropped(value: Any) -> None:
    """Close a generator dropped, or those of a list or tuple dropped: from the last item to the
    first, the order in which CPython's list and tuple release their items."""
    if type(value) is Generator:
        value.close()
        return
    for k in range(len(value) - 1, -1, -1):
        if type(value[k]) is Generator:
            value[k].close()


#: per thread, the generators with cleanup made in the open top-level pass (``watch``)
_WATCHED = threading.local()


def watch(generator: Generator, cleanups: dict) -> None:
    """A generator made whose ``close`` runs code when it is suspended at the states
    ``cleanups`` (the yields inside ``try``/``with``, to their lines): kept, with them, for the
    check at the end of the pass (``unclosed``). Runs without derivatives (a record only)."""
    passes = getattr(_WATCHED, "passes", None)
    if passes:
        passes[-1].append((generator, cleanups))


class UnclosedGeneratorError(TypeError):
    """A lazy generator left suspended inside ``try``/``with``, never closed (``unclosed``):
    its cleanup would have run where CPython freed it, which yuebing cannot see."""

    def __init__(self, generator: Generator, line: int) -> None:
        filename = generator.where.split('"')[1] if generator.where.count('"') >= 2 else "<unknown>"
        code = linecache.getline(filename, line).strip()
        super().__init__(
            f"yuebing cannot differentiate the generator {generator.name}() dropped while suspended at a yield inside "
            "a try/finally or with block, and not closed (it was stored in a container or an attribute, passed to "
            "or returned from a function, or made by a call other than of a generator function's name, such as "
            "a method's): CPython runs its finally blocks and with exits when it frees the generator, which "
            "yuebing cannot see, so what they compute would have no derivative.\n"
            f'  File "{filename}", line {line}, in {generator.name}\n    {code}\n'
            "What to do: call the generator's close() where it is no longer needed (it.close(); in a finally: "
            "block if the code between may raise).")
        self.filename, self.lineno = filename, line


def start_watching() -> None:
    """At the start of a top-level pass (``rules/outside_state.enter``; a nested pass watches
    its own generators)."""
    passes = getattr(_WATCHED, "passes", None)
    if passes is None:
        passes = _WATCHED.passes = []
    passes.append([sys.exc_info()[1]])  # (the exception being handled around the pass, if any)


def unclosed() -> list:
    """At the end of the pass's forward part: the generators made in it that are suspended
    where closing them runs code and were never closed, as ``(generator, yield's line)``.
    CPython would have closed each when it was dropped; yuebing keeps them all alive, so it
    cannot tell when that was (``rules/outside_state.leave`` refuses them)."""
    passes = getattr(_WATCHED, "passes", None)
    watched = passes.pop() if passes else [None]
    if len(watched) == 1 or sys.exc_info()[1] is not watched[0]:
        return []  # nothing watched, or the pass is left by an exception: that one is reported
    found = []
    for generator, cleanups in watched[1:]:
        line = cleanups.get(getattr(generator.frame, generator.state))
        if line is not None:
            found.append((generator, line))
    return found


def assigned(frame: Frame, name: str, value: Any) -> Any:
    """``(name := value)`` in a lazy generator, whose variable ``name`` lives on its frame."""
    setattr(frame, name, value)
    return value


def delegate(iterable: Any) -> Generator:
    """What ``yield from iterable`` (and a ``for`` loop inside a lazy generator) steps through:
    a ``Generator`` itself, an iterator one ``step_iterator`` at a time (so it is advanced no
    further than the items taken), any other iterable by index over its sequence (a list is
    followed live, as Python's list iterator does)."""
    if type(iterable) is Generator:
        return iterable
    if python_iterable(iterable):  # iter(x), a lazy map or zip, a user class's: stepped as it goes
        iterator = type(iterable).__iter__(iterable)
        if type(iterator) is Generator:
            return iterator
        return Generator(_stepped(SequenceIterator(iterator) if type(iterator) is list else iterator), "iter")
    return Generator(_over(as_sequence(iterable)), "iter")


def _stepped(iterator: Any) -> Callable:
    def resume(sent: Any, thrown: Any = None) -> tuple:
        if thrown is not None:
            raise thrown
        return step_iterator(iterator)

    return resume


def _over(items: Any) -> Callable:
    frame = Frame()
    frame.index = 0

    def resume(sent: Any, thrown: Any = None) -> tuple:
        if thrown is not None:
            raise thrown
        if frame.index < len(items):
            frame.index += 1
            return True, items[frame.index - 1]
        return False, None

    return resume


def managed(target: str, make: Any, /, *args: Any, **kwargs: Any) -> Any:
    """A ``with`` header around a yield, ``make(*args, **kwargs)`` (``make`` None: the manager is
    ``args[0]``), ``target`` its ``as`` target's text. When nothing it is handed holds float data
    the manager is made, entered and exited without derivatives, as ``with`` headers elsewhere are
    (``frontend/with_statements.py``): a ``PlainManager`` (``np.errstate``, locks, a
    ``contextlib.contextmanager`` handed a name). Otherwise it is differentiated like the
    generator: a class's ``__enter__``/``__exit__``, or contextlib's, stepping the decorated
    generator function, which is then a state machine too (``frontend/generators.py``)."""
    if runs_plainly(make, args, kwargs):
        return made_plainly(target, make, args, kwargs)
    return args[0] if make is None else make(*args, **kwargs)


def runs_plainly(make: Any, args: tuple, kwargs: dict) -> bool:
    """Whether a ``with`` header's manager may run without derivatives (declared so in
    ``rules/zero_derivative.py``): nothing handed to it holds float data."""
    handed = [*args, *kwargs.values(), getattr(make, "__self__", None)]
    return not any(_holds_float_data(v, 0, objects=True) for v in handed)


def made_plainly(target: str, make: Any, args: tuple, kwargs: dict) -> PlainManager:
    """The manager made without derivatives (declared so in ``rules/zero_derivative.py``)."""
    return PlainManager(args[0] if make is None else make(*args, **kwargs), target)


class PlainManager:
    """A ``with`` statement's manager around a yield that runs without derivatives (its methods
    are declared non-differentiable): entered and exited as written; a value holding float data
    bound by ``as`` is refused (``with_bound``), as in any ``with`` statement."""

    __slots__ = ("manager", "exit", "target")

    def __init__(self, manager: Any, target: str) -> None:
        self.manager, self.target = manager, target
        self.exit = type(manager).__exit__  # looked up before entering, as the with statement does

    def __enter__(self) -> Any:
        return with_bound(type(self.manager).__enter__(self.manager), self.target)

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> Any:
        return self.exit(self.manager, kind, error, traceback)


class SequenceIterator:
    """``iter(x)`` of a list, tuple, string, array, range, dict or set under differentiation: a
    position in ``x`` (a list's own object, so items appended meanwhile are reached, as by a
    ``list_iterator``; a snapshot of a set, ``RuntimeError`` once the set changed size), advanced by everything that iterates it: a ``for``
    loop, ``next`` in its body, ``zip(it, it)``. A dict or a dict view is walked as CPython's dict
    iterators walk it: over the keys it had, each value read from the dict when its item is taken
    (a value written meanwhile is the one seen), ``RuntimeError`` once the dict changed size.
    Its methods are differentiated as Python code; ``advance`` steps without raising ``StopIteration``."""

    __yuebing_lazy_generator__ = True
    __yuebing_steps_by_advance__ = True  # (step_iterator calls advance, as for ir/lazy_iterators.py's)

    def __init__(self, iterable: Any) -> None:
        self.kind = mapping_kind(iterable)
        if self.kind is not None:
            self.mapping = dict_of_view(iterable)  # (with its derivatives: its values are read from it)
            self.items = list(self.mapping)  # the keys
            self.size = len(self.items)
        else:
            sequence = isinstance(iterable, (list, tuple, str, range)) or type(iterable).__name__ == "ndarray"
            self.items = iterable if sequence else list(iterable)
        self.watched = iterable if isinstance(iterable, set) else None  # (a set: its size is checked)
        if self.watched is not None:
            self.size = len(self.items)
        self.position = 0

    def __iter__(self) -> SequenceIterator:
        return self

    def advance(self) -> tuple:
        """``(True, item)``, or ``(False, None)`` at the end (which stays the end)."""
        if self.kind is not None and self.position <= len(self.items):
            self._check_size()  # (CPython checks before it looks for the end)
        elif self.watched is not None and self.position <= len(self.items):
            self._check_set_size()
        if self.position < len(self.items):
            item = self.items[self.position] if self.kind is None else self._entry(self.items[self.position])
            self.position += 1
            return True, item
        self.position = len(self.items) + 1  # exhausted: a list_iterator sees no later append
        return False, None

    def _check_size(self) -> None:
        if len(self.mapping) != self.size:
            self.size = -1  # as CPython's: every later step raises too
            raise RuntimeError("dictionary changed size during iteration")

    def _check_set_size(self) -> None:
        if len(self.watched) != self.size:
            self.size = -1  # as CPython's: every later step raises too
            raise RuntimeError("Set changed size during iteration")

    def _entry(self, key: Any) -> Any:
        """The key, value or ``(key, value)`` the dict holds now for ``key``."""
        if key not in self.mapping:  # (deleted and another added: CPython's walk would differ)
            raise RuntimeError("dictionary keys changed during iteration")
        if self.kind == "keys":
            return key
        if self.kind == "values":
            return self.mapping[key]
        return key, self.mapping[key]

    def left(self) -> int:
        """How many items are not taken yet."""
        return max(len(self.items) - self.position, 0)

    def take(self, n: int) -> Any:
        """The next ``n`` items (there are that many left), taken at once: the sequence itself
        when that is all of it, else a slice of it."""
        start = self.position
        if self.kind is not None:
            return self._take_from_mapping(n)
        if self.watched is not None and n:
            self._check_set_size()
        self.position += n
        if start == 0 and n == len(self.items):
            return self.items
        return self.items[start:start + n]

    def _take_from_mapping(self, n: int) -> list:
        """The next ``n`` entries of the dict as it is now: read by one rule call (``list`` of the
        view) while its keys are those it had, else one at a time."""
        if n == 0:  # (an exhausted iterator checks nothing)
            return []
        self._check_size()
        if list(self.mapping) != self.items:
            return [self.advance()[1] for _ in range(n)]
        start = self.position
        self.position += n
        if self.kind == "keys":
            return self.items[start:start + n]
        current = list(self.mapping.values()) if self.kind == "values" else list(self.mapping.items())
        return current[start:start + n]

    def rest(self) -> list:
        """The items not taken yet (the iterator is then exhausted)."""
        if self.kind is not None:
            items = self.take(self.left())
            self.advance()  # the end (whose step checks the size too, as CPython's last)
            return items
        if self.watched is not None and self.position <= len(self.items):
            self._check_set_size()
        items = list(self.items[self.position:]) if self.position < len(self.items) else []
        self.position = len(self.items) + 1
        return items

    def __next__(self) -> Any:
        more, item = self.advance()
        if more:
            return item
        raise StopIteration


def reversed_mapping(view: Any) -> SequenceIterator:
    """``reversed(d)``, ``reversed(d.values())``, ``reversed(d.items())``: CPython's reversed dict
    iterators walk the keys the dict had, last first, each value read when its item is taken, and
    raise once the dict changed size (as ``SequenceIterator`` walks them forwards)."""
    iterator = SequenceIterator(view)
    iterator.items = iterator.items[::-1]
    return iterator


class LazySequence:
    """What a ``for`` loop walks over an iterator (a ``Generator``, a ``SequenceIterator``, what a
    user class's ``__iter__`` returns): the items fetched so far, one more fetched (``fetch``) each
    time the loop's index reaches the end, so the iterator runs no further than the loop (an
    endless one can be left with ``break``), and whatever else advances it (``next`` in the body,
    a second loop) takes the items the loop did not."""

    def __init__(self, iterable: Any) -> None:
        if type(iterable) is not Generator and not getattr(type(iterable), STEPS_BY_ADVANCE, False):
            iterable = type(iterable).__iter__(iterable)  # a user class's: asked once, as Python asks
            if type(iterable) is list:
                iterable = SequenceIterator(iterable)
        self.generator = iterable
        self.items = []

    def fetch(self, k: int) -> None:
        if k == len(self.items):
            more, value = step_iterator(self.generator)
            if more:
                self.items.append(value)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, k: int) -> Any:
        return self.items[k]


def step_iterator(iterator: Any) -> tuple:
    """``(True, item)`` from one step of ``iterator`` (a ``Generator``, a ``SequenceIterator``, a
    lazy ``map``/``zip``/... of ``ir/lazy_iterators.py`` or a user iterator's ``__next__``),
    ``(False, None)`` once it is exhausted."""
    if type(iterator) is Generator:
        return iterator.resume(None, None)
    if type(iterator) is SequenceIterator or getattr(type(iterator), STEPS_BY_ADVANCE, False):
        return iterator.advance()
    try:
        return True, type(iterator).__next__(iterator)
    except StopIteration:
        return False, None


def fetch_items(k: int, *sequences: Any) -> None:
    """Before a loop's test: make item ``k`` of each lazy sequence available, if there is one
    (for ``zip``, the next ones only while the earlier ones have theirs, as ``zip`` stops)."""
    for seq in sequences:
        if type(seq) is LazySequence:
            seq.fetch(k)
            if k >= len(seq.items):
                return


def drain(generator: Generator) -> list:
    """Every item of ``generator`` (``list(g)``, ``sum(g)``, a loop over it in ``iterate_to_list``),
    stopped with an error past ``EAGER_ITEMS_LIMIT`` items rather than run forever."""
    items = []
    while True:
        more, value = generator.resume(None, None)
        if not more:
            return items
        items.append(value)
        if len(items) > EAGER_ITEMS_LIMIT:
            raise RuntimeError(endless(generator))


def is_lazy(x: Any) -> bool:
    """Whether a loop over ``x`` fetches its items one at a time (``frontend/loops.py``)."""
    return type(x) is Generator


def endless(generator: Generator) -> str:
    return (f"yuebing stopped the generator {generator.name}() after {EAGER_ITEMS_LIMIT} items: it was "
            f"consumed whole (list(), sum(), unpacking, ...) and did not end.\n{generator.where}"
            "What to do: take only the items you need, with next() or a for loop with break.")
