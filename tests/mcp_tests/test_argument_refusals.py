"""The sentence a schema mismatch is answered with, for the rules no published tool states
today: a bound on a number, on a text's length or on a list's length is named with the bound
the schema publishes, never with what was measured; and what an entry of a list of objects is
told and logged as, by the names the schema publishes alone."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from mcp.server.mcpserver.utilities.func_metadata import func_metadata
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mailfathom.entrypoints.mcp.argument_refusals import describe
from mailfathom.entrypoints.mcp.arguments import with_literal_text


async def bounded(
    count: Annotated[int, Field(ge=1, le=100)],
    label: Annotated[str, Field(max_length=8)] = "",
    names: Annotated[list[str] | None, Field(max_length=3)] = None,
) -> None:
    return None


def _sentence(arguments: dict[str, Any]) -> str:
    metadata = with_literal_text(func_metadata(bounded))
    schema = metadata.arg_model.model_json_schema(by_alias=True)
    with pytest.raises(ValidationError) as raised:
        metadata.validate_arguments(arguments)
    return describe(raised.value, schema).sentence


def test_a_number_out_of_range_is_told_the_published_range() -> None:
    sentence = _sentence({"count": 4711})
    assert "'count' must be at least 1 and at most 100" in sentence
    assert "4711" not in sentence


def test_a_text_too_long_is_told_the_limit_and_not_its_length() -> None:
    sentence = _sentence({"count": 1, "label": "x" * 4711})
    assert "'label' must be at most 8 characters long" in sentence
    assert "4711" not in sentence


def test_a_list_too_long_is_told_the_limit_and_a_single_string_is_a_list_of_one() -> None:
    sentence = _sentence({"count": 1, "names": ["a"] * 4711})
    assert "'names' must be a list of at most 3 entries" in sentence
    assert "4711" not in sentence
    metadata = with_literal_text(func_metadata(bounded))
    assert metadata.validate_arguments({"count": 1, "names": "one"})["names"] == ["one"]


class Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    size: int | None = None


async def listing(files: list[Entry] | None = None) -> None:
    return None


def test_what_is_wrong_in_an_entry_is_logged_by_published_names_only() -> None:
    metadata = with_literal_text(func_metadata(listing))
    schema = metadata.arg_model.model_json_schema(by_alias=True)
    entries = [{"name": 5, "leak-written": 1}, 7, {"size": "big", "other": 2}]
    with pytest.raises(ValidationError) as raised:
        metadata.validate_arguments({"files": entries})
    mismatch = describe(raised.value, schema)
    assert sorted(mismatch.rules) == [
        ("files", "entryNotObject"),
        ("files", "entryUnknownProperty"),
        ("files.name", "wrongType"),
        ("files.size", "wrongType"),
    ]
    assert mismatch.unknown_count == 0
    assert mismatch.sentence == (
        "The arguments do not match this tool's published input schema: each entry of 'files' "
        "must be an object; an entry of 'files' holds a property it does not take (each takes "
        "only name and size); 'name' in an entry of 'files' must be a string; 'size' in an "
        "entry of 'files' must be an integer."
    )
