"""The OpenAI-compatible embeddings adapter against a real HTTP server on loopback (the test
model provider): vectors of the profile's space, and every way the endpoint can fail told
apart by its kind, logged under its code and never with a text sent or the key."""

from __future__ import annotations

import http.server
import json
import math
import secrets
import socket
import threading
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path

import pytest
from structlog.testing import capture_logs

import log_audit
from mailfathom.adapters.embedding import open_embedder
from mailfathom.adapters.embedding.endpoint import EndpointEmbedder
from mailfathom.app.shared.embedding_ports import EmbeddingUnavailable
from mailfathom.domain.config import SecretRef
from mailfathom.domain.embedding import EmbeddingFailure, ProfileIdentity
from mailfathom.domain.embedding_profiles import EndpointProfile
from mailfathom.domain.errors import SecretUnavailable
from servers.model_provider import EMBEDDINGS, ModelProvider

MODEL = "mf-embed-small"
DIMENSION = 64
KEY_ENV = "MF_TEST_EMBEDDING_KEY"
TEXTS = [
    "the landlord wrote about the water damage in the flat",
    "the roof leaks into the kitchen again",
    "kernel patch for the cache flush",
]


@pytest.fixture
def endpoint(provider: ModelProvider) -> ModelProvider:
    provider.set_embedding_model(MODEL, DIMENSION)
    log_audit.register(*TEXTS, provider.api_key)
    return provider


