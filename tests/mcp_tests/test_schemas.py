"""Output schemas are published with their definitions written in place."""

from __future__ import annotations

import pytest

from mailfathom.domain.errors import ConfigurationError
from mailfathom.entrypoints.mcp.schemas import inline_definitions


def test_references_are_replaced_by_their_definitions_and_siblings_are_kept() -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
            "first": {"$ref": "#/$defs/Item", "description": "The first item"},
        },
        "$defs": {
            "Item": {"type": "object", "properties": {"tag": {"$ref": "#/$defs/Tag"}}},
            "Tag": {"type": "string", "enum": ["a", "b"]},
        },
    }
    item = {"type": "object", "properties": {"tag": {"type": "string", "enum": ["a", "b"]}}}
    assert inline_definitions(schema) == {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": item},
            "first": {**item, "description": "The first item"},
        },
    }


def test_a_recursive_definition_is_refused() -> None:
    schema = {
        "$ref": "#/$defs/Node",
        "$defs": {"Node": {"properties": {"children": {"items": {"$ref": "#/$defs/Node"}}}}},
    }
    with pytest.raises(ConfigurationError):
        inline_definitions(schema)
