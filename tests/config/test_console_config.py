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
