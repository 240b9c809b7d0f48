"""Code for tests/test_processes.py to classify: each function says in its name whether it
starts a process. Nothing here is called."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio

from servers.smtp import SmtpServer


def starts_a_command() -> None:
    subprocess.run(["true"], check=True)


def starts_by_forking() -> int:
    return os.fork()


def starts_through_a_helper() -> None:
    starts_a_command()


def starts_through_a_test_server() -> None:
    SmtpServer({}).start()


def starts_in_a_nested_function() -> None:
    def inner() -> None:
        starts_a_command()

    inner()


async def starts_an_async_process() -> None:
    await anyio.run_process(["true"])


class Launcher:
    def launch(self) -> None:
        starts_a_command()


def starts_through_a_class() -> None:
    Launcher().launch()


def starts_nothing_but_reads_the_environment() -> str:
    return os.environ.get("HOME", "") + str(Path.cwd())


def starts_nothing_but_names_a_failure() -> type[Exception]:
    return subprocess.CalledProcessError


def starts_nothing_but_calls_a_pure_helper() -> str:
    return starts_nothing_but_reads_the_environment()
