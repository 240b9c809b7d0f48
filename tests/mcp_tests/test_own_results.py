"""A tool's result made from the model it publishes is passed on as made; any other result
is still validated against that model before it is sent."""

from __future__ import annotations

from typing import Annotated

import pytest
from mcp.server.mcpserver.utilities.func_metadata import func_metadata
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict, ValidationError

from mailfathom.entrypoints.mcp.arguments import LiteralTextArguments, with_literal_text
from mailfathom.entrypoints.mcp.own_results import ModelResult
from mailfathom.entrypoints.mcp.registry import _success


class Answer(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    count: int


class Other(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str


async def tool() -> Annotated[CallToolResult, Answer]:
    raise NotImplementedError


def _metadata() -> LiteralTextArguments:
    return with_literal_text(func_metadata(tool))


def test_a_result_of_the_published_model_is_passed_on_as_made() -> None:
    made = _success(Answer(count=3))
    assert isinstance(made, ModelResult)
    assert made.structured_content == {"count": 3}
    assert _metadata().convert_result(made) is made


def test_a_result_of_another_model_is_still_validated() -> None:
    with pytest.raises(ValidationError):
        _metadata().convert_result(_success(Other(name="x")))


def test_a_result_made_another_way_is_still_validated() -> None:
    made = CallToolResult(
        content=[TextContent(type="text", text="{}")], structured_content={"count": "many"}
    )
    with pytest.raises(ValidationError):
        _metadata().convert_result(made)


def test_the_wire_form_is_the_dump_the_sdk_would_make() -> None:
    made = _success(Answer(count=3))
    assert isinstance(made, ModelResult)
    assert made.wire() == made.model_dump(by_alias=True, mode="json", exclude_none=True)


def test_a_result_given_meta_afterwards_is_dumped_whole() -> None:
    made = _success(Answer(count=3))
    assert isinstance(made, ModelResult)
    made.meta = {"note": "kept"}
    assert made.wire() == made.model_dump(by_alias=True, mode="json", exclude_none=True)
    assert made.wire()["_meta"] == {"note": "kept"}
