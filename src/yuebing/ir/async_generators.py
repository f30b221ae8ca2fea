"""What an async generator is under differentiation: a lazy generator (``ir/generators.py``) that
yields two kinds of things, and the object that tells them apart.

``frontend/async_functions.py`` rewrites an async generator's ``yield v`` into
``yield AsyncYield(v)`` and its ``await x`` into ``yield from await_target(x)``, whose yields are
requests for the event loop (``event_loop.py``). ``AsyncGenerator`` wraps the resumable body:
``asend(v)`` (and ``__anext__``, ``athrow``, ``aclose``) gives an awaitable that resumes the body,
passes the loop's requests up to the task awaiting it, and finishes with the next value yielded,
or raises ``StopAsyncIteration`` when the body returns, as CPython's async generators do.
"""
from __future__ import annotations

from typing import Any

from .generators import Frame, Generator


class AsyncYield:
    """A value an async generator yields to its consumer (not a request for the event loop)."""

    def __init__(self, value: Any) -> None:
        self.value = value


class AsyncGenerator:
    """An async generator object: ``async for`` calls ``__anext__``; ``asend`` sends a value."""

    def __init__(self, body: Generator) -> None:
        self.body = body

    def __aiter__(self) -> AsyncGenerator:
        return self

    def __anext__(self) -> Generator:
        return _resumed(self.body, None, None)

    def asend(self, value: Any) -> Generator:
        return _resumed(self.body, value, None)

    def athrow(self, error: Any) -> Generator:
        return _resumed(self.body, None, error)

    def aclose(self) -> Generator:
        return _closed(self.body)


def _resumed(body: Generator, sent: Any, thrown: Any) -> Generator:
    """The awaitable of ``asend(sent)`` (``athrow(thrown)``): the body's next value."""
    frame = Frame()
    frame.first = True

    def resume(passed: Any, passed_error: Any = None) -> tuple:
        if frame.first:  # the first step takes what asend/athrow were given; later ones what the loop sends
            frame.first = False
            passed, passed_error = sent, thrown
        more, value = body.resume(passed, passed_error)
        if more is None:
            raise RuntimeError("async generator ignored GeneratorExit")
        if not more:
            raise StopAsyncIteration
        if type(value) is AsyncYield:
            return False, value.value
        return True, value

    return Generator(resume, "asend")


def _closed(body: Generator) -> Generator:
    """The awaitable of ``aclose()``: ``GeneratorExit`` raised where the body is suspended."""
    frame = Frame()
    frame.first = True

    def resume(passed: Any, passed_error: Any = None) -> tuple:
        if frame.first:
            frame.first = False
            passed, passed_error = None, GeneratorExit
        try:
            more, value = body.resume(passed, passed_error)
        except GeneratorExit:  # (a body that had finished)
            return False, None
        if not more:
            return False, None
        if type(value) is AsyncYield:
            raise RuntimeError("async generator ignored GeneratorExit")
        return True, value

    return Generator(resume, "aclose")
