"""What one `mailfathom serve` process publishes of its own work after synchronizing from the
test Dovecot: passes, messages stored and failures by code per configured account, pass
durations, its role and the process collector's figures; on its operations listener and on
the MCP listener's `/metrics` alike, and never a word of the mail, its addresses, its
folders or a secret."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from log_audit import register_all
from servers.dovecot import ImapAccount
from sync.helpers import RemoteMailbox, sample

from .served import config_text, serve, wait_for

FOLDER = "ZephyrPlans-" + uuid.uuid4().hex[:6]
SUBJECTS = [f"Quarterly zephyr memo {i} {uuid.uuid4().hex[:6]}" for i in range(3)]
# A label value is one of this project's words, a code, a number or a configured account id.
LABEL_VALUE = re.compile(r"[A-Za-z0-9._+-]*")


def _account(account: ImapAccount, secret: Path) -> str:
    return f"""
[[Accounts]]
Id = "work"
Kind = "imap"
PollIntervalSeconds = 1

[Accounts.Imap]
Host = "{account.host}"
Port = {account.port}
Username = "{account.username}"
Tls = "none"
Secret = {{ File = "{secret}" }}

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[[Accounts.Folders]]
Remote = "{FOLDER}"
"""


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            found[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return found


def _value(text: str, name: str, **labels: str) -> float:
    return _samples(text).get((name, tuple(sorted(labels.items()))), 0.0)


def test_a_serving_process_publishes_its_synchronization_without_mail_in_any_label(
    tmp_path: Path, imap_account: ImapAccount
) -> None:
    wrong = "wrong-" + uuid.uuid4().hex
    register_all([*SUBJECTS, wrong, imap_account.password])
    remote = RemoteMailbox(imap_account)
    try:
        remote.conn.create(FOLDER)
        for subject in SUBJECTS[:2]:
            remote.append(sample(subject), "INBOX")
        remote.append(sample(SUBJECTS[2]), FOLDER)
    finally:
        remote.close()
    secret = tmp_path / "imap-password"
    secret.write_text(imap_account.password, "utf-8")
    account = _account(imap_account, secret)

    def config(mcp_port: int, ops_port: int) -> str:
        return config_text(tmp_path / "data", mcp_port, ops_port) + account

    with serve(tmp_path, config) as served:
        ops, mcp = served.listeners[1], served.listeners[0]

        def stored() -> str | None:
            text = served.metrics(ops)
            count = _value(text, "mailfathom_sync_messages_stored_total", account="work")
            return text if count >= len(SUBJECTS) else None

        wait_for(stored, "the process published no synchronization")
        # A password replaced behind the process's back: the next pass is refused (31002).
        secret.write_text(wrong, "utf-8")

        def synchronized() -> str | None:
            text = served.metrics(ops)
            refused = _value(
                text, "mailfathom_sync_pass_failures_total", account="work", code="31002"
            )
            return text if refused >= 1 else None

        text = wait_for(synchronized, "the refused pass was not counted")
        assert text is not None
        assert _value(text, "mailfathom_sync_passes_total", account="work") >= 1
        assert _value(text, "mailfathom_sync_pass_seconds_count") >= 1
        assert _value(text, "mailfathom_process_role", role="serve") == 1
        assert _value(text, "process_start_time_seconds") > 0
        assert _value(text, "mailfathom_delivery_outcomes_total", outcome="lease_lost") == 0
        assert _value(text, "mailfathom_embedding_passages_total") == 0
        # The MCP listener's /metrics is the same process's registry.
        assert _value(
            served.metrics(mcp), "mailfathom_sync_messages_stored_total", account="work"
        ) >= len(SUBJECTS)
        _assert_no_mail_in(text, [FOLDER, *SUBJECTS, wrong, imap_account.password])


def _assert_no_mail_in(text: str, sensitive: list[str]) -> None:
    words = ["sender@example.org", "receiver@example.net", "Sender Person", "zephyr", "Zephyr"]
    for fragment in [*sensitive, *words]:
        assert fragment not in text
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            for name, value in s.labels.items():
                assert LABEL_VALUE.fullmatch(value), (s.name, name)
                if name == "account":
                    assert value == "work"
