"""`serve` reads the chat endpoint's key before anything starts: a key it cannot read stops
it, naming the setting and the variable, never a value."""

from __future__ import annotations

from pathlib import Path

from cli.test_start_checks import MISSING, PRESENT, _config, _run_to_exit


def test_serving_refuses_to_start_without_the_chat_key(tmp_path: Path) -> None:
    config = _config(tmp_path, smtp_env=PRESENT, imap_env=PRESENT)
    config.write_text(
        config.read_text("utf-8")
        + f"""
[Answering]
Url = "http://127.0.0.1:1/v1"
Model = "m"
ApiKey = {{ Env = "{MISSING}" }}
""",
        "utf-8",
    )
    for transport in ((), ("--stdio",)):
        result = _run_to_exit(
            tmp_path, "serve", *transport, "--no-sync", "--no-deliver", "--config", str(config)
        )
        assert result.returncode == 2, result.stderr
        assert "11002" in result.stderr
        assert "Answering.ApiKey" in result.stderr
        assert MISSING in result.stderr
        assert not (tmp_path / "data").exists()
