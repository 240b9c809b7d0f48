"""The console as an operator runs it: `mailfathom console set-password` reads the password
from standard input, and `mailfathom serve` with `[Console]` enabled serves the console on its
own listener beside the MCP endpoint, where the owner signs in and out over real HTTP."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx2
import lxml.html

import log_audit
from cli.operator_cli import Finished, command, local_config, one_error_line, run_to_exit
from mailfathom.domain.codes import CommandCode
from mcp_tests.deployment import _free_port, _wait_for_port

PASSWORD = "a long owner password, typed once"


def _set_password(root: Path, config: Path, text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command("console", "set-password", "--config", str(config)),
        cwd=root,
        input=text,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _console_config(root: Path, mcp_port: int, console_port: int) -> Path:
    config = local_config(root, listen=f"127.0.0.1:{mcp_port}")
    with config.open("a", encoding="utf-8") as file:
        file.write(f'\n[Console]\nEnabled = true\nListen = "127.0.0.1:{console_port}"\n')
    return config


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def test_a_password_set_from_stdin_signs_the_owner_in_to_the_served_console(
    tmp_path: Path,
) -> None:
    log_audit.register(PASSWORD)
    mcp_port, console_port = _free_port(), _free_port()
    config = _console_config(tmp_path, mcp_port, console_port)
    set_by = _set_password(tmp_path, config, PASSWORD + "\n")
    assert set_by.returncode == 0, set_by.stderr
    assert PASSWORD not in set_by.stdout + set_by.stderr

    out = tmp_path / "serve.out"
    with out.open("wb") as sink:
        process = subprocess.Popen(
            command("serve", "--config", str(config)),
            cwd=tmp_path,
            stdout=sink,
            stderr=sink,
            stdin=subprocess.DEVNULL,
        )
    origin = f"http://127.0.0.1:{console_port}"
    try:
        _wait_for_port(mcp_port, process)
        _wait_for_port(console_port, process)
        with httpx2.Client(base_url=origin, timeout=30) as client:
            form = client.get("/login")
            assert form.status_code == 200
            (csrf,) = lxml.html.fromstring(form.text).xpath('//input[@name="csrf"]/@value')
            wrong = client.post(
                "/login",
                data={"csrf": csrf, "password": "not the owner password"},
                headers={"Origin": origin},
            )
            assert wrong.status_code == 403
            signed_in = client.post(
                "/login",
                data={"csrf": csrf, "password": PASSWORD},
                headers={"Origin": origin},
            )
            assert signed_in.status_code == 303
            log_audit.register(csrf, client.cookies.get("mf_console"))
            page = client.get("/")
            assert page.status_code == 200
            tree = lxml.html.fromstring(page.text)
            assert tree.xpath("//main/h1/text()") == ["Overview"]
            (logout_csrf,) = tree.xpath('//input[@name="csrf"]/@value')
            out_answer = client.post(
                "/logout", data={"csrf": logout_csrf}, headers={"Origin": origin}
            )
            assert out_answer.status_code == 303
            assert client.get("/").status_code == 303
    finally:
        _stop(process)
    said = out.read_text("utf-8")
    assert f"Console: at {origin}/" in said
    assert PASSWORD not in said
    assert process.returncode == 0, said


def test_set_password_refuses_a_short_or_missing_password_with_a_code(tmp_path: Path) -> None:
    config = local_config(tmp_path)
    short = _set_password(tmp_path, config, "short\n")
    code = int(CommandCode.CONSOLE_PASSWORD_NOT_USABLE)
    one_error_line(Finished(short.returncode, short.stdout, short.stderr), code)
    one_error_line(run_to_exit(tmp_path, "console", "set-password", "--config", str(config)), code)
