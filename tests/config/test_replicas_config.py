"""`[McpEndpoint] Replicas` and `StateSecret`: several replicas are refused without a secret
every one of them reads or without PostgreSQL, and the secret seals what clients carry under
keys every replica derives alike, one per purpose."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from config.test_config_loading import imap_account, parse, problems_of
from mailfathom.adapters.config.secrets import read_secret
from mailfathom.adapters.state_keys import CURSORS, REQUEST_STATE, derived_key
from mailfathom.bootstrap import Services
from mailfathom.domain.errors import ConfigurationError

POSTGRES = {"DataDir": "/var/lib/mailfathom", "DatabaseUrl": "postgresql://db.example.org/mf"}
SECRET = {"Env": "MF_REPLICAS_CONFIG_SECRET"}


def document(store: dict[str, Any] | None = None, **endpoint: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"Accounts": [imap_account()], "McpEndpoint": endpoint}
    if store is not None:
        found["Store"] = store
    return found


def test_one_process_needs_neither() -> None:
    config = parse(document())
    assert (config.mcp.replicas, config.mcp.state_secret) == (False, None)


def test_replicas_on_postgresql_with_a_secret_are_read() -> None:
    config = parse(document(POSTGRES, Replicas=True, StateSecret=SECRET))
    assert config.mcp.replicas
    assert config.mcp.state_secret is not None
    assert config.mcp.state_secret.env == SECRET["Env"]


@pytest.mark.parametrize(
    ("store", "endpoint", "rule"),
    [
        (POSTGRES, {"Replicas": True}, "StateSecret"),
        (None, {"Replicas": True, "StateSecret": SECRET}, "PostgreSQL"),
        (
            {"DataDir": "/var/lib/mailfathom", "DatabaseUrl": "sqlite:////srv/mf.db"},
            {"Replicas": True, "StateSecret": SECRET},
            "PostgreSQL",
        ),
        (POSTGRES, {"Replicas": True, "StateSecret": "written-in-the-file"}, "not accepted"),
    ],
)
def test_replicas_without_a_shared_secret_or_postgresql_are_refused(
    store: dict[str, Any] | None, endpoint: dict[str, Any], rule: str
) -> None:
    problems = problems_of(document(store, **endpoint))
    assert any(p.startswith("McpEndpoint.") and rule in p for p in problems), problems
    assert not any("written-in-the-file" in p for p in problems)


def test_keys_are_derived_alike_everywhere_and_apart_per_purpose() -> None:
    secret = "a" * 64
    assert derived_key(secret, CURSORS) == derived_key(secret, CURSORS)
    assert derived_key(secret, CURSORS) != derived_key(secret, REQUEST_STATE)
    assert derived_key(secret, CURSORS) != derived_key("b" * 64, CURSORS)
    assert len(derived_key(secret, REQUEST_STATE)) == 32


def test_a_short_secret_is_refused_without_repeating_it() -> None:
    with pytest.raises(ConfigurationError) as caught:
        derived_key("short-secret", CURSORS)
    assert "StateSecret" in str(caught.value)
    assert "short-secret" not in str(caught.value)


def test_cursors_of_two_data_directories_open_alike_under_one_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET["Env"], "s" * 64)
    signers = []
    for name in ("a", "b"):
        config = parse(document({"DataDir": str(tmp_path / name)}, StateSecret=SECRET))
        assert config.mcp.state_secret is not None
        assert read_secret(config.mcp.state_secret) == "s" * 64
        with Services.open(config) as services:
            signers.append(services._signer())
            assert services.request_state_key() == derived_key("s" * 64, REQUEST_STATE)
    assert signers[1].open(signers[0].sign(b"page two")) == b"page two"
