"""The statement listener of the store suites (account_scope.py) tells a statement scoped to
one account from one that is not, in both databases' ways of naming a list."""

from __future__ import annotations

from .account_scope import unscoped


def test_a_list_of_accounts_counts_in_either_database_s_form() -> None:
    assert unscoped("SELECT seq FROM parts WHERE parts.account_id IN (?, ?) AND seq IN (?)") is None
    assert (
        unscoped(
            "SELECT parts.seq FROM parts WHERE parts.account_id = ANY (%(accounts)s) "
            "AND parts.seq = ANY (%(seqs)s)"
        )
        is None
    )


def test_a_statement_naming_no_account_is_not_scoped() -> None:
    assert unscoped("SELECT seq FROM parts WHERE seq = ANY (%(seqs)s)") is not None
    assert unscoped("INSERT INTO draft_files (draft_seq, position) VALUES (?, ?)") is not None


def test_a_child_joined_by_its_parent_s_key_alone_is_not_scoped() -> None:
    assert (
        unscoped(
            "SELECT messages.seq FROM messages JOIN parts ON parts.seq = messages.seq "
            "WHERE messages.account_id = ?"
        )
        is not None
    )
    assert (
        unscoped(
            "SELECT drafts.draft_id FROM drafts JOIN draft_copies "
            "ON draft_copies.draft_seq = drafts.seq WHERE drafts.account_id = ?"
        )
        is not None
    )
    assert (
        unscoped(
            "SELECT drafts.draft_id FROM drafts JOIN draft_copies "
            "ON draft_copies.account_id = drafts.account_id "
            "AND draft_copies.draft_seq = drafts.seq WHERE drafts.account_id = ?"
        )
        is None
    )
