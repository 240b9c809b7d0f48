"""Finding a generic authorization server's endpoints from its issuer (RFC 8414, with
OpenID Connect discovery as the fallback), and refusing metadata that cannot be trusted."""

from __future__ import annotations

import pytest

from mailfathom.adapters.oauth.discovery import discover
from mailfathom.domain.errors import GrantFailed
from servers._common import free_port

from .flood_host import FLOOD_OCTETS, flood_host
from .metadata_host import metadata, metadata_host

RFC8414 = "/.well-known/oauth-authorization-server"
OPENID = "/.well-known/openid-configuration"


def _code(issuer: str) -> int:
    with pytest.raises(GrantFailed) as refused:
        discover(issuer)
    return refused.value.code


def test_an_issuer_with_a_path_is_asked_at_the_inserted_well_known_uri() -> None:
    with metadata_host() as host:
        issuer = f"{host.base}/tenants/mail"
        device = f"{issuer}/device"
        host.publish(
            f"{RFC8414}/tenants/mail",
            metadata(issuer, device_authorization_endpoint=device, revocation_endpoint=None),
        )
        found = discover(issuer)
    assert found.issuer == issuer
    assert found.token_endpoint == f"{issuer}/token"
    assert found.authorization_endpoint == f"{issuer}/authorize"
    assert found.device_authorization_endpoint == device
    assert found.revocation_endpoint is None
    assert host.asked == [f"{RFC8414}/tenants/mail"]


def test_openid_connect_discovery_is_read_where_rfc_8414_metadata_is_absent() -> None:
    with metadata_host() as host:
        issuer = f"{host.base}/realm"
        host.publish(f"/realm{OPENID}", metadata(issuer))
        found = discover(issuer)
    assert found.token_endpoint == f"{issuer}/token"
    assert found.device_authorization_endpoint is None
    assert host.asked == [f"{RFC8414}/realm", f"/realm{OPENID}"]


def test_metadata_naming_another_issuer_is_refused() -> None:
    with metadata_host() as host:
        host.publish(RFC8414, metadata(f"{host.base}/elsewhere"))
        assert _code(host.base) == 72006


@pytest.mark.parametrize(
    "field", ["token_endpoint", "authorization_endpoint", "device_authorization_endpoint"]
)
def test_an_endpoint_reached_without_tls_off_loopback_is_refused(field: str) -> None:
    with metadata_host() as host:
        host.publish(RFC8414, metadata(host.base, **{field: "http://mail.example.org/x"}))
        assert _code(host.base) == 72006


@pytest.mark.parametrize(
    "document",
    [b"<html>not json</html>", [1, 2], {"issuer": "x"}],
    ids=["not-json", "not-an-object", "no-required-fields"],
)
def test_a_malformed_document_is_refused(document: object) -> None:
    with metadata_host() as host:
        host.publish(RFC8414, document)
        assert _code(host.base) == 72006


def test_an_issuer_publishing_nothing_is_refused() -> None:
    with metadata_host() as host:
        assert _code(host.base) == 72006
        assert host.asked == [RFC8414, OPENID]


def test_an_issuer_without_tls_off_loopback_is_refused_before_asking() -> None:
    assert _code("http://mail.example.org") == 72006


def test_an_unreachable_issuer_is_its_own_code() -> None:
    assert _code(f"http://127.0.0.1:{free_port()}") == 72007


@pytest.fixture
def insecure_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    """The variable authlib reads to let http through anywhere, set as a shell might."""
    monkeypatch.setenv("AUTHLIB_INSECURE_TRANSPORT", "1")


@pytest.mark.usefixtures("insecure_shell")
@pytest.mark.parametrize(
    "field",
    [
        "token_endpoint",
        "authorization_endpoint",
        "device_authorization_endpoint",
        "revocation_endpoint",
    ],
)
def test_http_off_loopback_is_refused_whatever_the_environment(field: str) -> None:
    with metadata_host() as host:
        host.publish(RFC8414, metadata(host.base, **{field: "http://mail.example.org/x"}))
        assert _code(host.base) == 72006


@pytest.mark.usefixtures("insecure_shell")
def test_an_issuer_without_tls_is_refused_whatever_the_environment() -> None:
    assert _code("http://mail.example.org") == 72006
    assert _code("http://127.0.0.1.example.org") == 72006


def test_a_metadata_document_past_the_bound_is_not_read_to_its_end() -> None:
    with flood_host() as flood:
        assert _code(flood.url) == 72006
        assert flood.done.wait(30)
    assert flood.sent < FLOOD_OCTETS
