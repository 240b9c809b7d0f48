"""Tool arguments taken as the caller wrote them.

Before validating a call, the SDK decodes as JSON every string argument whose parameter is
not annotated exactly `str`. An optional text argument (`str | None`) given the text "null"
would then arrive as no value at all, so its filter silently vanishes, and "[]" or "{}" would
arrive as a list or an object and fail validation. Here every argument whose published schema
admits a string keeps the text the caller sent. An argument that can never be a string (a list,
a number, a boolean) is still decoded from JSON text, which is how a client that encodes its
arguments twice is understood; no text is a valid value of those, so nothing a caller meant is
lost.

Every tool's arguments are also held to its published schema exactly: an argument the schema
does not name is refused rather than ignored (the schema says `additionalProperties: false`),
and a single string given where a list of strings is published is read as a list of one. The
schema keeps publishing only the list: a string branch would make the argument textual above,
so a list a client encoded as JSON text would be read as one entry spelling it.

A boolean or integer argument takes its own JSON type and nothing it could be coerced from: a
boolean is true or false (never 1, 0 or "yes"), an integer a whole number (never true or false,
never a fraction; 5.0 is 5). Text spelling such a value as JSON ("true", "5") is read as that
value, like any argument that can never be text; other text is refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from pydantic import (
    ConfigDict,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from mailfathom.entrypoints.mcp.own_results import OwnResults

# Longer text is no JSON spelling of a boolean or an integer any bound admits.
_SCALAR_TEXT_LIMIT = 32


class LiteralTextArguments(OwnResults):
    """A tool's argument handling with text arguments left as sent (and its own results
    passed on as `OwnResults` says)."""

    _textual: frozenset[str] = PrivateAttr(default=frozenset())

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        self._textual = textual_arguments(self.arg_model)

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        others = {key: value for key, value in data.items() if key not in self._textual}
        decoded = super().pre_parse_json(others)
        return {key: decoded.get(key, value) for key, value in data.items()}


def with_literal_text(metadata: FuncMetadata) -> LiteralTextArguments:
    """The same output schema and result handling, the argument model held to its schema,
    text left as sent."""
    return LiteralTextArguments(**{**dict(metadata), "arg_model": exact(metadata.arg_model)})


def exact(model: type[ArgModelBase]) -> type[ArgModelBase]:
    """`model` refusing any argument it does not name, reading one string as a list of one
    wherever it takes a list of strings, and holding its boolean and integer arguments to
    their JSON types. Its published schema differs from `model`'s only by
    `additionalProperties: false`."""
    listed = text_lists(model)
    scalars = {name: _SCALAR_RULES[kind] for name, kind in scalar_arguments(model).items()}

    class Exact(model):  # type: ignore[misc,valid-type]
        model_config = ConfigDict(extra="forbid", title=model.__name__)

        @model_validator(mode="before")
        @classmethod
        def one_string_is_a_list_of_one(cls, data: Any) -> Any:
            if not isinstance(data, dict):
                return data
            return {k: [v] if k in listed and isinstance(v, str) else v for k, v in data.items()}

        @field_validator("*", mode="before")
        @classmethod
        def scalars_of_their_own_type(cls, value: Any, info: ValidationInfo) -> Any:
            rule = scalars.get(info.field_name or "")
            return value if rule is None or value is None else rule(value)

    return Exact


def scalar_arguments(model: type[ArgModelBase]) -> dict[str, str]:
    """The field names of the arguments published as a boolean or an integer (or null),
    with which of the two."""
    schema = model.model_json_schema(by_alias=True)
    properties: dict[str, Any] = schema.get("properties", {})
    found: dict[str, str] = {}
    for name, field in model.model_fields.items():
        node = properties.get(field.alias or name, {})
        branches = node.get("anyOf", [node]) if isinstance(node, dict) else []
        kinds = {b.get("type") for b in branches if isinstance(b, dict)} - {"null"}
        if len(kinds) == 1 and (kind := kinds.pop()) in _SCALAR_RULES:
            found[name] = kind
    return found


def _spelled(value: Any) -> Any:
    """The JSON value that text spells, or the text itself when it spells none."""
    if not isinstance(value, str) or len(value) > _SCALAR_TEXT_LIMIT:
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def _boolean(value: Any) -> bool:
    value = _spelled(value)
    if isinstance(value, bool):
        return value
    raise PydanticCustomError("bool_type", "Input should be true or false")


def _integer(value: Any) -> int:
    value = _spelled(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise PydanticCustomError("int_type", "Input should be a whole number")


_SCALAR_RULES: dict[str, Callable[[Any], Any]] = {"boolean": _boolean, "integer": _integer}


def text_lists(model: type[ArgModelBase]) -> frozenset[str]:
    """The names (and aliases) of the arguments whose published schema admits a list of
    strings."""
    schema = model.model_json_schema(by_alias=True)
    properties: dict[str, Any] = schema.get("properties", {})
    names: set[str] = set()
    for name, field in model.model_fields.items():
        key = field.alias or name
        node = properties.get(key, {})
        branches = node.get("anyOf", [node]) if isinstance(node, dict) else []
        if any(_is_text_list(branch) for branch in branches):
            names.update({name, key})
    return frozenset(names)


def _is_text_list(node: Any) -> bool:
    if not isinstance(node, dict) or node.get("type") != "array":
        return False
    items = node.get("items")
    return isinstance(items, dict) and items.get("type") == "string"


def textual_arguments(model: type[ArgModelBase]) -> frozenset[str]:
    """The names (and aliases) of the arguments whose published schema admits a string."""
    schema = model.model_json_schema(by_alias=True)
    definitions: dict[str, Any] = schema.get("$defs", {})
    properties: dict[str, Any] = schema.get("properties", {})
    names: set[str] = set()
    for name, field in model.model_fields.items():
        key = field.alias or name
        if _admits_string(properties.get(key, {}), definitions):
            names.update({name, key})
    return frozenset(names)


def _admits_string(node: Any, definitions: dict[str, Any], depth: int = 0) -> bool:
    if not isinstance(node, dict) or depth > 32:
        return False
    reference = node.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/$defs/"):
        target = definitions.get(reference.removeprefix("#/$defs/"))
        if _admits_string(target, definitions, depth + 1):
            return True
    kind = node.get("type")
    if kind == "string" or (isinstance(kind, list) and "string" in kind):
        return True
    if isinstance(node.get("const"), str):
        return True
    enum = node.get("enum")
    if isinstance(enum, list) and any(isinstance(v, str) for v in enum):
        return True
    return any(
        _admits_string(branch, definitions, depth + 1)
        for combinator in ("anyOf", "oneOf", "allOf")
        for branch in node.get(combinator, [])
    )
