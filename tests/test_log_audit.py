"""The log audit, checked on logging this test causes itself: a synchronizing process copies
its log lines to the file it is given, the mail it stores leaves no trace there, and the audit
does find text that is in those lines."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from email.message import EmailMessage
from pathlib import Path

import log_audit
from mailfathom.adapters.local.maildir import LocalConnector


def test_a_synchronizing_process_logs_no_mail_content_and_the_audit_would_see_it(
    tmp_path: Path,
) -> None:
    account = f"audit{uuid.uuid4().hex[:12]}"
    data = tmp_path / "data"
    inbox = LocalConnector(data).folder(account, "INBOX")
    fragments = []
    for n in range(3):
        message = EmailMessage()
        message["From"] = f"Audit Writer {n} <audit.writer{n}@example.org>"
        message["To"] = "audit.reader@example.org"
        message["Subject"] = f"Audited subject line number {n}"
        message.set_content(f"Audited body text, paragraph {n}.\n")
        fragments += [
            str(message["Subject"]),
            f"audit.writer{n}@example.org",
            f"Audited body text, paragraph {n}.",
        ]
        inbox.deliver(bytes(message))
    fragments.append("audit.reader@example.org")
    log_audit.register_all(fragments)
    config = tmp_path / "mailfathom.toml"
    config.write_text(
        f'[Store]\nDataDir = "{data}"\n\n[[Accounts]]\nId = "{account}"\nKind = "local"\n'
        '[[Accounts.Folders]]\nRemote = "INBOX"\nRole = "Inbox"\n',
        "utf-8",
    )
    copy = tmp_path / "copy.log"
    done = subprocess.run(
        [sys.executable, "-m", "mailfathom", "sync", "--config", str(config)],
        env={**os.environ, "MAILFATHOM_LOG_COPY": str(copy), "MAILFATHOM_LOG_LEVEL": "DEBUG"},
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    logged = copy.read_text("utf-8", "replace")
    assert logged, "the process copied no log line"
    assert log_audit.leaked(logged, log_audit.registered()) == []
    # The audit is not blind: what the lines do carry (the account's name) is found.
    assert log_audit.leaked(logged, [account.upper()]) == [account.upper()]
