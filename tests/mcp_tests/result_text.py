"""Reading a result's compact text back into the full structure, the way a client can.

Only the published output schema is consulted: a property the text leaves out takes the
`default` its schema states, a table (`columns` and `rows`, and values every row shares under
`shared`) stands for a list of objects, and a dotted column name is a property of a nested
object. Nothing here imports the server, so a
default the server omits without publishing it makes the expansion fail.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

DESCRIPTOR = Path(__file__).with_name("descriptor.json")


class NotExpandable(AssertionError):
    """The text cannot be read back with the schema alone."""


def output_schemas() -> list[dict[str, Any]]:
    """The output schema of every published tool, from the pinned descriptor (which a test
    keeps equal to what the server advertises)."""
    tools = json.loads(DESCRIPTOR.read_text("utf-8"))
    return [t["outputSchema"] for t in tools if "outputSchema" in t]


def schema_for(structured: dict[str, Any]) -> dict[str, Any]:
    """The output schema whose properties are exactly the keys of a structured result; every
    property is required, so structuredContent names them all."""
    found = [s for s in output_schemas() if set(s.get("properties", {})) == set(structured)]
    if not found:
        raise NotExpandable("no published output schema has these properties")
    return found[0]


def _object_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The object alternative of a schema that may also allow null."""
    if "properties" in schema:
        return schema
    for option in schema.get("anyOf", []):
        if "properties" in option:
            return dict(option)
    return None


def _array_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    if schema.get("type") == "array":
        return schema
    for option in schema.get("anyOf", []):
        if option.get("type") == "array":
            return dict(option)
    return None


def _place(item: dict[str, Any], column: str, cell: Any) -> None:
    *parents, leaf = column.split(".")
    target = item
    for name in parents:
        target = target.setdefault(name, {})
    if leaf in target:
        raise NotExpandable("a table names one property twice")
    target[leaf] = copy.deepcopy(cell)


def _rows(table: dict[str, Any]) -> list[dict[str, Any]]:
    if set(table) - {"shared"} != {"columns", "rows"}:
        raise NotExpandable("an object stands where a list was published, and is no table")
    columns: list[str] = table["columns"]
    shared: dict[str, Any] = table.get("shared", {})
    objects: list[dict[str, Any]] = []
    for row in table["rows"]:
        if len(row) != len(columns):
            raise NotExpandable("a table row does not match its columns")
        item: dict[str, Any] = {}
        for column, cell in [*shared.items(), *zip(columns, row, strict=True)]:
            _place(item, column, cell)
        objects.append(item)
    return objects


def expand(schema: dict[str, Any], value: Any) -> Any:
    """`value`, read from a result's text, with every default the schema states filled in."""
    if value is None:
        return None
    array = _array_schema(schema)
    if array is not None:
        items = array.get("items", {})
        listed = _rows(value) if isinstance(value, dict) else value
        return [expand(items, item) for item in listed]
    shape = _object_schema(schema)
    if shape is not None and isinstance(value, dict):
        unknown = set(value) - set(shape["properties"])
        if unknown:
            raise NotExpandable(f"the text names properties the schema does not: {unknown}")
        full: dict[str, Any] = {}
        for name, sub in shape["properties"].items():
            if name in value:
                full[name] = expand(sub, value[name])
            elif "default" in sub:
                full[name] = copy.deepcopy(sub["default"])
            else:
                raise NotExpandable(f"{name} is left out and the schema states no default")
        return full
    return value


def expand_text(text: str, structured: dict[str, Any]) -> dict[str, Any]:
    full = expand(schema_for(structured), json.loads(text))
    assert isinstance(full, dict)
    return full


def authorship_readings(value: Any) -> list[dict[str, Any]]:
    """Every machineAuthorship object anywhere in a structure."""
    found: list[dict[str, Any]] = []
    if isinstance(value, dict):
        for name, inner in value.items():
            if name == "machineAuthorship" and isinstance(inner, dict):
                found.append(inner)
            else:
                found.extend(authorship_readings(inner))
    elif isinstance(value, list):
        for inner in value:
            found.extend(authorship_readings(inner))
    return found
