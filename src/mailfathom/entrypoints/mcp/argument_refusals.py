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

An argument that is a list of objects is a list even when an entry of it is at fault, so such
an entry is told apart: one that is no object, one holding a property the entry does not take
(told with the properties it does take, never with the name the caller wrote), and a property
of it breaking its own rule (named as the schema publishes it).
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
# What is wrong with an entry of a list of objects itself, as opposed to one of its properties.
_NOT_OBJECT, _UNKNOWN_PROPERTY = "entryNotObject", "entryUnknownProperty"
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
    definitions: Mapping[str, Any] = schema.get("$defs", {})
    rules: dict[str, str] = {}
    # Faults of entries of a list of objects, by argument: what is wrong with an entry
    # (_NOT_OBJECT, _UNKNOWN_PROPERTY) or with a published property of one, and its rule.
    entries: dict[str, dict[str, str]] = {}
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
        entry = _entry_schema(properties.get(name), definitions)
        if entry is not None and len(location) > 1 and isinstance(location[1], int):
            _note_entry(entries.setdefault(name, {}), location[2:], problem["type"], entry)
            continue
        _note(rules, name, _RULE_OF.get(problem["type"], _TYPED))
    known: list[tuple[str, str]] = []
    clauses: list[str] = []
    for n, node in properties.items():
        if n in rules:
            known.append((n, rules[n]))
            clauses.append(_clause(f"'{n}'", rules[n], node))
        elif n in entries:
            known += [(_logged(n, fault), rule) for fault, rule in entries[n].items()]
            clauses += _entry_clauses(n, entries[n], _entry_schema(node, definitions) or {})
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


def _note(rules: dict[str, str], name: str, rule: str) -> None:
    """Keep the rule that comes first in `_PRECEDENCE` for `name`."""
    earlier = rules.get(name)
    if earlier is None or _PRECEDENCE.index(rule) < _PRECEDENCE.index(earlier):
        rules[name] = rule


def _entry_schema(node: Any, definitions: Mapping[str, Any]) -> dict[str, Any] | None:
    """The schema of an entry when `node` publishes a list of objects, else None."""
    for branch in _branches(node):
        if branch.get("type") != "array":
            continue
        items = branch.get("items")
        if isinstance(items, dict) and isinstance(items.get("$ref"), str):
            items = definitions.get(items["$ref"].rpartition("/")[2])
        if isinstance(items, dict) and items.get("type") == "object":
            return items
    return None


def _note_entry(
    faults: dict[str, str], inside: tuple[Any, ...], kind: str, entry: Mapping[str, Any]
) -> None:
    """Note what a problem at `inside` (the location within one entry) says of the entry."""
    published: Mapping[str, Any] = entry.get("properties", {})
    if not inside:
        faults[_NOT_OBJECT] = _NOT_OBJECT
    elif kind == "extra_forbidden" or str(inside[0]) not in published:
        faults[_UNKNOWN_PROPERTY] = _UNKNOWN_PROPERTY
    else:
        _note(faults, str(inside[0]), _RULE_OF.get(kind, _TYPED))


def _entry_clauses(name: str, faults: Mapping[str, str], entry: Mapping[str, Any]) -> list[str]:
    published: Mapping[str, Any] = entry.get("properties", {})
    clauses = []
    if _NOT_OBJECT in faults:
        clauses.append(f"each entry of '{name}' must be an object")
    if _UNKNOWN_PROPERTY in faults:
        names = list(published)
        taken = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)
        clauses.append(
            f"an entry of '{name}' holds a property it does not take (each takes only {taken})"
        )
    clauses += [
        _clause(f"'{p}' in an entry of '{name}'", faults[p], published[p])
        for p in published
        if p in faults
    ]
    return clauses


def _logged(name: str, fault: str) -> str:
    """How the server log names a fault of an entry: the argument, and the published
    property at fault when there is one."""
    return name if fault in (_NOT_OBJECT, _UNKNOWN_PROPERTY) else f"{name}.{fault}"


def _clause(subject: str, rule: str, node: Any) -> str:
    if rule == _MISSING:
        return f"{subject} is required"
    if rule == _LISTED and (values := _listed(node)):
        return f"{subject} must be one of " + ", ".join(values)
    if rule == _BOUNDED and (bounds := _bounds(node)):
        return f"{subject} must be " + " and ".join(bounds)
    return f"{subject} must be " + _form(node)


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
