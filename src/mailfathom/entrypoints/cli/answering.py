"""`mfctl answering`: whether questions can be answered, the chat role's health record, and
what each caller spent in the current period. It reaches no endpoint and shows no mail."""

from __future__ import annotations

from rich.table import Table

from mailfathom.entrypoints.cli.deployment import ConfigOption, with_services
from mailfathom.entrypoints.cli.terminal import answers


def answering(config: ConfigOption = None) -> None:
    """Show the chat endpoint's model and health, and this period's spending per caller."""
    overview = with_services(
        config, lambda services: services.answering_administration().overview()
    )
    if overview.model is None:
        answers.print(
            "chat endpoint: none declared ([Answering] Url); no question is answered",
            markup=False,
        )
    else:
        answers.print(f"chat model: {overview.model}", markup=False, highlight=False)
    if overview.health is None:
        answers.print("chat health: ok")
    else:
        failure, code, since = overview.health
        at = since.isoformat(timespec="seconds")
        answers.print(f"chat health: {failure.value} ({code}) since {at}")
    start = overview.period_start.isoformat(timespec="seconds")
    table = Table("caller", "questions", "tokens", title=f"period from {start}")
    for spend in overview.spent:
        table.add_row(spend.caller, str(spend.runs), str(spend.tokens))
    answers.print(table)
