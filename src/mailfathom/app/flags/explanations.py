"""What each failure code on a mutation record means, in words an operator reads without the
documentation. Fixed sentences: nothing of the message, the change or a server's reply."""

from __future__ import annotations

from mailfathom.domain.mutations import MutationFailure

FAILURE_EXPLANATIONS: dict[MutationFailure, str] = {
    MutationFailure.MESSAGE_GONE: (
        "The message was no longer in its folder on the mail server (deleted, moved, or the "
        "folder was renumbered), so there was nothing to change."
    ),
    MutationFailure.KEYWORD_NOT_PERMANENT: (
        "The folder does not keep that keyword permanently (a local Maildir keeps none), so "
        "the change could not be stored."
    ),
    MutationFailure.CHANGED_ON_SERVER: (
        "The message was changed on the mail server after the change was asked for and before "
        "it was issued; the server's change was kept and the local copy reads it back."
    ),
    MutationFailure.ATTEMPTS_SPENT: (
        "Every attempt to issue the change failed (no connection, or the server refused the "
        "command), so it was given up."
    ),
    MutationFailure.FOLDER_GONE: (
        "The folder the message was in, or the one it was to move to, is no longer on the "
        "mail server or no longer mapped."
    ),
    MutationFailure.MOVE_NOT_OFFERED: (
        "The mail server offers neither MOVE nor UIDPLUS, so the message could only have been "
        "moved by expunging everything marked deleted in its folder; nothing was done."
    ),
    MutationFailure.MOVE_NOT_CONFIRMED: (
        "The copy could not be found in the destination folder (the server named no new UID "
        "and the message has no Message-ID to find it by), so the original was left in place."
    ),
    MutationFailure.FOLDER_EXISTS: (
        "A folder of that name, and of each of its numbered names (name 2 to name 10), was "
        "already on the mail server; none was taken over, since the deployment may not serve "
        "them. The operator can map one in the configuration, or free a name."
    ),
    MutationFailure.FOLDER_NAME_REFUSED: (
        "The mail server refused to create the folder, or the name holds the character the "
        "server separates folder levels with."
    ),
}

# What a folder creation record's code means where a message's sentence would not fit; the
# codes a creation ends with otherwise (8, 9) speak of creating a folder already.
CREATION_EXPLANATIONS: dict[MutationFailure, str] = {
    MutationFailure.ATTEMPTS_SPENT: (
        "Every attempt to create the folder failed (no connection, or the server did not "
        "complete the command), so it was given up."
    ),
    MutationFailure.FOLDER_GONE: (
        "The folder the new one was to be created under is no longer on the mail server or "
        "no longer mapped."
    ),
}

# A code this version has no sentence for (a newer version wrote the record).
UNDESCRIBED = "A failure this version does not describe."


def explain(code: int, *, creation: bool = False) -> str:
    """The sentence for a record's code; `creation` for a folder creation record's."""
    try:
        failure = MutationFailure(code)
    except ValueError:
        return UNDESCRIBED
    if creation and failure in CREATION_EXPLANATIONS:
        return CREATION_EXPLANATIONS[failure]
    return FAILURE_EXPLANATIONS[failure]
