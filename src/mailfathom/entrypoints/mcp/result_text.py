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
from typing import Any

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
Column = tuple[tuple[str, ...], Any]


def compact_text(model: BaseModel, structured: dict[str, Any]) -> str:
    """The text of `model`, whose JSON form (`model_dump(mode="json")`) is `structured`."""
    return json.dumps(_object(model, structured), ensure_ascii=False, separators=(",", ":"))


@functools.cache
def _defaults(model_type: type[BaseModel]) -> dict[str, Any]:
    """Each field's default in its JSON form, for the fields that have one."""
    found: dict[str, Any] = {}
    for name, field in model_type.model_fields.items():
        if not field.is_required():
            found[name] = to_jsonable_python(field.get_default(call_default_factory=True))
    return found


@functools.cache
def _columns(model_type: type[BaseModel]) -> tuple[Column, ...]:
    """The columns a table of `model_type` objects can have: a path of property names and
    the default at its end. A property that always holds an object is spread into columns
    of its own properties; one that may be null stays one column."""
    defaults = _defaults(model_type)
    columns: list[Column] = []
    for name, field in model_type.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            columns.extend(((name, *path), default) for path, default in _columns(annotation))
        else:
            columns.append(((name,), defaults.get(name, _NO_DEFAULT)))
    return tuple(columns)


def _value(instance: Any, data: Any) -> Any:
    if isinstance(instance, BaseModel):
        return _object(instance, data)
    if isinstance(instance, list) and instance and isinstance(instance[0], BaseModel):
        return _table(instance, data)
    return data


def _object(model: BaseModel, data: dict[str, Any]) -> dict[str, Any]:
    defaults = _defaults(type(model))
    return {
        name: _value(getattr(model, name), data[name])
        for name in type(model).model_fields
        if defaults.get(name, _NO_DEFAULT) != data[name]
    }


def _table(items: list[BaseModel], data: list[dict[str, Any]]) -> dict[str, Any]:
    every = [
        (path, default, [_at(row, path) for row in data])
        for path, default in _columns(type(items[0]))
    ]
    varying = [c for c in every if any(v != c[2][0] for v in c[2])]
    if varying:
        constant = [c for c in every if c not in varying and c[2][0] != c[1]]
        listed = varying
    else:  # every row alike: a column stays, to say how many rows there are
        constant = []
        listed = [c for c in every if c[2][0] != c[1]] or every[-1:]
    table: dict[str, Any] = {}
    if constant:
        table["shared"] = {
            ".".join(path): _value(_attribute(items[0], path), values[0])
            for path, _default, values in constant
        }
    table["columns"] = [".".join(path) for path, _default, _values in listed]
    cells = [
        [_value(_attribute(item, path), v) for item, v in zip(items, values, strict=True)]
        for path, _default, values in listed
    ]
    table["rows"] = [list(row) for row in zip(*cells, strict=True)]
    return table


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
