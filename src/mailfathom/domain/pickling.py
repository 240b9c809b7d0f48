"""Cheaper pickling for frozen, slotted dataclasses that cross process boundaries in bulk.

For a frozen dataclass with slots, the standard library pickles through generated
`__getstate__`/`__setstate__` methods that call `dataclasses.fields()` on every object and set
each field in a Python loop. A normalized message is several such objects, and thousands of them
travel from the preparation workers to the synchronizing process per minute. Reducing each to
its class and the tuple of its field values lets pickle rebuild it with one constructor call:
at 3,000 generated messages, loading took 27 µs per message instead of 49, and dumping 42
instead of 52.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def pickled_by_fields(cls: type[T]) -> type[T]:
    """Class decorator, applied above `@dataclass(frozen=True, slots=True)`: the class pickles
    as a call of itself with its fields in declaration order."""
    names: tuple[str, ...] = tuple(getattr(cls, "__slots__", ()))
    declared = dataclasses.fields(cls)  # type: ignore[arg-type]
    positional = tuple(f.name for f in declared if f.init and not f.kw_only)
    if len(names) < 2 or positional != names:
        raise TypeError(
            f"{cls.__name__} needs two or more slotted fields, each a positional argument"
        )
    values: Callable[[Any], tuple[Any, ...]] = operator.attrgetter(*names)

    def __reduce__(self: Any) -> tuple[type[Any], tuple[Any, ...]]:
        return (type(self), values(self))

    cls.__reduce__ = __reduce__  # type: ignore[method-assign]
    return cls
