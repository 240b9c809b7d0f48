"""The consoles every command writes to.

- `answers`: what a command was asked for (a table, a count, a record); always printed.
- `status`: banners, start lines, progress bars and what a command is doing, on standard
  output; silenced by `--quiet`.
- `status_err`: the same kind of line on standard error (where `serve --stdio` and the log
  file's path speak, so standard output stays the protocol's); silenced by `--quiet`.
- `errors`: why a command failed, on standard error; never silenced.

None of them reads rich's markup or highlights: what they print holds names and texts from
mail servers, mail and configuration, and `[/]` or `[link=...]` there must stay text (a
closing tag with nothing to close would end the command with a traceback; a link would put
an address the operator never wrote on the terminal).
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

answers = Console(markup=False, highlight=False)
status = Console(markup=False, highlight=False)
status_err = Console(stderr=True, markup=False, highlight=False)
errors = Console(stderr=True, markup=False, highlight=False)


def set_quiet(quiet: bool) -> None:
    status.quiet = quiet
    status_err.quiet = quiet


def say_error(text: str) -> None:
    errors.print(text, markup=False, highlight=False, soft_wrap=True)


# The width a table printed for a script is laid out in: wide enough that no cell is cut.
UNCUT_WIDTH = 400


def print_uncut(table: Table) -> None:
    """A table on the answers stream; read by a script (not a terminal), it is laid out
    without cutting any cell to an 80-column page."""
    if answers.is_terminal:
        answers.print(table)
        return
    Console(
        file=answers.file, width=UNCUT_WIDTH, no_color=True, markup=False, highlight=False
    ).print(table)
