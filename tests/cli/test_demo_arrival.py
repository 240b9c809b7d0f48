"""The demo's sample mail arrives when its own Date: says, not when the demo filed it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import sqlalchemy as sa

from log_audit import register_headers
from mailfathom.adapters.local.sample_mail import generate_mailbox
from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url
from mailfathom.adapters.sql.schema import messages


def test_demo_mail_is_received_at_its_own_date(tmp_path: Path) -> None:
    for sample in generate_mailbox(10):
        register_headers(sample.raw)
    demo = ["demo", "--no-serve", "--data-dir", str(tmp_path / "demo"), "--messages", "10"]
    result = subprocess.run(
        [sys.executable, "-m", "mailfathom", *demo],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    engine = create_store_engine(sqlite_url(tmp_path / "demo" / "data" / "mailfathom.sqlite3"))
    try:
        with engine.connect() as c:
            rows = c.execute(sa.select(messages.c.sent_at, messages.c.received_at)).all()
    finally:
        engine.dispose()
    assert len(rows) == 10
    assert all(received == sent for sent, received in rows)
