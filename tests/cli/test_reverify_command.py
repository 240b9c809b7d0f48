"""`mfctl mailbox reverify` as an operator runs it."""

from __future__ import annotations

from pathlib import Path

from mailfathom.domain.codes import CommandCode

from .operator_cli import local_config, one_error_line, run_to_exit


def test_reverify_with_nothing_wired_to_verify_with_fails_with_its_code(tmp_path: Path) -> None:
    config = local_config(tmp_path)
    result = run_to_exit(tmp_path, "mailbox", "reverify", "--config", str(config))
    one_error_line(result, int(CommandCode.NO_TRUST_PORTS))
    assert "no sender verifier and no authorship assessor" in result.stderr
