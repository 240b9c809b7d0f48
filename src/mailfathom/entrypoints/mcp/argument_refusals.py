"""What a caller is told when a call's arguments do not match the tool's input schema.

The arguments are validated against the tool's argument model before any use case runs. The
validator's own report quotes what it refused, so it is not passed on; the answer is written
from the published schema and the names of the arguments at fault alone. Each argument is named
once, with the rule it broke: required and not given, not an argument of this tool, not one of
the listed values, outside a bound the schema states, or not of the published type. The tool's
own arguments come first in their published order, then the names it does not take in
alphabetical order, so the same call is always answered with the same sentence. A name the
tool does not take is repeated only when it is spelled like an argument name; any other is
counted. Nothing of a value given, not even its length, is part of the answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")
# Unknown names repeated in one answer; any further ones are counted.
_NAMED_UNKNOWN = 5

_MISSING, _LISTED, _BOUNDED, _TYPED = "missing", "notListed", "outOfBounds", "wrongType"
_RULE_OF = {
    "missing": _MISSING,
    "literal_error": _LISTED,
    "enum": _LISTED,
    **dict.fromkeys(
        (
            "greater_than",
            "greater_than_equal",
            "less_than",
            "less_than_equal",
            "multiple_of",
            "too_long",
            "too_short",
            "string_too_long",
            "string_too_short",
        ),
        _BOUNDED,
    ),
}
_PRECEDENCE = (_MISSING, _LISTED, _BOUNDED, _TYPED)
_BOUND_WORDS = (
    ("minimum", "at least {}"),
    ("exclusiveMinimum", "greater than {}"),
    ("maximum", "at most {}"),
    ("exclusiveMaximum", "less than {}"),
    ("minLength", "at least {} characters long"),
    ("maxLength", "at most {} characters long"),
    ("minItems", "a list of at least {} entries"),
    ("maxItems", "a list of at most {} entries"),
)


@dataclass(frozen=True, slots=True)
class SchemaMismatch:
    """The answer's sentence, and what the server log may say about the same call: the
    tool's own arguments at fault with their rules, and how many names it does not take."""

    sentence: str
    rules: tuple[tuple[str, str], ...]
    unknown_count: int


def describe(error: ValidationError, schema: Mapping[str, Any]) -> SchemaMismatch:
    properties: Mapping[str, Any] = schema.get("properties", {})
    rules: dict[str, str] = {}
    unknown: set[str] = set()
    unnamed = 0
    for problem in error.errors(include_url=False, include_context=False, include_input=False):
        location = problem.get("loc") or ()
        name = str(location[0]) if location else ""
        if problem["type"] == "extra_forbidden" and name not in properties:
            if _IDENTIFIER.match(name):
                unknown.add(name)
            else:
                unnamed += 1
            continue
        rule = _RULE_OF.get(problem["type"], _TYPED)
        earlier = rules.get(name)
        if earlier is None or _PRECEDENCE.index(rule) < _PRECEDENCE.index(earlier):
            rules[name] = rule
    known = [(n, rules[n]) for n in properties if n in rules]
    clauses = [_clause(n, rule, properties[n]) for n, rule in known]
    if any(n not in properties for n in rules):
        clauses.append("the arguments must be an object of the published shape")
    named = sorted(unknown)[:_NAMED_UNKNOWN]
    clauses += [f"'{n}' is not an argument of this tool" for n in named]
    further = len(unknown) - len(named) + unnamed
    if further:
        clauses.append(
            f"{further} other argument{'s are' if further > 1 else ' is'} not among this tool's"
        )
    sentence = (
        "The arguments do not match this tool's published input schema: " + "; ".join(clauses) + "."
    )
    return SchemaMismatch(sentence, tuple(known), len(unknown) + unnamed)


def _clause(name: str, rule: str, node: Any) -> str:
    if rule == _MISSING:
        return f"'{name}' is required"
    if rule == _LISTED and (values := _listed(node)):
        return f"'{name}' must be one of " + ", ".join(values)
    if rule == _BOUNDED and (bounds := _bounds(node)):
        return f"'{name}' must be " + " and ".join(bounds)
    return f"'{name}' must be " + _form(node)


def _branches(node: Any) -> list[dict[str, Any]]:
    if not isinstance(node, dict):
        return []
    found = node.get("anyOf") or node.get("oneOf") or [node]
    return [b for b in found if isinstance(b, dict) and b.get("type") != "null"]


def _listed(node: Any) -> list[str]:
    values: list[str] = []
    for branch in _branches(node):
        if "const" in branch:
            values.append(str(branch["const"]))
        values.extend(str(v) for v in branch.get("enum", []) if v is not None)
    return values


def _bounds(node: Any) -> list[str]:
    return [
        words.format(branch[key])
        for branch in _branches(node)
        for key, words in _BOUND_WORDS
        if key in branch
    ]


def _form(node: Any) -> str:
    forms = [_one_form(branch) for branch in _branches(node)]
    return " or ".join(dict.fromkeys(forms)) if forms else "of the type the schema publishes"


def _one_form(branch: dict[str, Any]) -> str:
    if "enum" in branch or "const" in branch:
        return "one of " + ", ".join(_listed(branch))
    kind = branch.get("type")
    if kind == "string":
        return {"date-time": "an ISO 8601 date-time", "date": "an ISO 8601 date"}.get(
            str(branch.get("format")), "a string"
        )
    if kind == "array":
        items = branch.get("items")
        if isinstance(items, dict) and items.get("type") == "string":
            return "a list of strings (one string is read as a list of one)"
        return "a list"
    return {
        "integer": "an integer",
        "number": "a number",
        "boolean": "true or false",
        "object": "an object",
    }.get(str(kind), "of the type the schema publishes")
