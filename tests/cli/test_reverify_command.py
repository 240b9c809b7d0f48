"""`mfctl mailbox reverify` as an operator runs it."""

from __future__ import annotations

from pathlib import Path

from mailfathom.domain.codes import CommandCode

from .operator_cli import local_config, one_error_line, run_to_exit

_BOTH_OFF = "\n[SenderVerification]\nEnabled = false\n\n[MachineAuthorship]\nEnabled = false\n"


def test_reverify_with_both_readings_switched_off_fails_with_its_code(tmp_path: Path) -> None:
    config = local_config(tmp_path, store=_BOTH_OFF)
    result = run_to_exit(tmp_path, "mailbox", "reverify", "--config", str(config))
    one_error_line(result, int(CommandCode.NO_TRUST_PORTS))
    assert "no sender verifier and no authorship assessor" in result.stderr


def test_reverify_runs_with_the_readings_a_default_deployment_wires(tmp_path: Path) -> None:
    config = local_config(tmp_path)
    result = run_to_exit(tmp_path, "mailbox", "reverify", "--config", str(config))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
