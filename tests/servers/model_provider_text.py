"""What the test model provider computes from text: vectors and token counts.

Vectors are a hashed bag of lower-cased words and of their character trigrams, L2-normalized:
deterministic, cheap, and close for texts that share words (or word stems, through the
trigrams), far for texts that share none. That is all a test of retrieval plumbing needs, and
it makes a paraphrase sharing no word with its target as hard to find as it is for a lexical
index, so a test cannot mistake this model for a real one.

Tokens are words and single punctuation marks. The provider reports usage by this count, so a
test computes the same figure from what it sent (`prompt_tokens`) and can assert bounds.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import struct
from collections.abc import Iterable, Sequence
from typing import Any

TOKEN = re.compile(r"\w+|[^\w\s]")
WORD = re.compile(r"\w+")
WORD_WEIGHT = 1.0
TRIGRAM_WEIGHT = 0.5


def count_tokens(text: str) -> int:
    return len(TOKEN.findall(text))


def first_tokens(text: str, limit: int) -> str:
    """`text` cut after its first `limit` tokens (what a model stopped by `max_tokens` says)."""
    spans = list(TOKEN.finditer(text))
    if len(spans) <= limit:
        return text
    return text[: spans[limit - 1].end()] if limit > 0 else ""


def _features(text: str) -> Iterable[tuple[str, float]]:
    for word in WORD.findall(text.lower()):
        yield "w:" + word, WORD_WEIGHT
        padded = f" {word} "
        for start in range(len(padded) - 2):
            yield "t:" + padded[start : start + 3], TRIGRAM_WEIGHT


def _slot(feature: str, dimension: int) -> tuple[int, float]:
    digest = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
    return digest % dimension, 1.0 if (digest >> 40) & 1 else -1.0


def embed(text: str | Sequence[int], dimension: int) -> list[float]:
    """A unit vector of `dimension` floats for `text` (or for a list of token ids, each a word).

    A text with no word at all (punctuation only) still gets a vector, from its characters.
    """
    if isinstance(text, str):
        features = list(_features(text)) or [("c:" + ch, 1.0) for ch in text]
    else:
        features = [(f"w:#{token}", WORD_WEIGHT) for token in text]
    vector = [0.0] * dimension
    for feature, weight in features:
        index, sign = _slot(feature, dimension)
        vector[index] += sign * weight
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0.0:
        # Features that cancelled out exactly: any fixed unit vector keeps the answer valid.
        vector[0], norm = 1.0, 1.0
    return [v / norm for v in vector]


def shorten(vector: list[float], dimension: int) -> list[float]:
    """The first `dimension` values, normalized again (how `dimensions` shortens a vector)."""
    head = vector[:dimension]
    norm = math.sqrt(sum(v * v for v in head)) or 1.0
    return [v / norm for v in head]


def encode_base64(vector: Sequence[float]) -> str:
    """`encoding_format: "base64"`: little-endian float32 values, base64-encoded."""
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")


def decode_base64(text: str) -> list[float]:
    raw = base64.b64decode(text)
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def input_tokens(item: str | Sequence[int]) -> int:
    return count_tokens(item) if isinstance(item, str) else len(item)


def content_text(content: Any) -> str:
    """The text of a message's `content`: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def prompt_tokens(body: dict[str, Any]) -> int:
    """The `prompt_tokens` the provider reports for a chat request: the tokens of every
    message's text and of every tool call it carries (name and arguments), plus those of the
    `tools` declarations as JSON."""
    total = 0
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        total += count_tokens(content_text(message.get("content")))
        for call in message.get("tool_calls") or []:
            function = (call.get("function") or {}) if isinstance(call, dict) else {}
            total += count_tokens(str(function.get("name", "")))
            total += count_tokens(str(function.get("arguments", "")))
    if body.get("tools"):
        total += count_tokens(json.dumps(body["tools"], sort_keys=True))
    return total


def tool_result_chars(body: dict[str, Any]) -> int:
    """Characters of the content of every `tool` message in a chat request."""
    return sum(
        len(content_text(message.get("content")))
        for message in body.get("messages") or []
        if isinstance(message, dict) and message.get("role") == "tool"
    )
