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
does not name is refused rather than ignored (the schema says `additionalProperties: false`).
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from pydantic import ConfigDict, PrivateAttr


class LiteralTextArguments(FuncMetadata):
    """A tool's argument handling with text arguments left as sent."""

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
    """`model` refusing any argument it does not name. Its published schema differs from
    `model`'s only by `additionalProperties: false`."""

    class Exact(model):  # type: ignore[misc,valid-type]
        model_config = ConfigDict(extra="forbid", title=model.__name__)

    return Exact


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
