"""Which permissions a deployment publishes (the scopes its OAuth metadata names): asking is
among them only where the deployment, as configured, answers questions at all. The embedding
state is the process's own `QueryPlacement`, over an in-process embedder."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes.embedder import FakeEmbedder
from mailfathom.app.shared.query_placement import QueryPlacement
from mailfathom.bootstrap import Services
from mailfathom.domain.access import Permission
from mailfathom.domain.answering import AnsweringConfig, ChatEndpoint
from mailfathom.domain.config import DeploymentConfig, StoreConfig
from mailfathom.domain.embedding import EmbeddingFailure, SemanticState
from mailfathom.entrypoints.mcp.assemble import build_server

ASKING = frozenset({Permission.ASK, Permission.MAIL_READ})


def _place_with(services: Services, state: SemanticState) -> None:
    """Make the process's placement be in `state`: no embedder (inactive), one whose
    provider failed (degraded), or one whose generation is filled (available)."""
    if state is SemanticState.INACTIVE:
        return
    embedder = FakeEmbedder()
    services.embedder = embedder
    services.placement = QueryPlacement(embedder, services.fill_states())
    embedding = services.embedding()
    assert embedding is not None
    assert embedding.run().state.filled
    if state is SemanticState.DEGRADED:
        embedder.fail_next(EmbeddingFailure.REFUSED)
        services.query_placement().place("anything")
    assert services.query_placement().state() is state


@pytest.mark.parametrize(
    ("declared", "state", "published"),
    [
        (False, SemanticState.AVAILABLE, False),
        (True, SemanticState.INACTIVE, False),
        (True, SemanticState.DEGRADED, True),
        (True, SemanticState.AVAILABLE, True),
    ],
)
def test_asking_is_published_only_by_a_deployment_that_answers_questions(
    tmp_path: Path, declared: bool, state: SemanticState, published: bool
) -> None:
    endpoint = ChatEndpoint("http://127.0.0.1:1/v1", "m") if declared else None
    config = DeploymentConfig(
        store=StoreConfig(data_dir=tmp_path / "data"),
        accounts=(),
        answering=AnsweringConfig(endpoint=endpoint),
    )
    with Services.open(config) as services:
        _place_with(services, state)
        server = build_server(services)
        assert (ASKING in server.published_permissions()) is published
        assert "ask_mail" in server.registry.specs
