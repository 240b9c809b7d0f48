"""`mfctl answering`: the operator's view of answering, read from the store as a question
left it, without reaching the endpoint."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from cli.operator_cli import local_config, run_to_exit
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.sql.answering import SqlAnsweringLedger, SqlChatHealth
from mailfathom.app.answering.ask_mail import period_start
from mailfathom.bootstrap import Services
from mailfathom.domain.answering import ChatFailure

ANSWERING = """
[Answering]
Url = "http://127.0.0.1:1/v1"
Model = "local-model"
PeriodHours = 24
"""


def test_the_command_shows_the_model_the_health_record_and_the_periods_spending(
    tmp_path: Path,
) -> None:
    config_path = local_config(tmp_path)
    config_path.write_text(config_path.read_text("utf-8") + ANSWERING, "utf-8")
    config = load_config(config_path)
    with Services.open(config) as services:
        start = period_start(datetime.now(UTC), config.answering.period)
        ledger = SqlAnsweringLedger(services.engine)
        ledger.admit("agent", start, max_runs=5, max_tokens=10**6)
        ledger.spend("agent", start, 1234)
        SqlChatHealth(services.engine).failed(ChatFailure.REFUSED, datetime(2026, 5, 1, tzinfo=UTC))
    shown = run_to_exit(tmp_path, "answering", "--config", str(config_path))
    assert shown.returncode == 0, shown.stderr
    assert "chat model: local-model" in shown.stdout
    assert "chat health: refused (11030) since 2026-05-01T00:00:00+00:00" in shown.stdout
    assert "agent" in shown.stdout
    assert "1234" in shown.stdout


def test_without_an_endpoint_the_command_says_no_question_is_answered(tmp_path: Path) -> None:
    config_path = local_config(tmp_path)
    shown = run_to_exit(tmp_path, "answering", "--config", str(config_path))
    assert shown.returncode == 0, shown.stderr
    assert "chat endpoint: none declared ([Answering] Url)" in shown.stdout
    assert "chat health: ok" in shown.stdout
