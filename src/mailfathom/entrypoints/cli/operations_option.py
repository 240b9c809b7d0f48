"""`--ops-listen`: the operations listener's address for this one process, over
`[Operations] Listen`, which every process of a deployment reads alike. Two processes on one
machine (a serve and a worker, or workers of two roles) each need a port of their own; a
systemd template unit gives each instance its own through `MAILFATHOM_OPS_LISTEN`."""

from __future__ import annotations

import dataclasses
from typing import Annotated

import typer

from mailfathom.domain.codes import CommandCode
from mailfathom.domain.config import DeploymentConfig
from mailfathom.domain.errors import ConfigurationError
from mailfathom.domain.operations import OperationsConfig

OpsListenOption = Annotated[
    str | None,
    typer.Option(
        "--ops-listen",
        envvar="MAILFATHOM_OPS_LISTEN",
        help="host:port to answer /livez, /readyz and /metrics on for this process, instead "
        "of Operations.Listen's.",
    ),
]


def with_ops_listen(config: DeploymentConfig, listen: str | None) -> DeploymentConfig:
    """`config` with its operations listener at `listen` ("host:port"; IPv6 hosts in
    brackets), unchanged when `listen` is None. A port out of range is error 11008."""
    if listen is None:
        return config
    host, sep, port = listen.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigurationError(
            '--ops-listen must be "host:port" with a port from 1 to 65535.',
            code=int(CommandCode.LISTEN_PORT_OUT_OF_RANGE),
        )
    return dataclasses.replace(config, operations=OperationsConfig(host=host, port=int(port)))
