"""Output schemas published with every `$ref` replaced by the definition it names.

The schema pydantic derives from a result model keeps each nested model once under `$defs`
and points at it. A client that checks every result against the schema (the official one
does) then resolves a reference for every item of every list, which costs as much as the
server's own work for a page of summaries. A schema with the definitions written in place
says exactly the same thing and is checked without any resolution.
"""

from __future__ import annotations

import copy
from typing import Any

from mailfathom.domain.errors import ConfigurationError

_PREFIX = "#/$defs/"


def inline_definitions(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` without `$defs`, each reference to one replaced by a copy of it. A recursive
    definition cannot be written in place and is refused."""
    definitions: dict[str, Any] = schema.get("$defs", {})

    def expand(node: Any, trail: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [expand(item, trail) for item in node]
        if not isinstance(node, dict):
            return node
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith(_PREFIX):
            name = reference[len(_PREFIX) :]
            if name in trail:
                raise ConfigurationError(
                    f"The output schema definition {name} refers to itself; it cannot be "
                    "published inline."
                )
            target = expand(copy.deepcopy(definitions[name]), (*trail, name))
            siblings = {k: expand(v, trail) for k, v in node.items() if k != "$ref"}
            return {**target, **siblings}
        return {k: expand(v, trail) for k, v in node.items() if k != "$defs"}

    expanded: dict[str, Any] = expand(schema, ())
    return expanded
