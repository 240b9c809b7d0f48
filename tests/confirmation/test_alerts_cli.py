"""`mfctl alerts`: an operator lists the drafts waiting for their owner and dismisses them,
and sees the account, the draft and when, nothing of the message."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.sql.owner_alerts import SqlOwnerAlerts
from mailfathom.app.confirmation.confirmed_sending import alert_key
from mailfathom.app.confirmation.ports import OwnerAlert
from mailfathom.bootstrap import Services
from sending.helpers import sending_config

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def _mfctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mailfathom", "alerts", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "COLUMNS": "400"},
    )


@pytest.mark.soak
def test_an_operator_lists_and_dismisses_owner_alerts(tmp_path: Path) -> None:
    config_path = sending_config(tmp_path, None)
    with Services.open(load_config(config_path)) as services:
        alerts = SqlOwnerAlerts(services.engine)
        for n, draft in enumerate(("draft-first", "draft-second")):
            alerts.raise_alert(
                OwnerAlert(
                    alert_key(draft),
                    "work",
                    draft,
                    "confirmation_unavailable",
                    T0 + timedelta(minutes=n),
                )
            )
    listed = _mfctl("list", "--config", str(config_path))
    assert listed.returncode == 0, listed.stderr
    for draft in ("draft-first", "draft-second"):
        assert alert_key(draft) in listed.stdout
        assert draft in listed.stdout
    assert listed.stdout.index("draft-second") < listed.stdout.index("draft-first")
    assert "work" in listed.stdout

    dismissed = _mfctl("dismiss", alert_key("draft-first"), "--config", str(config_path))
    assert dismissed.returncode == 0, dismissed.stderr
    again = _mfctl("dismiss", alert_key("draft-first"), "--config", str(config_path))
    assert again.returncode == 1
    unknown = _mfctl("dismiss", "draft:unknown", "--config", str(config_path))
    assert unknown.returncode == 1

    remaining = _mfctl("list", "--config", str(config_path))
    assert "draft-first" not in remaining.stdout
    assert "draft-second" in remaining.stdout
    everything = _mfctl("list", "--all", "--config", str(config_path))
    assert "draft-first" in everything.stdout
