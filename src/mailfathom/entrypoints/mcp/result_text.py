"""The text block of a successful tool result: the structured result, written compactly.

structuredContent carries every property, for clients that check it against the output
schema. The text block is what a model reads, so it carries the same information in as few
characters as stay unambiguous:

- JSON without spaces or indentation;
- a property holding the `default` its output schema states is left out;
- a list of objects is a table, `{"columns": [...], "rows": [[...], ...]}`: each row holds
  one object's values in column order, and a nested object's properties are columns named
  with a dot (`remoteFlags.seen`). A property every row holds at its default has no column;
  one every row holds at the same other value is written once, under `shared`, instead of
  in every row (a table of one row is all rows).

Filling the defaults back in, guided by the output schema alone, gives structuredContent
exactly; the tests do this for every tool.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

# Said in every tool's description, so a model reading a result knows how to read it.
TEXT_FORM = (
    " Result text: compact JSON leaving out each property at its output-schema default "
    "(null, false, empty, or the default value named there); a list of objects is a table "
    "(columns, rows, and values every row shares under shared). structuredContent holds "
    "every property."
)

_NO_DEFAULT = object()


@dataclass(frozen=True, slots=True)
class _Column:
    """One column a table of a model's objects can have: a path of property names, the
    default at its end, whether its values can hold an object to write compactly in turn,
    and how a row's value is read from the JSON form."""

    path: tuple[str, ...]
    name: str
    default: Any
    nested: bool
    read: Callable[[dict[str, Any]], Any]


def compact_text(model: BaseModel, structured: dict[str, Any]) -> str:
    """The text of `model`, whose JSON form (`model_dump(mode="json")`) is `structured`."""
    return json.dumps(_object(model, structured), ensure_ascii=False, separators=(",", ":"))


def _may_hold_model(annotation: Any) -> bool:
    """Whether a value of `annotation` can be, or hold, a model; True whenever unsure."""
    if annotation is Any or annotation is object:
        return True
    if isinstance(annotation, type):
        # A bare list's items are not known; `list[X]` is not a type and is looked into.
        return issubclass(annotation, BaseModel | list)
    if get_origin(annotation) is Literal:
        return False
    held = get_args(annotation)
    return not held or any(_may_hold_model(a) for a in held if a is not type(None))


@functools.cache
def _defaults(model_type: type[BaseModel]) -> dict[str, Any]:
    """Each field's default in its JSON form, for the fields that have one."""
    found: dict[str, Any] = {}
    for name, field in model_type.model_fields.items():
        if not field.is_required():
            found[name] = to_jsonable_python(field.get_default(call_default_factory=True))
    return found


@functools.cache
def _fields(model_type: type[BaseModel]) -> tuple[tuple[str, Any, bool], ...]:
    """Each field's name, default (or none) and whether its value can hold a model."""
    defaults = _defaults(model_type)
    return tuple(
        (name, defaults.get(name, _NO_DEFAULT), _may_hold_model(field.annotation))
        for name, field in model_type.model_fields.items()
    )


@functools.cache
def _columns(model_type: type[BaseModel]) -> tuple[_Column, ...]:
    """The columns a table of `model_type` objects can have. A property that always holds
    an object is spread into columns of its own properties; one that may be null stays one
    column."""
    columns: list[_Column] = []
    for name, default, nested in _fields(model_type):
        annotation = model_type.model_fields[name].annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            columns.extend(
                _Column(
                    (name, *c.path),
                    f"{name}.{c.name}",
                    c.default,
                    c.nested,
                    functools.partial(_at, path=(name, *c.path)),
                )
                for c in _columns(annotation)
            )
        else:
            columns.append(_Column((name,), name, default, nested, itemgetter(name)))
    return tuple(columns)


def _value(instance: Any, data: Any) -> Any:
    if isinstance(instance, BaseModel):
        return _object(instance, data)
    if isinstance(instance, list) and instance and isinstance(instance[0], BaseModel):
        return _table(instance, data)
    return data


def _object(model: BaseModel, data: dict[str, Any]) -> dict[str, Any]:
    written: dict[str, Any] = {}
    for name, default, nested in _fields(type(model)):
        value = data[name]
        if default != value:
            written[name] = _value(getattr(model, name), value) if nested else value
    return written


def _table(items: list[BaseModel], data: list[dict[str, Any]]) -> dict[str, Any]:
    every = [(c, list(map(c.read, data))) for c in _columns(type(items[0]))]
    varies = [any(v != values[0] for v in values) for _c, values in every]
    if any(varies):
        listed = [column for column, varying in zip(every, varies, strict=True) if varying]
        constant = [
            (c, values)
            for (c, values), varying in zip(every, varies, strict=True)
            if not varying and values[0] != c.default
        ]
    else:  # every row alike: a column stays, to say how many rows there are
        constant = []
        listed = [(c, values) for c, values in every if values[0] != c.default] or every[-1:]
    table: dict[str, Any] = {}
    if constant:
        table["shared"] = {c.name: _cell(c, items[0], values[0]) for c, values in constant}
    table["columns"] = [c.name for c, _values in listed]
    cells = [
        [_cell(c, item, v) for item, v in zip(items, values, strict=True)] if c.nested else values
        for c, values in listed
    ]
    table["rows"] = [list(row) for row in zip(*cells, strict=True)]
    return table


def _cell(column: _Column, item: BaseModel, data: Any) -> Any:
    return _value(_attribute(item, column.path), data) if column.nested else data


def _at(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = data
    for name in path:
        value = value[name]
    return value


def _attribute(item: BaseModel, path: tuple[str, ...]) -> Any:
    value: Any = item
    for name in path:
        value = getattr(value, name)
    return value
