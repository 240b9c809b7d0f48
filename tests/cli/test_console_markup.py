"""What the commands print is printed as written: a folder name, a contact's name or an error
text holding rich's markup (`[/]`, `[link=...]`, `[bold]`) is neither taken as markup (a
closing tag with nothing to close ends the command with a traceback; a link tag puts a
clickable address on the operator's terminal) nor coloured by guesswork."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from rich.console import Console
from rich.table import Table

from mailfathom.entrypoints.cli import alerts, init_command, terminal

MARKED = "Eve [/] [bold]x[/bold] [link=https://example.invalid]here[/link] 42"

CONSOLES = {
    "answers": terminal.answers,
    "status": terminal.status,
    "status_err": terminal.status_err,
    "errors": terminal.errors,
    "alerts": alerts.console,
    "alerts_err": alerts.err_console,
    "init": init_command.console,
    "init_err": init_command.err_console,
}


@pytest.fixture(params=sorted(CONSOLES))
def captured(request: pytest.FixtureRequest) -> Iterator[tuple[Console, io.StringIO]]:
    console = CONSOLES[request.param]
    sink = io.StringIO()
    saved = console.file
    console.file = sink
    try:
        yield console, sink
    finally:
        console.file = saved


def test_a_line_holding_markup_is_printed_as_written(captured: tuple[Console, io.StringIO]) -> None:
    console, sink = captured
    console.print(MARKED, soft_wrap=True)
    assert sink.getvalue() == MARKED + "\n"


def test_a_table_cell_holding_markup_is_printed_as_written(
    captured: tuple[Console, io.StringIO],
) -> None:
    console, sink = captured
    table = Table("name")
    table.add_row(MARKED)
    console.print(table, soft_wrap=True)
    assert MARKED in sink.getvalue()
    assert "\x1b" not in sink.getvalue()


def test_a_table_printed_for_a_script_holds_markup_as_written() -> None:
    sink = io.StringIO()
    saved = terminal.answers.file
    terminal.answers.file = sink
    try:
        table = Table("name")
        table.add_row(MARKED)
        terminal.print_uncut(table)
    finally:
        terminal.answers.file = saved
    assert MARKED in sink.getvalue()
