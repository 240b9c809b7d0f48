"""What each failure code on an outgoing record means, in words an operator reads without
the documentation (`mfctl outbox`, the console's outbox). Fixed sentences: nothing from the
message or a server's reply."""

from __future__ import annotations

from mailfathom.domain.codes import DeliveryCode

FAILURE_EXPLANATIONS: dict[DeliveryCode, str] = {
    DeliveryCode.REFUSED_BY_SERVER: (
        "The submission server refused the message, or every recipient, for good."
    ),
    DeliveryCode.ATTEMPTS_SPENT: (
        "Every configured attempt failed for a temporary reason (no connection, or the "
        "server asked to try later), so the send was given up."
    ),
    DeliveryCode.OUTCOME_UNKNOWN: (
        "The connection ended after the message was handed over and before the server "
        "answered; it may have been accepted, so it is not offered again."
    ),
    DeliveryCode.NO_ROUTE: (
        "A recipient is outside this deployment and the account declares no submission "
        "server to carry mail there."
    ),
    DeliveryCode.NOT_AUTHENTICATED: (
        "The submission server did not accept the account's user name and secret."
    ),
    DeliveryCode.TEMPORARY_FAILURE: (
        "The last attempt failed for a temporary reason; the send waits to be tried again."
    ),
    DeliveryCode.PEER_DELIVERY_FAILED: (
        "A mailbox of this deployment the message was addressed to could not take it."
    ),
    DeliveryCode.SECRET_UNREADABLE: (
        "The secret for the account's submission server could not be read (an unset "
        "variable or a missing file); nothing was offered, and nothing will be until it "
        "can be read."
    ),
    DeliveryCode.WAITING_FOR_CONSENT: (
        "The account logs in with OAuth and its provider refused the grant; the send waits, "
        "queued, until the person grants access again (mfctl account consent)."
    ),
}

# A code this version has no sentence for (a newer version wrote the record).
UNDESCRIBED = "A failure this version does not describe."


def explain(code: int) -> str:
    try:
        return FAILURE_EXPLANATIONS[DeliveryCode(code)]
    except ValueError:
        return UNDESCRIBED
