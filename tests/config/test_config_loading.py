"""Loading and validating the deployment configuration."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mailfathom.adapters.config import ConfigurationProblems, load_config, parse_config
from mailfathom.domain.config import (
    AccountKind,
    DeploymentConfig,
    RemoteImages,
    SecretRef,
    SyncMode,
    TlsMode,
)
from mailfathom.domain.errors import ConfigurationError
from mailfathom.domain.folders import FolderRole

BASE_DIR = Path("/srv/mailfathom")


def imap_account(account_id: str = "work", **overrides: Any) -> dict[str, Any]:
    account: dict[str, Any] = {
        "Id": account_id,
        "DisplayName": f"{account_id} mail",
        "Kind": "imap",
        "Imap": {
            "Host": "imap.example.org",
            "Port": 993,
            "Username": "me@example.org",
            "Tls": "implicit",
            "Secret": {"Env": "WORK_IMAP_PASSWORD"},
        },
        "Folders": [{"Remote": "INBOX", "Alias": "INBOX", "Role": "Inbox"}],
    }
    account.update(overrides)
    return account


def local_account(account_id: str = "notes", **overrides: Any) -> dict[str, Any]:
    account: dict[str, Any] = {"Id": account_id, "Kind": "local"}
    account.update(overrides)
    return account


def with_imap(**overrides: Any) -> dict[str, Any]:
    account = imap_account()
    account["Imap"].update(overrides)
    return {"Accounts": [account]}


def without(mapping: dict[str, Any], key: str) -> dict[str, Any]:
    reduced = copy.deepcopy(mapping)
    del reduced[key]
    return reduced


def with_folders(*folders: dict[str, Any]) -> dict[str, Any]:
    return {"Accounts": [imap_account(Folders=list(folders))]}


def parse(document: dict[str, Any]) -> DeploymentConfig:
    return parse_config(copy.deepcopy(document), base_dir=BASE_DIR)


def problems_of(document: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigurationProblems) as caught:
        parse(document)
    assert caught.value.code == 11001
    return list(caught.value.problems)


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[[str], Path]:
    def write(text: str) -> Path:
        path = tmp_path / "mailfathom.toml"
        path.write_text(text, encoding="utf-8")
        return path

    return write


def single_problem(document: dict[str, Any]) -> str:
    problems = problems_of(document)
    assert len(problems) == 1, problems
    return problems[0]


# --------------------------------------------------------------------------------------------
# The document as a whole


def test_an_empty_document_is_a_deployment_serving_nothing() -> None:
    config = parse({})
    assert config.accounts == ()
    assert config.store.data_dir == BASE_DIR / "data"
    assert config.store.database_url is None
    assert config.sync.enabled is True


def test_an_empty_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "mailfathom.toml"
    path.write_text("", encoding="utf-8")
    config = load_config(path)
    assert config.accounts == ()
    assert config.store.data_dir == tmp_path.resolve() / "data"


def test_a_complete_imap_account_is_read_into_domain_values() -> None:
    account = imap_account(
        SyncMode="push",
        PollIntervalSeconds=120,
        MaxMessageSize="25MB",
        StorageCeiling="10GiB",
        Addresses=["me@example.org"],
    )
    (parsed,) = parse({"Accounts": [account]}).accounts
    assert parsed.account_id == "work"
    assert parsed.display_name == "work mail"
    assert parsed.kind is AccountKind.IMAP
    assert parsed.sync_mode is SyncMode.PUSH
    assert parsed.poll_interval_seconds == 120.0
    assert parsed.max_message_octets == 25_000_000
    assert parsed.storage_ceiling_octets == 10 * 1024**3
    assert parsed.addresses == ("me@example.org",)
    assert parsed.imap is not None
    assert parsed.imap.host == "imap.example.org"
    assert parsed.imap.port == 993
    assert parsed.imap.tls is TlsMode.IMPLICIT
    assert parsed.imap.secret == SecretRef(env="WORK_IMAP_PASSWORD")
    assert parsed.imap.secret.origin == "Accounts[0].Imap.Secret"
    (folder,) = parsed.folders
    assert (folder.remote_name, folder.alias, folder.role, folder.visible_to_tools) == (
        "INBOX",
        "INBOX",
        FolderRole.INBOX,
        True,
    )


def test_account_defaults_apply_when_keys_are_omitted() -> None:
    (parsed,) = parse({"Accounts": [local_account()]}).accounts
    assert parsed.display_name == "notes"
    assert parsed.sync_mode is SyncMode.POLLING
    assert parsed.poll_interval_seconds == 300.0
    assert parsed.max_message_octets == 50 * 1024 * 1024
    assert parsed.storage_ceiling_octets is None
    assert parsed.addresses == ()
    assert parsed.folders == ()
    assert parsed.imap is None


def test_unknown_top_level_key_is_refused() -> None:
    assert single_problem({"Acounts": []}) == "Acounts: unknown key (did you mean Accounts?)"


def test_unknown_key_in_a_nested_table_is_refused_with_its_path() -> None:
    account = imap_account()
    account["Imap"]["Prot"] = 993
    assert (
        single_problem({"Accounts": [account]})
        == "Accounts[0].Imap.Prot: unknown key (did you mean Port?)"
    )


def test_unknown_key_differing_only_in_case_suggests_the_right_spelling() -> None:
    problem = single_problem({"Accounts": [local_account(displayname="x")]})
    assert problem.startswith("Accounts[0].displayname: unknown key")
    assert "DisplayName" in problem


def test_wrongly_typed_values_are_refused() -> None:
    problems = problems_of(
        {
            "Sync": {"Enabled": "yes", "BatchMessages": "500"},
            "Accounts": [local_account(Addresses="me@example.org")],
        }
    )
    assert problems == [
        "Sync.Enabled: must be true or false",
        "Sync.BatchMessages: must be an integer",
        "Accounts[0].Addresses: must be an array of strings",
    ]


def test_accounts_must_be_an_array_of_tables() -> None:
    assert single_problem({"Accounts": {"Id": "x"}}) == "Accounts: must be an array of tables"


def test_booleans_are_not_accepted_as_numbers() -> None:
    problem = single_problem({"Accounts": [local_account(PollIntervalSeconds=True)]})
    assert problem == "Accounts[0].PollIntervalSeconds: must be a number"


def test_required_keys_must_be_present() -> None:
    problems = problems_of({"Accounts": [{"DisplayName": "x"}]})
    assert "Accounts[0].Id: is required" in problems
    assert "Accounts[0].Kind: is required" in problems


def test_all_problems_are_reported_together() -> None:
    account = imap_account(Id="bad id!", PollIntervalSeconds=0)
    account["Imap"]["Port"] = 0
    account["Folders"].append({"Remote": "", "Role": "Nonsense"})
    document = {"Store": {"Colour": "blue"}, "Sync": {"BatchMessages": -1}, "Accounts": [account]}
    with pytest.raises(ConfigurationError) as caught:
        parse(document)
    message = caught.value.message
    for expected in (
        "Store.Colour: unknown key",
        "Sync.BatchMessages: must be greater than zero",
        "Accounts[0].Id: must be 1 to 64 characters",
        "Accounts[0].PollIntervalSeconds: must be greater than zero",
        "Accounts[0].Imap.Port: must be an integer from 1 to 65535",
        "Accounts[0].Folders[1].Remote: must not be empty",
        "Accounts[0].Folders[1].Role: must be one of",
    ):
        assert expected in message
    assert "has 7 problems" in message


def test_a_file_that_is_not_toml_is_refused_with_a_position(
    write_config: Callable[[str], Path],
) -> None:
    path = write_config('[Store]\nDataDir = "unterminated\n')
    with pytest.raises(ConfigurationProblems) as caught:
        load_config(path)
    (problem,) = caught.value.problems
    assert problem.startswith("is not valid TOML")
    assert "line 2" in problem
    assert str(path) in caught.value.message


@pytest.mark.parametrize(
    "text",
    [
        '[Store]\nDataDir = "x" hunter2\n',
        "[[Accounts]]\n[Accounts.hunter2]\n[Accounts.hunter2]\n",
        'Key = "hunter2\x01"\n',
    ],
)
def test_a_toml_syntax_error_does_not_quote_the_file(
    write_config: Callable[[str], Path], text: str
) -> None:
    path = write_config(text)
    with pytest.raises(ConfigurationProblems) as caught:
        load_config(path)
    (problem,) = caught.value.problems
    assert problem.startswith("is not valid TOML")
    assert "(at line" in problem
    assert "hunter2" not in str(caught.value)
    assert "\\x01" not in str(caught.value)


def test_a_missing_file_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot be read"):
        load_config(tmp_path / "absent.toml")


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "mailfathom.toml"
    path.write_bytes(b'[Store]\nDataDir = "\xff\xfe"\n')
    with pytest.raises(ConfigurationError, match="not valid UTF-8"):
        load_config(path)


# --------------------------------------------------------------------------------------------
# Account Id and DisplayName


@pytest.mark.parametrize("account_id", ["a", "work", "Work.Mail_2-x", "9", "a" * 64])
def test_account_id_accepts_letters_digits_dot_underscore_hyphen(account_id: str) -> None:
    (parsed,) = parse({"Accounts": [local_account(account_id)]}).accounts
    assert parsed.account_id == account_id


@pytest.mark.parametrize(
    "account_id", ["", "a" * 65, "work mail", "wörk", "a/b", "..", ".hidden", "-x", "a\n"]
)
def test_account_id_outside_the_allowed_shape_is_refused(account_id: str) -> None:
    problem = single_problem({"Accounts": [local_account(account_id)]})
    assert problem.startswith("Accounts[0].Id: must be 1 to 64 characters")


def test_account_id_must_be_a_string() -> None:
    assert single_problem({"Accounts": [local_account(Id=7)]}) == "Accounts[0].Id: must be a string"


def test_account_ids_must_be_unique() -> None:
    problem = single_problem({"Accounts": [local_account("a"), local_account("b", Id="a")]})
    assert problem.startswith("Accounts[1].Id: is already used by Accounts[0]")


def test_account_ids_differing_only_in_case_are_not_unique() -> None:
    problem = single_problem({"Accounts": [local_account("work"), local_account("WORK")]})
    assert problem.startswith("Accounts[1].Id: is already used by Accounts[0]")


@pytest.mark.parametrize("name", ["W", "Work mail", "Büro · Posteingang", "x" * 256])
def test_display_name_of_1_to_256_characters_is_accepted(name: str) -> None:
    (parsed,) = parse({"Accounts": [local_account(DisplayName=name)]}).accounts
    assert parsed.display_name == name


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("", "must be 1 to 256 characters long"),
        ("x" * 257, "must be 1 to 256 characters long"),
        ("Work\nmail", "must not contain control characters"),
        ("Work\x00", "must not contain control characters"),
        ("Work\u202email", "must not contain control characters"),
        (" Work", "must not begin or end with whitespace"),
    ],
)
def test_display_name_breaking_a_rule_is_refused(name: str, rule: str) -> None:
    problem = single_problem({"Accounts": [local_account(DisplayName=name)]})
    assert problem == f"Accounts[0].DisplayName: {rule}"


def test_display_name_may_equal_its_own_accounts_id() -> None:
    (parsed,) = parse({"Accounts": [local_account("work", DisplayName="Work")]}).accounts
    assert parsed.display_name == "Work"


def test_display_name_equal_to_another_accounts_id_is_refused() -> None:
    document = {"Accounts": [local_account("work"), local_account("home", DisplayName="WORK")]}
    problem = single_problem(document)
    assert problem.startswith("Accounts[1].DisplayName: equals the Id of Accounts[0]")


def test_display_name_equal_to_a_later_accounts_id_is_refused() -> None:
    document = {"Accounts": [local_account("home", DisplayName="Work"), local_account("work")]}
    problem = single_problem(document)
    assert problem.startswith("Accounts[0].DisplayName: equals the Id of Accounts[1]")


def test_display_names_equal_case_insensitively_are_refused() -> None:
    document = {
        "Accounts": [
            local_account("a", DisplayName="Shared mail"),
            local_account("b", DisplayName="shared MAIL"),
        ]
    }
    problem = single_problem(document)
    assert problem.startswith("Accounts[1].DisplayName: equals the DisplayName of Accounts[0]")


def test_distinct_display_names_and_ids_are_accepted() -> None:
    document = {
        "Accounts": [
            local_account("a", DisplayName="Alpha"),
            local_account("b", DisplayName="Beta"),
            local_account("c"),
        ]
    }
    assert [account.display_name for account in parse(document).accounts] == [
        "Alpha",
        "Beta",
        "c",
    ]


# --------------------------------------------------------------------------------------------
# Kind and the IMAP connection


def test_kind_must_be_imap_or_local() -> None:
    problem = single_problem({"Accounts": [local_account(Kind="pop3")]})
    assert problem == "Accounts[0].Kind: must be one of imap | local"


def test_kind_imap_requires_an_imap_table() -> None:
    problem = single_problem({"Accounts": [without(imap_account(), "Imap")]})
    assert problem == 'Accounts[0].Imap: is required when Kind = "imap"'


def test_kind_local_forbids_an_imap_table() -> None:
    document = {"Accounts": [local_account(Imap=imap_account()["Imap"])]}
    assert single_problem(document) == 'Accounts[0].Imap: is not allowed when Kind = "local"'


def test_local_account_without_imap_is_accepted() -> None:
    (parsed,) = parse({"Accounts": [local_account()]}).accounts
    assert parsed.kind is AccountKind.LOCAL


def test_local_account_cannot_use_push() -> None:
    problem = single_problem({"Accounts": [local_account(SyncMode="push")]})
    assert problem.startswith("Accounts[0].SyncMode: push applies only")


@pytest.mark.parametrize("port", [1, 143, 993, 65535])
def test_port_in_range_is_accepted(port: int) -> None:
    (parsed,) = parse(with_imap(Port=port)).accounts
    assert parsed.imap is not None
    assert parsed.imap.port == port


@pytest.mark.parametrize("port", [0, -1, 65536])
def test_port_out_of_range_is_refused(port: int) -> None:
    problem = single_problem(with_imap(Port=port))
    assert problem == "Accounts[0].Imap.Port: must be an integer from 1 to 65535"


@pytest.mark.parametrize(("tls", "port"), [("implicit", 993), ("starttls", 143), ("STARTTLS", 143)])
def test_port_defaults_by_tls_mode(tls: str, port: int) -> None:
    account = imap_account()
    del account["Imap"]["Port"]
    account["Imap"]["Tls"] = tls
    (parsed,) = parse({"Accounts": [account]}).accounts
    assert parsed.imap is not None
    assert parsed.imap.port == port


def test_imap_host_username_and_secret_are_required() -> None:
    document = {"Accounts": [imap_account(Imap={})]}
    problems = problems_of(document)
    assert "Accounts[0].Imap.Host: is required" in problems
    assert "Accounts[0].Imap.Username: is required" in problems
    assert any(problem.startswith("Accounts[0].Imap.Secret: is required") for problem in problems)


def test_tls_must_be_a_known_mode() -> None:
    problem = single_problem(with_imap(Tls="ssl"))
    assert problem == "Accounts[0].Imap.Tls: must be one of implicit | starttls | none"


@pytest.mark.parametrize(
    "host",
    ["localhost", "LOCALHOST", "127.0.0.1", "127.8.9.10", "::1", "[::1]", "::ffff:127.0.0.1"],
)
def test_tls_none_is_allowed_on_loopback(host: str) -> None:
    (parsed,) = parse(with_imap(Tls="none", Host=host)).accounts
    assert parsed.imap is not None
    assert parsed.imap.tls is TlsMode.NONE


@pytest.mark.parametrize("host", ["imap.example.org", "10.0.0.5", "::2", "localhost.example.org"])
def test_tls_none_is_refused_off_loopback(host: str) -> None:
    problem = single_problem(with_imap(Tls="none", Host=host))
    assert problem.startswith('Accounts[0].Imap.Tls: "none" is allowed only when Host is')


def test_host_with_spaces_is_refused() -> None:
    problem = single_problem(with_imap(Host="imap example org"))
    assert problem.startswith("Accounts[0].Imap.Host: must be a host name")


def test_positive_timeout_is_accepted() -> None:
    (parsed,) = parse(with_imap(TimeoutSeconds=30)).accounts
    assert parsed.imap is not None
    assert parsed.imap.timeout_seconds == 30.0


def test_non_positive_timeout_is_refused() -> None:
    problem = single_problem(with_imap(TimeoutSeconds=0))
    assert problem == "Accounts[0].Imap.TimeoutSeconds: must be greater than zero"


# --------------------------------------------------------------------------------------------
# Secret references


def test_secret_from_an_environment_variable_is_accepted() -> None:
    (parsed,) = parse(with_imap(Secret={"Env": "_IMAP_PASS_1"})).accounts
    assert parsed.imap is not None
    assert parsed.imap.secret == SecretRef(env="_IMAP_PASS_1")


def test_secret_file_resolves_against_the_config_directory() -> None:
    (parsed,) = parse(with_imap(Secret={"File": "secrets/work"})).accounts
    assert parsed.imap is not None
    assert parsed.imap.secret == SecretRef(file=BASE_DIR / "secrets" / "work")


def test_absolute_secret_file_is_kept() -> None:
    (parsed,) = parse(with_imap(Secret={"File": "/run/secrets/work"})).accounts
    assert parsed.imap is not None
    assert parsed.imap.secret == SecretRef(file=Path("/run/secrets/work"))


@pytest.mark.parametrize("secret", [{}, {"Env": "A", "File": "b"}])
def test_secret_needs_exactly_one_of_env_and_file(secret: dict[str, str]) -> None:
    problem = single_problem(with_imap(Secret=secret))
    assert problem == "Accounts[0].Imap.Secret: exactly one of Env or File must be given"


@pytest.mark.parametrize("name", ["1ABC", "WORK-PASS", "WORK PASS", "", "X=Y"])
def test_secret_env_must_be_a_valid_variable_name(name: str) -> None:
    problem = single_problem(with_imap(Secret={"Env": name}))
    assert problem.startswith("Accounts[0].Imap.Secret.Env: must be an environment variable name")


def test_secret_file_must_not_be_empty() -> None:
    assert single_problem(with_imap(Secret={"File": ""})) == (
        "Accounts[0].Imap.Secret.File: must not be empty"
    )


def test_literal_secret_string_is_refused_with_a_pointer_to_references() -> None:
    problem = single_problem(with_imap(Secret="correct horse battery staple"))
    assert problem.startswith("Accounts[0].Imap.Secret: a secret is not accepted in the file")
    assert "Env" in problem
    assert "File" in problem


@pytest.mark.parametrize("key", ["Password", "password", "Passwd", "Token", "ImapPassword"])
def test_literal_password_key_is_refused_with_a_pointer_to_references(key: str) -> None:
    account = imap_account()
    account["Imap"][key] = "correct horse battery staple"
    problem = single_problem({"Accounts": [account]})
    assert problem.startswith(f"Accounts[0].Imap.{key}: a secret is not accepted in the file")
    assert "Secret = { Env" in problem


def test_secret_value_key_inside_a_reference_is_refused() -> None:
    problem = single_problem(with_imap(Secret={"Env": "X", "Value": "hunter2"}))
    assert problem == "Accounts[0].Imap.Secret.Value: unknown key"


SENSITIVE = "s3cr3t-Value-42"


@pytest.mark.parametrize(
    "document",
    [
        with_imap(Secret=SENSITIVE),
        with_imap(Password=SENSITIVE),
        with_imap(Secret={"Env": SENSITIVE}),
        with_imap(Secret={"Env": SENSITIVE, "File": SENSITIVE}),
        with_imap(Secret={"File": "~" + SENSITIVE}),
        with_imap(Username=SENSITIVE + "\n"),
        with_imap(Host=SENSITIVE + " x"),
        {"Store": {"DatabaseUrl": f"postgresql://user:{SENSITIVE}@db/mail"}},
        {"Store": {"DatabaseUrl": f"postgresql://user@db/mail?password={SENSITIVE}"}},
        {"Store": {"DatabaseUrl": f"mysql://user:{SENSITIVE}@db/mail"}},
        {"Store": {"DatabaseUrl": f"postgresql://user:{SENSITIVE}@db:99999/mail"}},
        {"Store": {"DatabasePassword": SENSITIVE}},
        {"Accounts": [local_account(Addresses=[SENSITIVE])]},
    ],
)
def test_error_messages_never_contain_the_offending_value(document: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError) as caught:
        parse(document)
    assert SENSITIVE not in str(caught.value)
    assert SENSITIVE not in repr(caught.value)


def test_loading_never_reads_or_repeats_the_secrets_it_refers_to(
    tmp_path: Path, write_config: Callable[[str], Path]
) -> None:
    secret_file = tmp_path / "work.secret"
    secret_file.write_text(SENSITIVE, encoding="utf-8")
    path = write_config(
        "[[Accounts]]\n"
        'Id = "work"\nKind = "imap"\nPollIntervalSeconds = -1\n'
        "[Accounts.Imap]\n"
        'Host = "imap.example.org"\nUsername = "me"\nSecret = { File = "work.secret" }\n'
    )
    with pytest.raises(ConfigurationError) as caught:
        load_config(path, environ={"WORK_IMAP_PASSWORD": SENSITIVE})
    assert SENSITIVE not in str(caught.value)


def test_a_missing_secret_does_not_stop_loading() -> None:
    (parsed,) = parse(with_imap(Secret={"File": "/nonexistent/secret"})).accounts
    assert parsed.imap is not None


# --------------------------------------------------------------------------------------------
# Folders


def test_account_without_folders_is_accepted() -> None:
    (parsed,) = parse({"Accounts": [imap_account(Folders=[])]}).accounts
    assert parsed.folders == ()


def test_folder_alias_defaults_to_the_remote_name_and_visibility_to_true() -> None:
    (parsed,) = parse(with_folders({"Remote": "Archive/2024"})).accounts
    (folder,) = parsed.folders
    assert folder.alias == "Archive/2024"
    assert folder.visible_to_tools is True
    assert folder.role is None


def test_folder_can_be_hidden_from_tools() -> None:
    (parsed,) = parse(with_folders({"Remote": "Junk", "VisibleToTools": False})).accounts
    assert parsed.folders[0].visible_to_tools is False


def test_folder_remote_is_required_and_non_empty() -> None:
    problems = problems_of(with_folders({"Alias": "x"}, {"Remote": ""}))
    assert problems == [
        "Accounts[0].Folders[0].Remote: is required",
        "Accounts[0].Folders[1].Remote: must not be empty",
    ]


def test_folder_remote_names_must_be_unique_per_account() -> None:
    problem = single_problem(
        with_folders({"Remote": "Work", "Alias": "a"}, {"Remote": "Work", "Alias": "b"})
    )
    assert problem == (
        "Accounts[0].Folders[1].Remote: names the same folder as Accounts[0].Folders[0].Remote"
    )


def test_folder_remote_names_other_than_inbox_are_case_sensitive() -> None:
    (parsed,) = parse(
        with_folders({"Remote": "Work", "Alias": "a"}, {"Remote": "work", "Alias": "b"})
    ).accounts
    assert [folder.remote_name for folder in parsed.folders] == ["Work", "work"]


def test_inbox_remote_name_is_case_insensitive() -> None:
    problem = single_problem(
        with_folders({"Remote": "INBOX", "Alias": "a"}, {"Remote": "Inbox", "Alias": "b"})
    )
    assert problem.startswith("Accounts[0].Folders[1].Remote: names the same folder")


def test_same_remote_name_in_two_accounts_is_accepted() -> None:
    document = {"Accounts": [imap_account("a"), imap_account("b")]}
    assert len(parse(document).accounts) == 2


def test_folder_aliases_must_be_unique_case_insensitively() -> None:
    problem = single_problem(
        with_folders({"Remote": "A", "Alias": "Projects"}, {"Remote": "B", "Alias": "PROJECTS"})
    )
    assert problem.startswith("Accounts[0].Folders[1].Alias: equals Accounts[0].Folders[0].Alias")


@pytest.mark.parametrize(
    ("alias", "rule"),
    [
        ("", "must be 1 to 256 characters long"),
        ("a" * 257, "must be 1 to 256 characters long"),
        ("a\tb", "must not contain control characters"),
        ("a ", "must not begin or end with whitespace"),
    ],
)
def test_folder_alias_breaking_a_rule_is_refused(alias: str, rule: str) -> None:
    problem = single_problem(with_folders({"Remote": "X", "Alias": alias}))
    assert problem == f"Accounts[0].Folders[0].Alias: {rule}"


def test_folder_alias_of_256_characters_is_accepted() -> None:
    (parsed,) = parse(with_folders({"Remote": "X", "Alias": "a" * 256})).accounts
    assert parsed.folders[0].alias == "a" * 256


@pytest.mark.parametrize(
    ("text", "role"),
    [("Inbox", FolderRole.INBOX), ("sent", FolderRole.SENT), ("ALL", FolderRole.ALL)],
)
def test_folder_role_is_matched_case_insensitively(text: str, role: FolderRole) -> None:
    (parsed,) = parse(with_folders({"Remote": "X", "Role": text})).accounts
    assert parsed.folders[0].role is role


def test_unknown_folder_role_is_refused() -> None:
    problem = single_problem(with_folders({"Remote": "X", "Role": "Spam"}))
    assert problem.startswith("Accounts[0].Folders[0].Role: must be one of Inbox, Sent")


def test_a_role_may_be_given_once_per_account() -> None:
    problem = single_problem(
        with_folders({"Remote": "A", "Role": "Sent"}, {"Remote": "B", "Role": "sent"})
    )
    assert problem.startswith("Accounts[0].Folders[1].Role: is already given to")


def test_the_same_role_in_two_accounts_is_accepted() -> None:
    document = {"Accounts": [imap_account("a"), imap_account("b")]}
    assert all(account.folders[0].role is FolderRole.INBOX for account in parse(document).accounts)


def test_visible_to_tools_must_be_a_boolean() -> None:
    problem = single_problem(with_folders({"Remote": "X", "VisibleToTools": "no"}))
    assert problem == "Accounts[0].Folders[0].VisibleToTools: must be true or false"


def test_an_account_collects_contacts_unless_told_not_to() -> None:
    document = {
        "Accounts": [
            imap_account("a"),
            imap_account("b", CollectContacts=False),
            local_account("c", CollectContacts=True),
        ]
    }
    collects = [account.collect_contacts for account in parse(document).accounts]
    assert collects == [True, False, True]


@pytest.mark.parametrize("value", ["false", 0, 1, "yes"])
def test_collect_contacts_must_be_a_boolean(value: object) -> None:
    problem = single_problem({"Accounts": [imap_account(CollectContacts=value)]})
    assert problem == "Accounts[0].CollectContacts: must be true or false"


def test_remote_images_are_blocked_unless_an_account_allows_them() -> None:
    document = {
        "Accounts": [
            imap_account("a"),
            imap_account("b", RemoteImages="allow"),
            local_account("c", RemoteImages="block"),
        ]
    }
    chosen = [account.remote_images for account in parse(document).accounts]
    assert chosen == [RemoteImages.BLOCK, RemoteImages.ALLOW, RemoteImages.BLOCK]


def test_remote_images_must_be_block_or_allow() -> None:
    problem = single_problem({"Accounts": [imap_account(RemoteImages="yes")]})
    assert problem == "Accounts[0].RemoteImages: must be one of block | allow"


# --------------------------------------------------------------------------------------------
# Sync mode, intervals and sizes


def test_sync_mode_must_be_polling_or_push() -> None:
    problem = single_problem({"Accounts": [imap_account(SyncMode="idle")]})
    assert problem == "Accounts[0].SyncMode: must be one of polling | push"


@pytest.mark.parametrize("interval", [1, 0.5, 3600])
def test_positive_poll_interval_is_accepted(interval: float) -> None:
    (parsed,) = parse({"Accounts": [imap_account(PollIntervalSeconds=interval)]}).accounts
    assert parsed.poll_interval_seconds == float(interval)


@pytest.mark.parametrize("interval", [0, -5, float("inf"), float("nan")])
def test_non_positive_or_non_finite_poll_interval_is_refused(interval: float) -> None:
    problem = single_problem({"Accounts": [imap_account(PollIntervalSeconds=interval)]})
    assert problem.startswith("Accounts[0].PollIntervalSeconds: must be")


@pytest.mark.parametrize(
    ("size", "octets"),
    [
        (1024, 1024),
        ("1024", 1024),
        ("512B", 512),
        ("25MB", 25_000_000),
        ("25 mb", 25_000_000),
        ("2KB", 2000),
        ("2KiB", 2048),
        ("3MiB", 3 * 1024**2),
        ("1GB", 10**9),
        ("1.5GiB", 3 * 1024**3 // 2),
        ("2TB", 2 * 10**12),
    ],
)
def test_sizes_accept_bytes_or_a_unit(size: object, octets: int) -> None:
    (parsed,) = parse(
        {"Accounts": [local_account(MaxMessageSize=size, StorageCeiling=size)]}
    ).accounts
    assert parsed.max_message_octets == octets
    assert parsed.storage_ceiling_octets == octets


@pytest.mark.parametrize(
    "size", ["25 megabytes", "MB", "-5MB", "1.5", "0.0001KB", 2.5, True, "25M"]
)
def test_malformed_sizes_are_refused(size: object) -> None:
    problem = single_problem({"Accounts": [local_account(MaxMessageSize=size)]})
    assert problem.startswith("Accounts[0].MaxMessageSize: must be a whole number of bytes")


def test_sizes_beyond_a_64_bit_count_are_refused() -> None:
    problem = single_problem({"Accounts": [local_account(StorageCeiling=2**63)]})
    assert problem.startswith("Accounts[0].StorageCeiling: must be less than")


def test_a_number_too_large_for_a_float_is_refused() -> None:
    problem = single_problem({"Accounts": [local_account(PollIntervalSeconds=10**400)]})
    assert problem == "Accounts[0].PollIntervalSeconds: must be a finite number"


@pytest.mark.parametrize("key", ["MaxMessageSize", "StorageCeiling"])
@pytest.mark.parametrize("size", [0, -1, "0MB"])
def test_sizes_must_be_greater_than_zero(key: str, size: object) -> None:
    account = local_account()
    account[key] = size
    problem = single_problem({"Accounts": [account]})
    assert problem == f"Accounts[0].{key}: must be greater than zero"


def test_addresses_must_look_like_addresses() -> None:
    problems = problems_of(
        {"Accounts": [local_account(Addresses=["me@example.org", "not-an-address", "a b@c"])]}
    )
    assert [problem.split(":")[0] for problem in problems] == [
        "Accounts[0].Addresses[1]",
        "Accounts[0].Addresses[2]",
    ]


def test_addresses_must_not_repeat() -> None:
    problem = single_problem(
        {"Accounts": [local_account(Addresses=["me@example.org", "ME@example.org"])]}
    )
    assert problem.startswith("Accounts[0].Addresses[1]: repeats")


# --------------------------------------------------------------------------------------------
# Store and Sync


def test_data_dir_resolves_against_the_config_directory() -> None:
    assert parse({"Store": {"DataDir": "./state"}}).store.data_dir == BASE_DIR / "state"


def test_absolute_data_dir_is_kept() -> None:
    assert parse({"Store": {"DataDir": "/var/lib/mf"}}).store.data_dir == Path("/var/lib/mf")


def test_data_dir_with_a_tilde_is_under_the_home_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOME", "/home/owner")
    assert parse({"Store": {"DataDir": "~/mail"}}).store.data_dir == Path("/home/owner/mail")


def test_relative_paths_in_a_loaded_file_resolve_against_its_directory(
    tmp_path: Path, write_config: Callable[[str], Path]
) -> None:
    path = write_config('[Store]\nDataDir = "state"\n')
    assert load_config(path).store.data_dir == tmp_path.resolve() / "state"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "postgresql+psycopg://mf@db.internal:5432/mail",
            "postgresql+psycopg://mf@db.internal:5432/mail",
        ),
        ("postgresql://mf@db.internal/mail", "postgresql+psycopg://mf@db.internal/mail"),
        ("postgresql:///mail", "postgresql+psycopg:///mail"),
        ("sqlite:///state.db", f"sqlite:///{BASE_DIR}/state.db"),
        ("sqlite:////var/lib/mf/state.db", "sqlite:////var/lib/mf/state.db"),
        ("sqlite://", "sqlite://"),
    ],
)
def test_database_url_accepts_sqlite_and_postgresql(url: str, expected: str) -> None:
    assert parse({"Store": {"DatabaseUrl": url}}).store.database_url == expected


@pytest.mark.parametrize(
    "url", ["mysql://mf@db/mail", "postgresql+psycopg2://mf@db/mail", "db.sqlite", "sqlite:x"]
)
def test_database_url_with_another_scheme_is_refused(url: str) -> None:
    problem = single_problem({"Store": {"DatabaseUrl": url}})
    assert problem.startswith("Store.DatabaseUrl: ")


def test_database_url_with_a_password_is_refused() -> None:
    problem = single_problem({"Store": {"DatabaseUrl": "postgresql://mf:pw@db/mail"}})
    assert problem.startswith("Store.DatabaseUrl: must not contain a password")
    assert "DatabasePasswordSecret" in problem


def test_database_password_is_given_by_reference() -> None:
    store = parse(
        {
            "Store": {
                "DatabaseUrl": "postgresql+psycopg://mf@db/mail",
                "DatabasePasswordSecret": {"Env": "MF_DB_PASSWORD"},
            }
        }
    ).store
    assert store.database_password_secret == SecretRef(env="MF_DB_PASSWORD")
    assert store.database_password_secret.origin == "Store.DatabasePasswordSecret"


def test_database_password_secret_without_postgresql_is_refused() -> None:
    for store in (
        {"DatabasePasswordSecret": {"Env": "MF_DB_PASSWORD"}},
        {"DatabaseUrl": "sqlite:///x.db", "DatabasePasswordSecret": {"Env": "MF_DB_PASSWORD"}},
    ):
        problem = single_problem({"Store": store})
        assert problem.startswith("Store.DatabasePasswordSecret: applies only to a PostgreSQL")


def test_literal_database_password_is_refused() -> None:
    problem = single_problem({"Store": {"DatabasePassword": "pw"}})
    assert problem.startswith("Store.DatabasePassword: a secret is not accepted in the file")


def test_sync_settings_are_read() -> None:
    sync = parse({"Sync": {"Enabled": False, "BatchMessages": 50, "BatchSize": "2MiB"}}).sync
    assert (sync.enabled, sync.batch_messages, sync.batch_octets) == (False, 50, 2 * 1024**2)


def test_sync_lease_seconds_is_read_and_bounded() -> None:
    assert parse({}).sync.lease_seconds == 30.0
    assert parse({"Sync": {"LeaseSeconds": 1.5}}).sync.lease_seconds == 1.5
    for wrong in (0.5, 3601):
        problem = single_problem({"Sync": {"LeaseSeconds": wrong}})
        assert problem == "Sync.LeaseSeconds: must be from 1 to 3600"


def test_sync_batch_messages_must_be_positive() -> None:
    problem = single_problem({"Sync": {"BatchMessages": 0}})
    assert problem == "Sync.BatchMessages: must be greater than zero"


def test_inbox_in_any_case_names_the_servers_inbox() -> None:
    (folder,) = parse(with_folders({"Remote": "inbox"})).accounts[0].folders
    assert folder.remote_name == "INBOX"
    assert folder.alias == "inbox"
