"""`[Console]`: off and on loopback unless the operator writes otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mailfathom.adapters.config import ConfigurationProblems, parse_config
from mailfathom.domain.config import DeploymentConfig
from mailfathom.domain.console import ConsoleConfig


def parse(document: dict[str, Any]) -> DeploymentConfig:
    return parse_config(document, base_dir=Path("/srv/mailfathom"))


def test_the_console_is_off_and_on_loopback_when_the_section_is_absent() -> None:
    assert parse({}).console == ConsoleConfig(enabled=False, host="127.0.0.1", port=8626)


def test_enabled_it_listens_where_the_section_says() -> None:
    config = parse({"Console": {"Enabled": True, "Listen": "[::1]:9000"}})
    assert config.console == ConsoleConfig(enabled=True, host="::1", port=9000)


@pytest.mark.parametrize(
    ("table", "key"),
    [
        ({"Listen": "127.0.0.1"}, "Console.Listen"),
        ({"Listen": "127.0.0.1:70000"}, "Console.Listen"),
        ({"Enabled": "yes"}, "Console.Enabled"),
        ({"Password": "x"}, "Console.Password"),
    ],
)
def test_a_broken_value_or_an_unknown_key_is_reported(table: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigurationProblems) as raised:
        parse({"Console": table})
    assert any(problem.startswith(key) for problem in raised.value.problems)


def test_passkeys_are_made_for_localhost_at_the_console_port_by_default() -> None:
    console = parse({"Console": {"Enabled": True, "Listen": "127.0.0.1:9000"}}).console
    assert console.passkey_name == "localhost"
    assert console.origins() == ("http://localhost:9000",)


def test_a_passkey_name_and_its_origins_are_taken_as_written() -> None:
    console = parse(
        {
            "Console": {
                "PasskeyName": "example.org",
                "PasskeyOrigins": ["https://console.example.org", "https://example.org:8443"],
            }
        }
    ).console
    assert console.passkey_name == "example.org"
    assert console.origins() == ("https://console.example.org", "https://example.org:8443")
    assert parse({"Console": {"PasskeyName": "example.org"}}).console.origins() == (
        "https://example.org",
    )


@pytest.mark.parametrize(
    ("table", "key"),
    [
        ({"PasskeyName": "127.0.0.1"}, "Console.PasskeyName"),
        ({"PasskeyName": "[::1]"}, "Console.PasskeyName"),
        ({"PasskeyName": "Example.org"}, "Console.PasskeyName"),
        ({"PasskeyName": "exa mple.org"}, "Console.PasskeyName"),
        ({"PasskeyOrigins": ["http://example.org"]}, "Console.PasskeyOrigins[0]"),
        ({"PasskeyOrigins": ["http://127.0.0.1:8626"]}, "Console.PasskeyOrigins[0]"),
        (
            {"PasskeyOrigins": ["http://localhost:1", "https://evil.test"]},
            "Console.PasskeyOrigins[1]",
        ),
        ({"PasskeyOrigins": ["https://notlocalhost"]}, "Console.PasskeyOrigins[0]"),
        ({"PasskeyOrigins": ["http://localhost:8626/console"]}, "Console.PasskeyOrigins[0]"),
        ({"PasskeyOrigins": "http://localhost:8626"}, "Console.PasskeyOrigins"),
    ],
)
def test_a_passkey_name_or_origin_browsers_would_refuse_is_reported(
    table: dict[str, Any], key: str
) -> None:
    with pytest.raises(ConfigurationProblems) as raised:
        parse({"Console": table})
    assert any(problem.startswith(key) for problem in raised.value.problems), raised.value.problems


def test_a_public_origin_names_the_passkeys_too_unless_they_are_written() -> None:
    console = parse({"Console": {"PublicOrigin": "https://console.example.org"}}).console
    assert console.public_origin == "https://console.example.org"
    assert console.passkey_name == "console.example.org"
    assert console.origins() == ("https://console.example.org",)
    with_port = parse({"Console": {"PublicOrigin": "https://console.example.org:8443"}})
    assert with_port.console.origins() == ("https://console.example.org:8443",)
    default_port = parse({"Console": {"PublicOrigin": "https://console.example.org:443"}})
    assert default_port.console.public_origin == "https://console.example.org"
    written = parse(
        {"Console": {"PublicOrigin": "https://console.example.org", "PasskeyName": "example.org"}}
    ).console
    assert written.passkey_name == "example.org"
    assert written.origins() == ("https://console.example.org",)
    assert parse({}).console.public_origin is None


@pytest.mark.parametrize(
    "origin",
    [
        "http://console.example.org",
        "https://127.0.0.1",
        "https://[::1]:8443",
        "https://console.example.org/",
        "https://console.example.org/console",
        "https://console.example.org?x=1",
        "https://user@console.example.org",
        "https://Console.example.org",
        "https://",
        "console.example.org",
    ],
)
def test_a_public_origin_must_be_https_and_a_name_alone(origin: str) -> None:
    with pytest.raises(ConfigurationProblems) as raised:
        parse({"Console": {"PublicOrigin": origin}})
    assert any(p.startswith("Console.PublicOrigin") for p in raised.value.problems)


def test_a_public_origin_outside_the_written_passkey_name_is_reported() -> None:
    with pytest.raises(ConfigurationProblems) as raised:
        parse({"Console": {"PublicOrigin": "https://console.example.net", "PasskeyName": "x.org"}})
    assert any(p.startswith("Console.PublicOrigin") for p in raised.value.problems)
