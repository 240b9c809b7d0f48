"""`mfctl mutations`: an operator lists, shows and retries recorded changes and sees nothing
the change names (keywords are the owner's labels) nor anything of the message."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from cli.operator_cli import local_config
from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.flags.explanations import FAILURE_EXPLANATIONS
from mailfathom.app.flags.set_mail_flags import FlagChangeRequest
from mailfathom.app.organize.organize_email import OrganizeRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.mutations import MutationFailure
from sync.helpers import sample, stored_rows

AGENT = Caller(permissions=ALL_PERMISSIONS, label="agent")
LABEL = "privatelabel"
SUBJECT = "Operator must not read this"


def _mfctl(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mailfathom", "mutations", *args, "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _recorded(config_path: Path) -> tuple[str, str]:
    """A local account whose next pass completes a seen change and dead-letters a keyword
    change (a Maildir keeps no keyword); answers both record identifiers."""
    with Services.open(load_config(config_path)) as services:
        services.connectors.local.folder("notes", "INBOX").deliver(sample(SUBJECT))
        sync = services.account_synchronizer()
        (account,) = load_config(config_path).accounts
        sync.run_once(account)
        (email,) = _emails(services)
        recorded = services.flags().record(
            AGENT,
            FlagChangeRequest(email, seen=True, keyword_change="add", keywords=[LABEL]),
        )
        sync.run_once(account)
    seen, labelled = (str(r.record_id) for r in recorded.records)
    return seen, labelled


def _emails(services: Services) -> list[str]:
    return [str(r.stored_email_id) for r in stored_rows(services, "notes")]


@pytest.mark.soak
def test_an_operator_lists_shows_and_retries_a_dead_lettered_change(tmp_path: Path) -> None:
    register_all([LABEL, SUBJECT])
    config = local_config(tmp_path)
    seen, labelled = _recorded(config)

    listed = _mfctl(config, "list")
    assert listed.returncode == 0, listed.stderr
    # By default only what is not completed: the dead-lettered keyword change.
    assert labelled in listed.stdout
    assert seen not in listed.stdout
    assert "dead-lettered" in listed.stdout
    everything = _mfctl(config, "list", "--state", "completed", "--state", "dead-lettered")
    assert seen in everything.stdout
    assert labelled in everything.stdout
    other = _mfctl(config, "list", "--account", "someone-else")
    assert other.stdout.strip() == "No change records in the state(s) asked for."

    shown = _mfctl(config, "show", labelled)
    assert shown.returncode == 0, shown.stderr
    assert "change          add-keywords" in shown.stdout
    assert "value           1 keyword(s)" in shown.stdout
    assert "state           dead-lettered" in shown.stdout
    (line,) = [x for x in shown.stdout.splitlines() if x.startswith("failure code")]
    code, _, explanation = line.removeprefix("failure code").strip().partition(": ")
    assert int(code) == MutationFailure.KEYWORD_NOT_PERMANENT
    assert explanation == FAILURE_EXPLANATIONS[MutationFailure.KEYWORD_NOT_PERMANENT]

    retried = _mfctl(config, "retry", labelled)
    assert retried.returncode == 0, retried.stderr
    assert "state           pending" in retried.stdout
    assert "attempts        0" in retried.stdout
    assert "failure code" not in retried.stdout
    # Only a dead-lettered record is retried: a pending or completed one is left alone.
    for record in (labelled, seen):
        again = _mfctl(config, "retry", record)
        assert again.returncode == 1
        assert "not dead-lettered; nothing changed" in again.stderr
    with Services.open(load_config(config)) as services:
        state = services.mutations().find(uuid.UUID(labelled))
    assert state is not None
    assert state.state.value == "pending"
    assert state.attempts == 0

    for output in (listed, everything, shown, retried):
        assert LABEL not in output.stdout + output.stderr
        assert SUBJECT not in output.stdout + output.stderr
    assert _mfctl(config, "show", "not-an-id").returncode == 2
    assert _mfctl(config, "show", str(uuid.uuid4())).returncode == 1
    assert _mfctl(config, "retry", str(uuid.uuid4())).returncode == 1
    assert _mfctl(config, "list", "--state", "bogus").returncode == 2


def test_every_failure_code_is_explained_in_words() -> None:
    assert set(FAILURE_EXPLANATIONS) == set(MutationFailure)
    for sentence in FAILURE_EXPLANATIONS.values():
        assert sentence.endswith(".")
        assert "{" not in sentence


def _two_folders(root: Path) -> Path:
    path = root / "mailfathom.toml"
    path.write_text(
        f"""
[Store]
DataDir = "{root / "data"}"

[[Accounts]]
Id = "notes"
Kind = "local"

[[Accounts.Folders]]
Remote = "INBOX"
Alias = "Incoming"
Role = "Inbox"

[[Accounts.Folders]]
Remote = "Archive"
Alias = "Filed away"
Role = "Archive"
""",
        encoding="utf-8",
    )
    return path


def test_a_move_shows_its_kind_and_folder_aliases_and_no_content(tmp_path: Path) -> None:
    register_all([SUBJECT])
    config = _two_folders(tmp_path)
    with Services.open(load_config(config)) as services:
        services.connectors.local.folder("notes", "INBOX").deliver(sample(SUBJECT))
        (account,) = load_config(config).accounts
        services.account_synchronizer().run_once(account)
        (email,) = _emails(services)
        organized = services.organizer().organize(
            AGENT, OrganizeRequest(action="archive", stored_email_ids=[email])
        )
    (changed,) = organized.changed
    moved = str(changed.record.record_id)

    listed = _mfctl(config, "list")
    assert listed.returncode == 0, listed.stderr
    (line,) = [x for x in listed.stdout.splitlines() if x.startswith(moved)]
    assert line.split()[2:4] == ["move", "pending"]
    assert line.endswith("Incoming -> Filed away")
    shown = _mfctl(config, "show", moved)
    assert shown.returncode == 0, shown.stderr
    assert "change          move" in shown.stdout
    assert "folder          Incoming" in shown.stdout
    assert "value           to Filed away" in shown.stdout
    for output in (listed, shown):
        assert SUBJECT not in output.stdout + output.stderr
