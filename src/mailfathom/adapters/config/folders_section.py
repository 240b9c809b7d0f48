"""An account's `[[Accounts.Folders]]` entries: which remote folders are kept, and as what."""

from __future__ import annotations

from mailfathom.adapters.config.toml_tables import Table
from mailfathom.adapters.config.values import check_name
from mailfathom.domain import text_rules
from mailfathom.domain.config import FolderMapping
from mailfathom.domain.folders import FolderRole

_FOLDER_KEYS = frozenset({"Remote", "Alias", "Role", "VisibleToTools"})


def _remote_identity(remote: str) -> str:
    # INBOX is case-insensitive in IMAP (RFC 3501 §5.1); every other name is case-sensitive.
    return "INBOX" if remote.upper() == "INBOX" else remote


def parse_folders(account: Table) -> tuple[FolderMapping, ...] | None:
    problems = account.problems
    ok = True
    folders: list[FolderMapping] = []
    remotes: dict[str, int] = {}
    aliases: dict[str, int] = {}
    roles: dict[FolderRole, int] = {}
    for index, table in enumerate(account.tables("Folders")):
        table.refuse_unknown(_FOLDER_KEYS)
        before = len(problems.items)

        remote = table.string("Remote", required=True)
        if remote is not None:
            if not remote:
                problems.add(table.at("Remote"), "must not be empty")
                remote = None
            elif not text_rules.is_name(remote):
                problems.add(table.at("Remote"), "must not contain control characters")
                remote = None
            elif (first := remotes.setdefault(_remote_identity(remote), index)) != index:
                problems.add(
                    table.at("Remote"),
                    f"names the same folder as {account.at('Folders')}[{first}].Remote",
                )

        alias = table.string("Alias")
        if alias is None and not table.has("Alias"):
            alias = remote
            alias_what = "(taken from Remote, as Alias is not given)"
        else:
            alias_what = ""
        if alias is not None:
            if not check_name(problems, table.at("Alias"), alias, what=alias_what):
                alias = None
            elif (first := aliases.setdefault(alias.casefold(), index)) != index:
                problems.add(
                    table.at("Alias"),
                    f"equals {account.at('Folders')}[{first}].Alias "
                    "(aliases are compared case-insensitively)",
                )

        role: FolderRole | None = None
        role_text = table.string("Role")
        if role_text is not None:
            role = FolderRole.parse(role_text)
            if role is None:
                choices = ", ".join(member.value for member in FolderRole)
                problems.add(table.at("Role"), f"must be one of {choices} (case-insensitive)")
            elif (first := roles.setdefault(role, index)) != index:
                problems.add(
                    table.at("Role"),
                    f"is already given to {account.at('Folders')}[{first}]; "
                    "each role may be used once per account",
                )

        visible = table.boolean("VisibleToTools", True)

        if len(problems.items) != before or remote is None or alias is None:
            ok = False
            continue
        # The server's INBOX is matched in any case; the stored name is the canonical one,
        # so the name a pass looks for is the name the server lists.
        folders.append(
            FolderMapping(
                remote_name=_remote_identity(remote),
                alias=alias,
                role=role,
                visible_to_tools=visible,
            )
        )
    return tuple(folders) if ok else None
