"""`mfctl mutations`: an operator lists, shows and retries recorded changes (folder
creations among them) and sees nothing the change names (keywords are the owner's labels)
nor anything of the message."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from cli.operator_cli import local_config
from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.flags.explanations import FAILURE_EXPLANATIONS, UNDESCRIBED, explain
from mailfathom.app.flags.set_mail_flags import FlagChangeRequest
from mailfathom.app.organize.folder_creations import NUMBERED_NAMES
from mailfathom.app.organize.organize_email import OrganizeRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.mutations import CREATION_FAILURES, MutationFailure
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


def _incoming(root: Path, more: str = "") -> Path:
    """A local account serving its Inbox as `Incoming`, and the folders `more` maps."""
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
{more}""",
        encoding="utf-8",
    )
    return path


def _two_folders(root: Path) -> Path:
    return _incoming(
        root, '\n[[Accounts.Folders]]\nRemote = "Archive"\nAlias = "Filed away"\nRole = "Archive"\n'
    )


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


# The folder a creation found already there, as an operator maps it afterwards.
TAKEN = '\n[[Accounts.Folders]]\nRemote = "Taken"\nAlias = "Taken"\n'


def _create(services: Services, name: str, parent: str | None = None) -> str:
    outcome = services.organizer().organize(
        AGENT, OrganizeRequest(action="createFolder", account="notes", name=name, parent=parent)
    )
    assert outcome.folder is not None
    return str(outcome.folder.record.creation_id)


def _run(config: Path) -> None:
    with Services.open(load_config(config)) as services:
        (account,) = load_config(config).accounts
        services.account_synchronizer().run_once(account)


def _creation(config: Path, record_id: str) -> tuple[str, int, int | None]:
    with Services.open(load_config(config)) as services:
        found = services.mutations().find(uuid.UUID(record_id))
    assert found is not None
    return found.state.value, found.attempts, found.last_error_code


def _field(output: str, name: str) -> str:
    (line,) = [x for x in output.splitlines() if x.startswith(f"{name:<16}")]
    return line[16:]


def test_folder_creations_are_listed_shown_and_retried_under_the_same_rules(
    tmp_path: Path,
) -> None:
    """A name already there with all its numbered names is dead-lettered (code 8); the
    operator sees it beside the other changes, retries it, and the run dead-letters it again,
    since it never noted one of those names.
    Once the operator maps that folder under the same alias, a retry is refused: two folders
    would be published under one alias."""
    register_all([SUBJECT])
    config = _incoming(tmp_path)
    with Services.open(load_config(config)) as services:
        local = services.connectors.local
        local.folder("notes", "INBOX").deliver(sample(SUBJECT))
        for name in ["Taken", *(f"Taken {n}" for n in range(2, NUMBERED_NAMES + 1))]:
            local.folder("notes", name).create()
        (account,) = load_config(config).accounts
        sync = services.account_synchronizer()
        sync.run_once(account)
        (email,) = _emails(services)
        (seen,) = services.flags().record(AGENT, FlagChangeRequest(email, seen=True)).records
        taken = _create(services, "Taken")
        later = _create(services, "Later", parent="incoming")
        sync.run_once(account)
    assert _creation(config, taken) == ("dead-lettered", 0, MutationFailure.FOLDER_EXISTS)
    assert _creation(config, later)[0] == "completed"

    listed = _mfctl(config, "list", "--state", "dead-lettered", "--state", "completed")
    assert listed.returncode == 0, listed.stderr
    rows = [line.split(None, 6) for line in listed.stdout.splitlines()[1:]]
    # Newest first: the creations were asked for after the flag change.
    assert [r[0] for r in rows] == [later, taken, str(seen.record_id)]
    assert rows[0][1:] == ["notes", "create-folder", "completed", "1", "Incoming/Later"]
    assert rows[1][1:] == ["notes", "create-folder", "dead-lettered", "0", "8", "Taken"]
    assert rows[2][2] == "set-seen"
    assert [line.split()[0] for line in _mfctl(config, "list").stdout.splitlines()[1:]] == [taken]
    nobody = _mfctl(config, "list", "--account", "someone-else", "--state", "completed")
    assert nobody.stdout.strip() == "No change records in the state(s) asked for."

    shown = _mfctl(config, "show", taken)
    assert shown.returncode == 0, shown.stderr
    assert _field(shown.stdout, "change record") == taken
    assert _field(shown.stdout, "account") == "notes"
    assert _field(shown.stdout, "change") == "create-folder"
    assert _field(shown.stdout, "folder") == "Taken"
    assert _field(shown.stdout, "parent folder") == "(top level)"
    assert _field(shown.stdout, "asked by") == "agent"
    assert _field(shown.stdout, "state") == "dead-lettered"
    assert _field(shown.stdout, "attempts") == "0"
    exists = MutationFailure.FOLDER_EXISTS
    assert _field(shown.stdout, "failure code") == f"{exists}: {FAILURE_EXPLANATIONS[exists]}"
    nested = _mfctl(config, "show", later)
    assert _field(nested.stdout, "folder") == "Incoming/Later"
    assert _field(nested.stdout, "parent folder") == "Incoming"
    assert _field(nested.stdout, "state") == "completed"

    # Only a dead-lettered creation is retried: a completed one is left as it is.
    done = _mfctl(config, "retry", later)
    assert done.returncode == 1
    assert "not dead-lettered; nothing changed" in done.stderr
    assert _creation(config, later)[0] == "completed"
    retried = _mfctl(config, "retry", taken)
    assert retried.returncode == 0, retried.stderr
    assert "pending again" in retried.stdout
    assert _field(retried.stdout, "state") == "pending"
    assert "failure code" not in retried.stdout
    again = _mfctl(config, "retry", taken)
    assert again.returncode == 1
    assert _creation(config, taken) == ("pending", 0, None)
    # The name is still on the server and this record never noted it: code 8 again.
    _run(config)
    assert _creation(config, taken) == ("dead-lettered", 0, MutationFailure.FOLDER_EXISTS)

    served = _incoming(tmp_path, TAKEN)
    _run(served)
    claimed = _mfctl(served, "retry", taken)
    assert claimed.returncode == 1
    assert "already carries its alias" in claimed.stderr
    assert _field(claimed.stdout, "state") == "dead-lettered"
    assert _creation(served, taken) == ("dead-lettered", 0, MutationFailure.FOLDER_EXISTS)
    for output in (listed, shown, nested, done, retried, claimed):
        assert SUBJECT not in output.stdout + output.stderr


def test_a_creation_has_a_sentence_for_every_code_it_ends_with() -> None:
    for code in CREATION_FAILURES:
        assert "folder" in explain(code, creation=True)
    assert explain(MutationFailure.FOLDER_GONE, creation=True) != explain(
        MutationFailure.FOLDER_GONE
    )
    assert explain(99, creation=True) == UNDESCRIBED
