"""`[Operations]`: no operations listener unless the operator names its address; one process's
`--ops-listen` in its place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mailfathom.adapters.config import ConfigurationProblems, parse_config
from mailfathom.domain.config import DeploymentConfig
from mailfathom.domain.errors import ConfigurationError
from mailfathom.domain.operations import OperationsConfig
from mailfathom.entrypoints.cli.operations_option import with_ops_listen


def parse(document: dict[str, Any]) -> DeploymentConfig:
    return parse_config(document, base_dir=Path("/srv/mailfathom"))


def test_no_operations_listener_without_the_section_or_its_address() -> None:
    assert not parse({}).operations.listening
    assert not parse({"Operations": {}}).operations.listening


def test_the_listener_is_where_the_section_says_and_each_process_on_a_port_of_its_own() -> None:
    operations = parse({"Operations": {"Listen": "[::1]:9464"}}).operations
    assert operations == OperationsConfig(host="::1", port=9464)
    assert [operations.port_of(index) for index in range(3)] == [9464, 9465, 9466]


@pytest.mark.parametrize(
    ("table", "key"),
    [
        ({"Listen": "127.0.0.1"}, "Operations.Listen"),
        ({"Listen": "127.0.0.1:0"}, "Operations.Listen"),
        ({"Listen": "127.0.0.1:70000"}, "Operations.Listen"),
        ({"Metrics": True}, "Operations.Metrics"),
    ],
)
def test_a_broken_value_or_an_unknown_key_is_reported(table: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigurationProblems) as raised:
        parse({"Operations": table})
    assert any(problem.startswith(key) for problem in raised.value.problems)


def test_ops_listen_replaces_the_configured_address_for_one_process() -> None:
    config = parse({"Operations": {"Listen": "127.0.0.1:9464"}})
    assert with_ops_listen(config, None) is config
    moved = with_ops_listen(config, "[::1]:9500")
    assert moved.operations == OperationsConfig(host="::1", port=9500)
    assert with_ops_listen(parse({}), "0.0.0.0:9464").operations.listening


@pytest.mark.parametrize("written", ["9464", "127.0.0.1:", "127.0.0.1:0", ":9464", "h:99999"])
def test_a_broken_ops_listen_is_refused_with_the_port_code(written: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        with_ops_listen(parse({}), written)
    assert raised.value.code == 11008
