"""The configuration `mailfathom init` writes, as a document in the loader's own form.

The caller it writes is an agent acting for the person running init, so its grant is written
out name by name (`caller_permissions`) and a person is asked before anything it composes
leaves (`Confirmation = "ask"`): a new deployment never lets an agent mail anybody unasked,
and loosening either is an edit the operator makes knowingly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mailfathom.domain.access import ConfirmationMode, Permission
from mailfathom.domain.oauth import ConnectionAuth
from mailfathom.domain.role_proposal import ProposedFolder
from mailfathom.entrypoints.cli.init_answers import Answers, Server
from mailfathom.entrypoints.cli.init_oauth import secret_table


def caller_permissions(sending: bool) -> list[Permission]:
    """Every permission the deployment init writes can serve: sending only with a submission
    server, and never `files.write`, which acts on nothing until `AttachmentRoots` names a
    directory."""
    left_out = {Permission.FILES_WRITE} | (set() if sending else {Permission.SEND})
    return [p for p in Permission if p not in left_out]


def _login(server: Server) -> dict[str, object]:
    """How a server is logged in to: its password's reference, or OAuth."""
    if server.secret is None:
        return {"Auth": ConnectionAuth.OAUTH2.value}
    return {"Secret": secret_table(server.secret)}


def _mapping(folder: ProposedFolder) -> dict[str, str]:
    """A folder's entry; a label (no role) is written without `Role`."""
    if folder.role is None:
        return {"Remote": folder.remote}
    return {"Remote": folder.remote, "Role": folder.role.value}


def document(
    answers: Answers,
    folders: Sequence[ProposedFolder],
    key_digest: str,
    oauth: dict[str, object] | None = None,
) -> Any:
    imap = answers.imap
    account: dict[str, object] = {
        "Id": answers.account_id,
        "DisplayName": answers.display_name,
        "Kind": "imap",
    }
    if answers.address is not None:
        account["Addresses"] = [answers.address]
    account["Imap"] = {
        "Host": imap.host,
        "Port": imap.port,
        "Tls": imap.tls.value,
        "Username": imap.username,
        **_login(imap),
    }
    if answers.smtp is not None:
        smtp = answers.smtp
        delivery: dict[str, object] = {"Enabled": True}
        if answers.address is not None:
            delivery["Address"] = answers.address
        delivery["Smtp"] = {
            "Host": smtp.host,
            "Port": smtp.port,
            "Tls": smtp.tls.value,
            "Username": smtp.username,
            **_login(smtp),
        }
        account["Delivery"] = delivery
    if oauth is not None:
        account["OAuth"] = oauth
    account["Folders"] = [_mapping(f) for f in folders]
    caller = {
        "Name": answers.caller_name,
        "Credential": "apiKey",
        "ApiKeySha256": key_digest,
        "Permissions": [p.value for p in caller_permissions(answers.smtp is not None)],
        "Confirmation": ConfirmationMode.ASK.value,
    }
    return {
        "Store": {"DataDir": answers.data_dir},
        "Accounts": [account],
        "McpEndpoint": {
            "Enabled": True,
            "Listen": f"127.0.0.1:{answers.mcp_port}",
            "Callers": [caller],
        },
    }
