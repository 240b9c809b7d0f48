"""`[MachineAuthorship]`: on unless switched off, and off means no assessor at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mailfathom.adapters.config import ConfigurationProblems, load_config, parse_config
from mailfathom.domain.authorship_assessor import (
    MachineAuthorshipAssessor,
    build_authorship_assessor,
)
from mailfathom.domain.config import DeploymentConfig

DOCS = Path(__file__).resolve().parents[2] / "docs"


def parse(document: dict[str, Any]) -> DeploymentConfig:
    return parse_config(document, base_dir=Path("/srv/mailfathom"))


def test_the_reading_is_on_when_the_section_is_absent() -> None:
    config = parse({})
    assert config.machine_authorship.enabled is True
    assert isinstance(
        build_authorship_assessor(config.machine_authorship), MachineAuthorshipAssessor
    )


def test_switched_off_there_is_no_assessor() -> None:
    config = parse({"MachineAuthorship": {"Enabled": False}})
    assert config.machine_authorship.enabled is False
    assert build_authorship_assessor(config.machine_authorship) is None


def test_an_empty_section_keeps_the_default() -> None:
    assert parse({"MachineAuthorship": {}}).machine_authorship.enabled is True


def test_a_wrong_type_and_an_unknown_key_are_refused() -> None:
    with pytest.raises(ConfigurationProblems) as caught:
        parse({"MachineAuthorship": {"Enabled": "no", "Weights": 1}})
    problems = caught.value.problems
    assert "MachineAuthorship.Enabled: must be true or false" in problems
    assert any(p.startswith("MachineAuthorship.Weights: unknown key") for p in problems)


def test_the_example_configuration_states_the_section() -> None:
    text = (DOCS / "mailfathom.example.toml").read_text("utf-8")
    assert "[MachineAuthorship]" in text
    assert load_config(DOCS / "mailfathom.example.toml").machine_authorship.enabled is True
