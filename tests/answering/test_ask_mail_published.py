"""Which permissions a deployment publishes (the scopes its OAuth metadata names): asking is
among them only where the deployment, as configured, answers questions at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes.answering import FixedSemantic
from mailfathom import bootstrap
from mailfathom.bootstrap import Services
from mailfathom.domain.access import Permission
from mailfathom.domain.answering import AnsweringConfig, ChatEndpoint
from mailfathom.domain.config import DeploymentConfig, StoreConfig
from mailfathom.domain.embedding import SemanticState
from mailfathom.entrypoints.mcp.assemble import build_server

ASKING = frozenset({Permission.ASK, Permission.MAIL_READ})


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
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    declared: bool,
    state: SemanticState,
    published: bool,
) -> None:
    endpoint = ChatEndpoint("http://127.0.0.1:1/v1", "m") if declared else None
    config = DeploymentConfig(
        store=StoreConfig(data_dir=tmp_path / "data"),
        accounts=(),
        answering=AnsweringConfig(endpoint=endpoint),
    )
    monkeypatch.setattr(bootstrap, "semantic_search", lambda _: FixedSemantic(state))
    with Services.open(config) as services:
        server = build_server(services)
        assert (ASKING in server.published_permissions()) is published
        assert "ask_mail" in server.registry.specs
