"""`mailfathom console first-passkey` as an operator runs it: the code it prints lets the
owner's first passkey be made (and only with it), and once the owner has a credential it
prints none and says why with its code."""

from __future__ import annotations

import re
from pathlib import Path

from cli.operator_cli import Finished, local_config, one_error_line, run_to_exit
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.console.passkey_ports import Ceremony
from mailfathom.app.console.passkeys import Enrolled, PasskeyRefused, Step
from mailfathom.bootstrap import Services
from mailfathom.domain.codes import CommandCode

from .soft_authenticator import SoftAuthenticator

ORIGIN = "http://localhost:8626"


def _run(root: Path, config: Path) -> Finished:
    return run_to_exit(root, "console", "first-passkey", "--config", str(config))


def _config(root: Path) -> Path:
    config = local_config(root, listen="127.0.0.1:8625")
    with config.open("a", encoding="utf-8") as file:
        file.write('\n[Console]\nEnabled = true\nListen = "127.0.0.1:8626"\n')
    return config


def _enrol(services: Services, code: str) -> Enrolled | PasskeyRefused:
    passkeys = services.console_passkeys()
    visit = services.console_access().visit()
    step = Step(visit.token, visit.session.csrf_secret, ORIGIN, loopback=True)
    options = passkeys.options(step, Ceremony.REGISTER)
    if isinstance(options, PasskeyRefused):
        return options
    return passkeys.enrol(step, SoftAuthenticator().create(options, ORIGIN), "", "Key", code)


def test_the_printed_code_makes_the_first_passkey_and_then_no_code_is_printed(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path)
    with Services.open(load_config(config)) as services:
        assert _enrol(services, "") is PasskeyRefused.NOT_OFFERED
    printed = _run(tmp_path, config)
    assert printed.returncode == 0, printed.stderr
    (code,) = re.findall(r"One-time code: (\S+)", printed.stdout)
    with Services.open(load_config(config)) as services:
        assert _enrol(services, code[::-1]) is PasskeyRefused.NOT_ACCEPTED
        assert isinstance(_enrol(services, code), Enrolled)
    refused = _run(tmp_path, config)
    one_error_line(refused, CommandCode.CONSOLE_FIRST_PASSKEY_CLOSED)
    assert "One-time code" not in refused.stdout
