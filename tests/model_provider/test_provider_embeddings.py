"""The test provider's `/v1/embeddings`, as the `openai` client and plain HTTP see it."""

from __future__ import annotations

import math

import httpx2
import openai
import pytest

from servers.model_provider import EMBEDDINGS, ModelProvider
from servers.model_provider_text import count_tokens, decode_base64

LEAK = "The landlord wrote about the water leak in the kitchen"
LEAK_AGAIN = "Water is leaking into the kitchen again, says the landlord"
INVOICE = "Invoice 2291 for consulting services is attached"


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_vectors_are_unit_length_of_the_configured_dimension_and_deterministic(
    client: openai.OpenAI, provider: ModelProvider
) -> None:
    first = client.embeddings.create(model="any", input=[LEAK, INVOICE])
    again = client.embeddings.create(model="any", input=LEAK)

    assert first.model == "mf-test-embedding"
    assert [item.index for item in first.data] == [0, 1]
    for item in first.data:
        assert len(item.embedding) == 256
        assert math.isclose(math.fsum(v * v for v in item.embedding), 1.0, rel_tol=1e-5)
    assert again.data[0].embedding == pytest.approx(first.data[0].embedding, abs=1e-6)


def test_texts_sharing_words_are_closer_than_texts_sharing_none(client: openai.OpenAI) -> None:
    found = client.embeddings.create(model="any", input=[LEAK, LEAK_AGAIN, INVOICE])
    leak, leak_again, invoice = (item.embedding for item in found.data)

    assert cosine(leak, leak_again) > 0.3
    assert cosine(leak, leak_again) > cosine(leak, invoice) + 0.2


def test_float_and_base64_answers_carry_the_same_vector(http: httpx2.Client) -> None:
    floats = http.post("/embeddings", json={"model": "m", "input": [LEAK]}).json()
    packed = http.post(
        "/embeddings", json={"model": "m", "input": [LEAK], "encoding_format": "base64"}
    ).json()

    assert isinstance(packed["data"][0]["embedding"], str)
    assert decode_base64(packed["data"][0]["embedding"]) == pytest.approx(
        floats["data"][0]["embedding"], abs=1e-6
    )
    assert floats["object"] == "list"
    assert floats["data"][0]["object"] == "embedding"


def test_usage_counts_the_tokens_of_every_input(http: httpx2.Client) -> None:
    answer = http.post("/embeddings", json={"model": "m", "input": [LEAK, INVOICE]}).json()

    expected = count_tokens(LEAK) + count_tokens(INVOICE)
    assert answer["usage"] == {"prompt_tokens": expected, "total_tokens": expected}


def test_token_id_inputs_are_embedded_too(http: httpx2.Client) -> None:
    one = http.post("/embeddings", json={"model": "m", "input": [1, 2, 3]}).json()
    many = http.post("/embeddings", json={"model": "m", "input": [[1, 2, 3], [4, 5]]}).json()

    assert len(one["data"]) == 1
    assert one["data"][0]["embedding"] == many["data"][0]["embedding"]
    assert one["usage"]["prompt_tokens"] == 3
    assert many["usage"]["prompt_tokens"] == 5


def test_dimensions_shortens_to_a_unit_vector_and_refuses_more_than_the_model_has(
    client: openai.OpenAI,
) -> None:
    short = client.embeddings.create(model="m", input=LEAK, dimensions=64)
    assert len(short.data[0].embedding) == 64
    assert math.isclose(math.fsum(v * v for v in short.data[0].embedding), 1.0, rel_tol=1e-5)

    with pytest.raises(openai.BadRequestError) as refused:
        client.embeddings.create(model="m", input=LEAK, dimensions=257)
    assert refused.value.status_code == 400
    assert refused.value.param == "dimensions"


def test_a_test_sets_another_model_and_dimension_to_provoke_a_mismatch(
    client: openai.OpenAI, provider: ModelProvider
) -> None:
    provider.set_embedding_model("other-model", 32, honour_dimensions=False)

    found = client.embeddings.create(model="mf-test-embedding", input=LEAK, dimensions=256)

    assert found.model == "other-model"
    assert len(found.data[0].embedding) == 32
    assert [m.id for m in client.models.list()] == ["other-model", "mf-test-chat"]


def test_reset_restores_the_starting_model(client: openai.OpenAI, provider: ModelProvider) -> None:
    provider.set_embedding_model("other-model", 32)
    provider.reset()

    found = client.embeddings.create(model="m", input=LEAK)

    assert (found.model, len(found.data[0].embedding)) == ("mf-test-embedding", 256)


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"input": "text"}, "model"),
        ({"model": "m"}, "input"),
        ({"model": "m", "input": ""}, "input"),
        ({"model": "m", "input": []}, "input"),
        ({"model": "m", "input": ["fine", ""]}, "input"),
        ({"model": "m", "input": ["x"] * 2049}, "input"),
        ({"model": "m", "input": "x", "encoding_format": "int8"}, "encoding_format"),
        ({"model": "m", "input": "x", "dimensions": 0}, "dimensions"),
    ],
)
def test_requests_the_api_refuses_are_refused_with_its_error(
    http: httpx2.Client, body: dict[str, object], param: str
) -> None:
    answer = http.post("/embeddings", json=body)

    assert answer.status_code == 400
    assert answer.json()["error"]["type"] == "invalid_request_error"
    assert answer.json()["error"]["param"] == param


def test_every_request_is_recorded_in_order(client: openai.OpenAI, provider: ModelProvider) -> None:
    client.embeddings.create(model="first", input=LEAK)
    client.embeddings.create(model="second", input=[LEAK, INVOICE], dimensions=8)

    bodies = provider.requests(EMBEDDINGS)

    assert [body["model"] for body in bodies] == ["first", "second"]
    assert bodies[1]["input"] == [LEAK, INVOICE]
    assert bodies[1]["dimensions"] == 8
    assert [e.status for e in provider.exchanges(EMBEDDINGS)] == [200, 200]
