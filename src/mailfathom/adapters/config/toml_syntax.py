"""Describing a TOML syntax error by where it is and why, quoting nothing of the file.

The parser's own message sometimes quotes the file (a character, a key, a table name); each
message is therefore matched against the parser's known messages and replaced by a reason in
fixed words. The position is the parser's, or the end of the text when the parser reports
"end of document", so every error names a line and a column.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass

_POSITION = re.compile(r"\(at (?:line (\d+), column (\d+)|end of document)\)\Z")

# (start of the parser's message, the reason shown); the first match wins.
_REASONS: Sequence[tuple[str, str]] = (
    ("Invalid statement", "a line that is neither a key = value pair nor a [table] header"),
    ("Expected newline or end of document", "more text after a value on the same line"),
    ("Cannot overwrite a value", "a key that is already set is set again"),
    ("Cannot declare", "a [table] that is already declared is declared again"),
    ("Cannot mutate immutable namespace", "an inline table or array is extended later"),
    ("Cannot redefine namespace", "a table is declared again under another form"),
    ("Duplicate inline table key", "a key is repeated inside an inline table"),
    ("Expected ']' at the end of a table", "a [table] header without its closing ]"),
    ("Expected ']]' at the end of an array", "an [[array]] header without its closing ]]"),
    ("Expected '=' after a key", "a key without = and a value"),
    (
        "Invalid initial character for a key part",
        "a key that starts with a character keys cannot have",
    ),
    ("Unclosed array", "an array without its closing ]"),
    ("Unclosed inline table", "an inline table without its closing }"),
    ("Unescaped '\\' in a string", "a backslash in a string that starts no escape"),
    ("Invalid hex value", "a \\u or \\U escape that is not hexadecimal"),
    ("Escaped character is not a Unicode scalar value", "a \\u or \\U escape out of range"),
    ("Unterminated string", "a string without its closing quote"),
    ("Expected", "a string without its closing quotes"),
    ("Illegal character '\\n'", "a string without its closing quote on its line"),
    ("Illegal character", "a control character inside a string"),
    ("Found invalid character", "a character that is not allowed there"),
    ("Invalid date or datetime", "an invalid date or time"),
    ("Invalid value", "a missing or invalid value"),
)
_UNKNOWN_REASON = "the text there is not valid TOML"


@dataclass(frozen=True, slots=True)
class TomlSyntaxError:
    """Where a file stops being TOML (1-based line and column) and why, in fixed words."""

    line: int
    column: int
    reason: str

    @property
    def problem(self) -> str:
        return f"is not valid TOML: {self.reason} (at line {self.line}, column {self.column})"


def describe_syntax_error(error: tomllib.TOMLDecodeError, text: str) -> TomlSyntaxError:
    message = str(error)
    reason = next(
        (shown for start, shown in _REASONS if message.startswith(start)), _UNKNOWN_REASON
    )
    position = _POSITION.search(message)
    if position is not None and position.group(1) is not None:
        return TomlSyntaxError(int(position.group(1)), int(position.group(2)), reason)
    line, column = _end_of(text)
    return TomlSyntaxError(line, column, reason)


def _end_of(text: str) -> tuple[int, int]:
    # The position just past the last character, counted the way the parser counts.
    normalized = text.replace("\r\n", "\n")
    line = normalized.count("\n") + 1
    column = len(normalized) - normalized.rfind("\n")
    return line, column
