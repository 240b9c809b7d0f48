"""Collecting configuration problems and reading TOML tables with typed getters.

Shared by every section module: a getter that meets a wrong type records a problem naming the
key path and the rule, and returns nothing, so every problem of a file is reported at once.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from mailfathom.domain.web_addresses import is_loopback as is_loopback

# Unknown keys that look like an attempt to write a secret inline get a message pointing at
# the reference syntax instead of a bare "unknown key".
_LITERAL_SECRET_KEYS = frozenset(
    {"pass", "passwd", "pwd", "token", "apikey", "apitoken", "accesstoken", "secretvalue"}
)
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*")
_SIZE_UNITS: Mapping[str, int] = {
    "": 1,
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}
_SIZE_RULE = (
    'must be a whole number of bytes or a size such as "25MB" '
    "(units B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)"
)
_SIZE_LIMIT = 2**63 - 1  # what a signed 64-bit database column holds
REFERENCE_HINT = 'write Secret = { Env = "VARIABLE" } or Secret = { File = "path" } instead'


@dataclass(slots=True)
class Problems:
    items: list[str] = field(default_factory=list)
    # key path of an unknown key -> the known key of its table it most likely meant
    suggestions: dict[str, str] = field(default_factory=dict)

    def add(self, path: str, rule: str) -> None:
        self.items.append(f"{path}: {rule}")


def key_path(parent: str, key: str) -> str:
    """Append `key` to a key path, quoting it as TOML would when it is not a bare key."""
    if _BARE_KEY.fullmatch(key):
        shown = key
    else:
        shown = json.dumps(key[:64] + ("…" if len(key) > 64 else ""), ensure_ascii=True)
    return f"{parent}.{shown}" if parent else shown


class Table:
    """One TOML table being validated: typed getters that record problems instead of raising."""

    def __init__(self, data: Mapping[str, object], path: str, problems: Problems) -> None:
        self.data = data
        self.path = path
        self.problems = problems

    def at(self, key: str) -> str:
        return key_path(self.path, key)

    def refuse_unknown(
        self, allowed: frozenset[str], *, reference_hint: str = REFERENCE_HINT
    ) -> None:
        for key in self.data:
            if key in allowed:
                continue
            folded = key.casefold()
            if folded in _LITERAL_SECRET_KEYS or "password" in folded or "secret" in folded:
                self.problems.add(
                    self.at(key), f"a secret is not accepted in the file; {reference_hint}"
                )
                continue
            self.problems.add(self.at(key), f"unknown key{self._suggest(key, allowed)}")

    def _suggest(self, key: str, allowed: frozenset[str]) -> str:
        # Key names are the loader's own vocabulary, not the owner's data, so the known key
        # may be named; the unknown one is named only as part of the key path.
        near = next((name for name in sorted(allowed) if name.casefold() == key.casefold()), None)
        if near is not None:
            self.problems.suggestions[self.at(key)] = near
            return f" (keys are case-sensitive: did you mean {near}?)"
        by_folded = {name.casefold(): name for name in sorted(allowed)}
        close = difflib.get_close_matches(key.casefold(), list(by_folded), n=1)
        if not close:
            return ""
        near = by_folded[close[0]]
        self.problems.suggestions[self.at(key)] = near
        return f" (did you mean {near}?)"

    def has(self, key: str) -> bool:
        return key in self.data

    def string(self, key: str, *, required: bool = False) -> str | None:
        if key not in self.data:
            if required:
                self.problems.add(self.at(key), "is required")
            return None
        value = self.data[key]
        if not isinstance(value, str):
            self.problems.add(self.at(key), "must be a string")
            return None
        return value

    def boolean(self, key: str, default: bool) -> bool:
        if key not in self.data:
            return default
        value = self.data[key]
        if not isinstance(value, bool):
            self.problems.add(self.at(key), "must be true or false")
            return default
        return value

    def integer(self, key: str) -> int | None:
        if key not in self.data:
            return None
        value = self.data[key]
        if isinstance(value, bool) or not isinstance(value, int):
            self.problems.add(self.at(key), "must be an integer")
            return None
        return value

    def number(self, key: str) -> float | None:
        if key not in self.data:
            return None
        value = self.data[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.problems.add(self.at(key), "must be a number")
            return None
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            self.problems.add(self.at(key), "must be a finite number")
            return None
        return number

    def table(self, key: str) -> Table | None:
        if key not in self.data:
            return None
        value = self.data[key]
        if not isinstance(value, Mapping):
            self.problems.add(self.at(key), "must be a table")
            return None
        return Table(string_keyed(value), self.at(key), self.problems)

    def tables(self, key: str) -> list[Table]:
        """An array of tables (`[[Key]]`); an absent key is an empty array."""
        if key not in self.data:
            return []
        value = self.data[key]
        if not isinstance(value, list | tuple) or not all(
            isinstance(item, Mapping) for item in value
        ):
            self.problems.add(self.at(key), "must be an array of tables")
            return []
        return [
            Table(string_keyed(item), f"{self.at(key)}[{index}]", self.problems)
            for index, item in enumerate(value)
        ]

    def strings(self, key: str) -> list[str] | None:
        if key not in self.data:
            return None
        value = self.data[key]
        if not isinstance(value, list | tuple) or not all(isinstance(item, str) for item in value):
            self.problems.add(self.at(key), "must be an array of strings")
            return None
        return list(value)

    def size(self, key: str) -> int | None:
        """A size in bytes: an integer, or a string with a unit. Must be greater than zero."""
        if key not in self.data:
            return None
        octets = _parse_size(self.data[key])
        if octets is None:
            self.problems.add(self.at(key), _SIZE_RULE)
            return None
        if octets <= 0:
            self.problems.add(self.at(key), "must be greater than zero")
            return None
        if octets > _SIZE_LIMIT:
            self.problems.add(self.at(key), "must be less than 8 EiB (2**63 bytes)")
            return None
        return octets


def string_keyed(value: Mapping[Any, object]) -> Mapping[str, object]:
    # TOML keys are always strings; this only narrows the type for callers that pass mappings.
    return {str(key): item for key, item in value.items()}


def _parse_size(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if not isinstance(value, str):
        return None
    match = _SIZE.fullmatch(value)
    if match is None:
        return None
    unit = _SIZE_UNITS.get(match.group(2).lower())
    if unit is None:
        return None
    try:
        amount = Decimal(match.group(1)) * unit
    except InvalidOperation:
        return None
    if amount != amount.to_integral_value():
        return None
    return int(amount)
