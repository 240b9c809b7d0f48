"""Credentials: private key blocks, tokens with the prefixes their issuers give them, and the
value of a `password: …` line.

Tokens are found by detect-secrets' rule set (its detectors' patterns, and its formal check of
a JSON Web Token); the detectors are used for their patterns only, never for their network
verification. Google API keys and whole key blocks (the rule set names only the first line)
are added here. A password line is recognised by its label in English, Czech, Slovak and
German, and only the value after the colon or equals sign is a finding.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import cast

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from mailfathom.domain.sensitive_content import Finding, SensitiveCategory

_CATEGORY = SensitiveCategory.CREDENTIAL

_DETECTORS: tuple[type[RegexBasedDetector], ...] = (
    AWSKeyDetector,
    AzureStorageKeyDetector,
    DiscordBotTokenDetector,
    GitHubTokenDetector,
    GitLabTokenDetector,
    MailchimpDetector,
    OpenAIDetector,
    PypiTokenDetector,
    SendGridDetector,
    SlackDetector,
    SquareOAuthDetector,
    StripeDetector,
    TelegramBotTokenDetector,
    TwilioKeyDetector,
)


def _patterns(detector: type[RegexBasedDetector]) -> Iterable[re.Pattern[str]]:
    """A detector's patterns: a class attribute, though the base declares a property."""
    return cast("Iterable[re.Pattern[str]]", detector.denylist)


_TOKEN_PATTERNS: tuple[re.Pattern[str], ...] = (
    *(pattern for detector in _DETECTORS for pattern in _patterns(detector)),
    re.compile(r"AIza[0-9A-Za-z_\-]{35}"),
)
_JWT_PATTERNS: tuple[re.Pattern[str], ...] = tuple(_patterns(JwtTokenDetector))
_SIGNATURE = re.compile(r"[A-Za-z0-9_\-+/=]*")
_KEY_BLOCK = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)"
    r"|PuTTY-User-Key-File-\d+:.*?(?:Private-MAC: *\S+|\Z)",
    re.DOTALL,
)
_PASSWORD_LINE = re.compile(
    r"(?<!\w)(?:password|passwd|pwd|passphrase|heslo|hesla|passwort|kennwort)"
    r"(?:\s*\([^)\n]{0,24}\))?[ \t]*[:=][ \t]*(?P<value>[^\s]{1,128})",
    re.IGNORECASE,
)


def find(text: str) -> Iterator[Finding]:
    for block in _KEY_BLOCK.finditer(text):
        yield Finding(block.start(), block.end(), _CATEGORY)
    for pattern in _TOKEN_PATTERNS:
        for match in pattern.finditer(text):
            yield Finding(match.start(), match.end(), _CATEGORY)
    for pattern in _JWT_PATTERNS:
        for match in pattern.finditer(text):
            # The rule set's pattern stops before the signature; the finding runs over it.
            end = _SIGNATURE.match(text, match.end())
            whole = text[match.start() : end.end() if end else match.end()]
            if JwtTokenDetector.is_formally_valid(whole):
                yield Finding(match.start(), match.start() + len(whole), _CATEGORY)
    for line in _PASSWORD_LINE.finditer(text):
        yield Finding(line.start("value"), line.end("value"), _CATEGORY)