def profile(provider: ModelProvider, **changes: object) -> EndpointProfile:
    base = EndpointProfile(
        name="remote",
        url=provider.base_url,
        model=MODEL,
        dimension=DIMENSION,
        version="2026-12",
        api_key=SecretRef(env=KEY_ENV, origin="Embeddings.Profiles[0].ApiKey"),
        connect_timeout_seconds=2.0,
        timeout_seconds=2.0,
        batch_size=2,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


@pytest.fixture
def opened(endpoint: ModelProvider) -> Iterator[EndpointEmbedder]:
    embedder = EndpointEmbedder(profile(endpoint), environ={KEY_ENV: endpoint.api_key})
    yield embedder
    embedder.close()


def dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def failure_of(
    settings: EndpointProfile, environ: Mapping[str, str] | None = None
) -> EmbeddingFailure:
    """How one query through a new adapter of `settings` fails."""
    embedder = EndpointEmbedder(settings, environ=environ)
    try:
        with pytest.raises(EmbeddingUnavailable) as failed:
            embedder.embed_query(TEXTS[0])
    finally:
        embedder.close()
    return failed.value.failure


def test_passages_are_sent_in_batches_and_come_back_in_order(
    endpoint: ModelProvider, opened: EndpointEmbedder
) -> None:
    vectors = opened.embed_passages(TEXTS)
    assert len(vectors) == 3
    for vector in vectors:
        assert len(vector) == DIMENSION
        assert math.isclose(dot(vector, vector), 1.0, rel_tol=1e-9)
    bodies = endpoint.requests(EMBEDDINGS)
    assert [body["input"] for body in bodies] == [TEXTS[:2], TEXTS[2:]]
    assert all(body["model"] == MODEL for body in bodies)
    assert all(body["encoding_format"] == "float" for body in bodies)
    # The same text alone gets the same vector: the order was kept.
    assert opened.embed_passages([TEXTS[2]])[0] == pytest.approx(vectors[2])


def test_a_query_is_embedded_in_the_same_space(opened: EndpointEmbedder) -> None:
    (passage,) = opened.embed_passages([TEXTS[1]])
    query = opened.embed_query(TEXTS[1])
    assert query == pytest.approx(passage)
    assert opened.identity == ProfileIdentity(MODEL, "2026-12", DIMENSION)


def test_no_key_configured_sends_no_credential(endpoint: ModelProvider) -> None:
    assert failure_of(profile(endpoint, api_key=None)) is EmbeddingFailure.REFUSED
    assert endpoint.exchanges(EMBEDDINGS)[0].status == 401


@pytest.mark.parametrize(
    ("how", "failure", "code"),
    [
        ("401", EmbeddingFailure.REFUSED, 11033),
        ("403", EmbeddingFailure.REFUSED, 11033),
        ("500", EmbeddingFailure.UNREACHABLE, 11034),
        ("429", EmbeddingFailure.UNREACHABLE, 11034),
        ("timeout", EmbeddingFailure.UNREACHABLE, 11034),
        ("malformed", EmbeddingFailure.MALFORMED, 11036),
        ("notext", EmbeddingFailure.MALFORMED, 11036),
    ],
)
def test_each_failure_of_the_endpoint_is_told_apart(
    endpoint: ModelProvider,
    opened: EndpointEmbedder,
    how: str,
    failure: EmbeddingFailure,
    code: int,
) -> None:
    endpoint.fail(EMBEDDINGS, how, times=1, hold_seconds=10.0)
    with capture_logs() as logged, pytest.raises(EmbeddingUnavailable) as failed:
        opened.embed_passages(TEXTS[:1])
    assert failed.value.failure is failure
    (line,) = [entry for entry in logged if entry["event"] == "embedding.unavailable"]
    assert line["code"] == code
    assert line["failure"] == failure.value
    assert line["profile"] == "remote"
    written = json.dumps(logged, default=str) + str(failed.value)
    assert TEXTS[0] not in written
    assert endpoint.api_key not in written
    # Only one request: the adapter retries nothing itself.
    assert len(endpoint.exchanges(EMBEDDINGS)) == 1
    # The endpoint answers again, and so does the adapter, without being reopened.
    if how == "timeout":
        endpoint.reset()
        endpoint.set_embedding_model(MODEL, DIMENSION)
    assert len(opened.embed_query(TEXTS[0])) == DIMENSION


def test_a_key_the_endpoint_does_not_know_is_refused(endpoint: ModelProvider) -> None:
    unknown = {KEY_ENV: "sk-not-" + "x" * 20}
    assert failure_of(profile(endpoint), unknown) is EmbeddingFailure.REFUSED


def test_an_answer_of_another_model_is_a_mismatch(
    endpoint: ModelProvider, opened: EndpointEmbedder
) -> None:
    endpoint.set_embedding_model("another-model", DIMENSION)
    with capture_logs() as logged, pytest.raises(EmbeddingUnavailable) as failed:
        opened.embed_query(TEXTS[0])
    assert failed.value.failure is EmbeddingFailure.MISMATCH
    assert [e["code"] for e in logged if e["event"] == "embedding.unavailable"] == [11035]


def test_vectors_of_another_dimension_are_a_mismatch(
    endpoint: ModelProvider, opened: EndpointEmbedder
) -> None:
    endpoint.set_embedding_model(MODEL, DIMENSION * 2)
    with pytest.raises(EmbeddingUnavailable) as failed:
        opened.embed_passages(TEXTS)
    assert failed.value.failure is EmbeddingFailure.MISMATCH


def test_a_stopped_endpoint_is_unreachable_and_found_again_when_it_returns(
    endpoint: ModelProvider, opened: EndpointEmbedder
) -> None:
    endpoint.stop()
    with pytest.raises(EmbeddingUnavailable) as failed:
        opened.embed_query(TEXTS[0])
    assert failed.value.failure is EmbeddingFailure.UNREACHABLE
    endpoint.start()
    endpoint.set_embedding_model(MODEL, DIMENSION)
    assert len(opened.embed_query(TEXTS[0])) == DIMENSION


def test_nothing_listening_is_unreachable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    nowhere = EndpointProfile("remote", f"http://127.0.0.1:{port}/v1", MODEL, DIMENSION, "1")
    assert failure_of(nowhere) is EmbeddingFailure.UNREACHABLE


def test_an_unknown_route_is_a_mismatch(endpoint: ModelProvider) -> None:
    """A server that has no such model (or no embeddings at that address) answers 404."""
    elsewhere = profile(endpoint, url=endpoint.base_url + "/nowhere")
    assert failure_of(elsewhere, {KEY_ENV: endpoint.api_key}) is EmbeddingFailure.MISMATCH


def test_a_rotated_key_is_read_for_the_next_request(
    endpoint: ModelProvider, tmp_path: Path
) -> None:
    key_file = tmp_path / "embedding.key"
    key_file.write_text("sk-old-" + secrets.token_urlsafe(8) + "\n")
    embedder = EndpointEmbedder(profile(endpoint, api_key=SecretRef(file=key_file)))
    try:
        with pytest.raises(EmbeddingUnavailable):
            embedder.embed_query(TEXTS[0])
        key_file.write_text(endpoint.api_key + "\n")
        assert len(embedder.embed_query(TEXTS[0])) == DIMENSION
    finally:
        embedder.close()


def test_an_unreadable_key_stops_the_start_and_later_counts_as_refused(
    endpoint: ModelProvider,
) -> None:
    with pytest.raises(SecretUnavailable) as unreadable:
        open_embedder(profile(endpoint), environ={})
    assert unreadable.value.code == 11002
    assert "Embeddings.Profiles[0].ApiKey" in str(unreadable.value)
    assert failure_of(profile(endpoint), {}) is EmbeddingFailure.REFUSED
    assert endpoint.exchanges(EMBEDDINGS) == []


def test_threads_share_one_adapter(endpoint: ModelProvider, opened: EndpointEmbedder) -> None:
    expected = opened.embed_passages(TEXTS)
    found: dict[int, list[list[float]]] = {}

    def work(index: int) -> None:
        found[index] = opened.embed_passages(TEXTS)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(found) == [0, 1, 2, 3]
    for vectors in found.values():
        assert vectors == expected


def test_a_query_waits_only_its_own_timeout_while_a_batch_waits_longer(
    endpoint: ModelProvider,
) -> None:
    settings = profile(endpoint, timeout_seconds=30.0, query_timeout_seconds=0.3)
    embedder = EndpointEmbedder(settings, environ={KEY_ENV: endpoint.api_key})
    try:
        endpoint.fail(EMBEDDINGS, "timeout", times=1, hold_seconds=2.0)
        with pytest.raises(EmbeddingUnavailable) as failed:
            embedder.embed_query(TEXTS[0])
        assert failed.value.failure is EmbeddingFailure.UNREACHABLE
        endpoint.fail(EMBEDDINGS, "timeout", times=1, hold_seconds=2.0)
        assert len(embedder.embed_passages(TEXTS[:1])) == 1
    finally:
        embedder.close()


class _Answering(http.server.BaseHTTPRequestHandler):
    body = b""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, format: str, *args: object) -> None:
        del format, args


@pytest.mark.parametrize(
    "component", ["1" + "0" * 400, "1e400", "NaN", '"0.5"'], ids=["huge", "inf", "nan", "text"]
)
def test_a_component_that_is_no_finite_number_is_malformed(component: str) -> None:
    """Python's JSON reader takes a 400-digit integer, 1e400 (infinity) and NaN: none is a
    component, and none may escape the adapter as anything but a malformed answer."""
    vector = ", ".join([component] + ["0.1"] * (DIMENSION - 1))
    answer = f'{{"model": "{MODEL}", "data": [{{"index": 0, "embedding": [{vector}]}}]}}'

    class Handler(_Answering):
        body = answer.encode()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        settings = EndpointProfile("remote", url, MODEL, DIMENSION, "1")
        embedder = EndpointEmbedder(settings, environ={})
        try:
            with pytest.raises(EmbeddingUnavailable) as failed:
                embedder.embed_query(TEXTS[0])
        finally:
            embedder.close()
    finally:
        server.shutdown()
        server.server_close()
    assert failed.value.failure is EmbeddingFailure.MALFORMED
