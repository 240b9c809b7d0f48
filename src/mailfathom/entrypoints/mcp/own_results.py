"""Results this server made from its own published models, passed on without a second check.

Every tool answers through `registry._success`, which dumps an instance of the tool's
published result model (frozen, validated when it was built) as the structured content. The
SDK would then validate that content against the same model before sending it: the same
work again, on the event loop, for each call. A result made that way says so (`ModelResult`
names the model it was dumped from), and a result is passed on unchecked only when that
model is the one the tool publishes (or a subclass of it). Anything else (an error result,
a result built another way, a model of another tool) is still validated by the SDK.

Such a result also reaches the SDK as its wire form (`ModelResult.wire`), written from the
text and the dump it was made of: dumping the result model again would walk the whole
structured content once more before the SDK's own check and dump of the response."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.types import CallToolResult, InputRequiredResult, TextContent
from pydantic import BaseModel, PrivateAttr


class ModelResult(CallToolResult):
    """A successful result whose structured content is the JSON dump of an instance of
    `source`."""

    _source: type[BaseModel] | None = PrivateAttr(default=None)
    _text: str = PrivateAttr(default="")

    @classmethod
    def of(cls, model: BaseModel, text: str, structured: dict[str, Any]) -> ModelResult:
        made = cls(content=[TextContent(type="text", text=text)], structured_content=structured)
        made._source = type(model)
        made._text = text
        return made

    @property
    def source(self) -> type[BaseModel] | None:
        return self._source

    def wire(self) -> dict[str, Any]:
        """What `model_dump(by_alias=True, mode="json", exclude_none=True)` gives for this
        result. (An answer in an earlier protocol version leaves `resultType` out: the SDK
        sieves the result through that version's shape.)"""
        if self.meta is not None:
            return self.model_dump(by_alias=True, mode="json", exclude_none=True)
        return {
            "content": [{"type": "text", "text": self._text}],
            "structuredContent": self.structured_content,
            "isError": self.is_error,
            "resultType": self.result_type,
        }


class OwnResults(FuncMetadata):
    """A tool's result handling that trusts a `ModelResult` of the model it publishes."""

    def convert_result(self, result: Any) -> CallToolResult | InputRequiredResult:
        published = self.output_model
        if (
            isinstance(result, ModelResult)
            and not result.is_error
            and self.output_schema is not None
            and isinstance(published, type)
            and result.source is not None
            and issubclass(result.source, published)
        ):
            return result
        return super().convert_result(result)
