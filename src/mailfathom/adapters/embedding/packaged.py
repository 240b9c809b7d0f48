"""Models whose weights ship inside an installed package, behind the `Embedder` port.

Each model is read from its own package's directory and nothing else: no model library is
let near the network (wordllama is told where its files are and that downloads are off;
the other two never download). Before a model is loaded, the SHA-256 of its weights file is
compared with the one the profile names, so a package upgraded or altered under a running
deployment stops the next start (11024) instead of quietly filling the store with vectors of
another space. The identity of the space is the model, the package's version and that
checksum.

An engine computes raw vectors; this module batches the texts, holds one lock around the
engine (the engines use both cores of a call themselves, and not every one of them is known
to be safe to enter twice), checks the shape of what comes back and scales every row to
unit length.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, Protocol

import numpy as np
import numpy.typing as npt
import structlog

from mailfathom.app.shared.embedding_ports import EmbeddingUnavailable
from mailfathom.domain.codes import CommandCode
from mailfathom.domain.embedding import EmbeddingFailure, ProfileIdentity
from mailfathom.domain.embedding_profiles import PackageModel, PackageProfile
from mailfathom.domain.errors import EmbeddingModelUnusable

log = structlog.get_logger("mailfathom.embedding")

Matrix = npt.NDArray[np.float32]


class Engine(Protocol):
    """A loaded model: one row of raw floats per text, in order."""

    def passages(self, texts: list[str]) -> Matrix: ...

    def queries(self, texts: list[str]) -> Matrix: ...


@dataclass(frozen=True, slots=True)
class PackageFile:
    """A file inside an installed distribution, named by its path in the distribution."""

    distribution: str
    path: str


@dataclass(frozen=True, slots=True)
class PackagedModel:
    """What one packaged model needs: its weights, the other files it reads (each with the
    SHA-256 this project was built against), its dimension, and how to load it from the
    located files (`load` gets the weights path first, then the others in order)."""

    model: PackageModel
    weights: PackageFile
    dimension: int
    load: Callable[[Path, Sequence[Path]], Engine]
    pinned: tuple[tuple[PackageFile, str], ...] = ()


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def locate(file: PackageFile, profile: PackageProfile) -> tuple[Path, str]:
    """The installed path of `file` and its distribution's version; 11025 when the
    distribution or the file is not there."""
    try:
        distribution = importlib.metadata.distribution(file.distribution)
    except importlib.metadata.PackageNotFoundError:
        raise _not_installed(profile, file, "is not installed") from None
    path = Path(str(distribution.locate_file(file.path)))
    if not path.is_file():
        raise _not_installed(profile, file, "is installed without a file its model needs")
    return path, distribution.version


def _not_installed(profile: PackageProfile, file: PackageFile, what: str) -> EmbeddingModelUnusable:
    return EmbeddingModelUnusable(
        f"Embeddings profile '{profile.name}': the package {file.distribution} {what} "
        f"(install MailFathom with the {profile.model.value} extra).",
        code=int(CommandCode.EMBEDDING_MODEL_NOT_INSTALLED),
    )


def open_packaged(profile: PackageProfile, spec: PackagedModel) -> PackagedEmbedder:
    """Verify and load the profile's model. Raises `EmbeddingModelUnusable`: 11024 when
    the weights are not the ones the profile names, 11025 when a package or file is missing
    (or a pinned file is not the one expected), 11026 when the model does not load."""
    weights, version = locate(spec.weights, profile)
    if sha256_of(weights) != profile.weights_sha256:
        raise EmbeddingModelUnusable(
            f"Embeddings profile '{profile.name}': the weights of {spec.weights.distribution} "
            f"{version} are not the ones WeightsSha256 names; nothing was started.",
            code=int(CommandCode.EMBEDDING_WEIGHTS_MISMATCH),
        )
    others: list[Path] = []
    for file, expected in spec.pinned:
        path, _ = locate(file, profile)
        if sha256_of(path) != expected:
            raise _not_installed(profile, file, "is installed with a file other than expected")
        others.append(path)
    try:
        engine = spec.load(weights, others)
    except ImportError:
        raise _not_installed(profile, spec.weights, "is installed without its libraries") from None
    except Exception:
        log.exception("embedding.load_failed", profile=profile.name, model=profile.model.value)
        raise EmbeddingModelUnusable(
            f"Embeddings profile '{profile.name}': the model of {spec.weights.distribution} "
            f"{version} cannot be loaded; nothing was started.",
            code=int(CommandCode.EMBEDDING_MODEL_NOT_LOADED),
        ) from None
    identity = ProfileIdentity(
        model=profile.model.value,
        version=f"{version}+sha256:{profile.weights_sha256}",
        dimension=spec.dimension,
    )
    return PackagedEmbedder(profile, engine, identity)


class PackagedEmbedder:
    """The `Embedder` of a packaged model: thread-safe, batching by the profile's
    `BatchSize`, every vector of unit length."""

    def __init__(self, profile: PackageProfile, engine: Engine, identity: ProfileIdentity) -> None:
        self._profile = profile
        self._engine: Engine | None = engine
        self._identity = identity
        self._lock = threading.Lock()

    @property
    def identity(self) -> ProfileIdentity:
        return self._identity

    def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        # Texts of like length go into one batch: a transformer pads every text of a batch
        # to its longest, and the padding costs as much as text would.
        order = sorted(range(len(texts)), key=lambda index: len(texts[index]))
        found: list[list[float]] = [[] for _ in texts]
        size = self._profile.batch_size
        for start in range(0, len(order), size):
            chosen = order[start : start + size]
            vectors = self._run([texts[index] for index in chosen], query=False)
            for index, vector in zip(chosen, vectors, strict=True):
                found[index] = vector
        return found

    def embed_query(self, text: str) -> list[float]:
        return self._run([text], query=True)[0]

    def close(self) -> None:
        """Let go of the model (its weights are freed once no call holds it); embedding
        after this raises `RuntimeError`."""
        with self._lock:
            self._engine = None

    def _run(self, texts: list[str], *, query: bool) -> list[list[float]]:
        with self._lock:
            engine = self._engine
            if engine is None:
                raise RuntimeError("the embedding model was closed")
            failed = False
            try:
                rows = engine.queries(texts) if query else engine.passages(texts)
            except Exception:
                # The engine's error may quote what it was given: it is neither kept nor
                # chained, only that it failed.
                failed = True
        if failed:
            self._unavailable(EmbeddingFailure.MALFORMED, "engine_failed")
        return unit_rows(rows, len(texts), self._identity.dimension, self._unavailable)

    def _unavailable(self, failure: EmbeddingFailure, reason: str) -> NoReturn:
        log.warning(
            "embedding.unavailable",
            code=int(failure.code),
            failure=failure.value,
            reason=reason,
            profile=self._profile.name,
            model=self._profile.model.value,
        )
        raise EmbeddingUnavailable(failure)


def unit_rows(
    rows: object,
    count: int,
    dimension: int,
    unavailable: Callable[[EmbeddingFailure, str], NoReturn],
) -> list[list[float]]:
    """`rows` as `count` lists of `dimension` floats scaled to unit length; anything else
    (another shape, a value that is not finite, a row of zeros) is `MALFORMED`."""
    matrix = np.asarray(rows, dtype=np.float64)
    if matrix.shape != (count, dimension):
        unavailable(EmbeddingFailure.MALFORMED, "shape")
    if not np.isfinite(matrix).all():
        unavailable(EmbeddingFailure.MALFORMED, "not_finite")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if (norms == 0).any():
        unavailable(EmbeddingFailure.MALFORMED, "zero_vector")
    scaled: list[list[float]] = (matrix / norms).tolist()
    return scaled
