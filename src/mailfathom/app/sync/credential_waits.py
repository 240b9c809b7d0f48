"""How a continuous run waits for a person or an operator to act on its account's login:
a new grant after the provider asked for consent again, or a secret replacing the one the
server refused. Both read only what is stored locally: asking the server again with a refused
secret cannot succeed and may have the mailbox locked out."""

from __future__ import annotations

import threading

import structlog

from mailfathom.app.sync.ports import ConsentWait, LoginSecrets
from mailfathom.domain.config import AccountConfig
from mailfathom.domain.errors import SecretUnavailable

log = structlog.get_logger("mailfathom.sync")

CONSENT_SLICE = 5.0  # how often an account waiting for consent reads its refresh token


class CredentialWaits:
    def __init__(self, consent: ConsentWait | None, login_secrets: LoginSecrets | None) -> None:
        # How a run waiting for a person's new grant learns that one was written (without
        # asking the provider). The connector's logins write the account's health down.
        self._consent = consent
        # How a run whose login the server refused learns that the secret was replaced
        # (reading it locally, never asking the server again with the refused one).
        self._login_secrets = login_secrets

    def await_consent(self, account: AccountConfig, stop: threading.Event) -> bool:
        """Wait, reading only the local refresh token, until a new one is written (True:
        the run resumes) or the run stops (False). Without a way to tell, the run ends as
        it does for refused credentials."""
        log.error("account.consent_required", account=account.account_id, error_code=31003)
        if self._consent is None:
            return False
        interval = min(CONSENT_SLICE, account.poll_interval_seconds)
        while not stop.is_set():
            if not self._consent.consent_pending(account):
                log.info("account.consent_renewed", account=account.account_id)
                return True
            stop.wait(interval)
        return False

    def await_new_secret(self, account: AccountConfig, stop: threading.Event) -> bool:
        """Wait, reading only the local secrets, until the ones the server refused are
        replaced (True: the run resumes) or the run stops (False). Without a way to tell,
        the run ends: the account's health says why."""
        log.error("account.credentials_refused", account=account.account_id, error_code=31002)
        if self._login_secrets is None:
            return False
        secrets = self._login_secrets
        try:
            refused: str | None = secrets.fingerprint(account)
        except SecretUnavailable:
            refused = None  # whatever can be read later is another secret
        interval = min(CONSENT_SLICE, account.poll_interval_seconds)
        said: str | None = None
        while not stop.wait(interval):
            try:
                now = secrets.fingerprint(account)
            except SecretUnavailable as error:
                if error.origin != said:
                    said = error.origin
                    log.error(
                        "account.secret_not_readable",
                        account=account.account_id,
                        key=error.origin,
                        error_code=error.code,
                    )
                continue
            said = None
            if now != refused:
                log.info("account.credentials_replaced", account=account.account_id)
                return True
        return False
