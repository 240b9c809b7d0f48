"""The one address form a message is sent to: a plain ASCII address, no display name."""

from __future__ import annotations

import re

from mailfathom.domain import text_rules
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal

_LOCAL = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*")
_DOMAIN = re.compile(r"([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9-]{1,63}")
_MAX_ADDRESS = 254


def _composable(message: str) -> Refusal:
    return Refusal(Code.MESSAGE_FIELD_NOT_COMPOSABLE, message)


def is_plain_address(value: str) -> bool:
    """Whether `value` is one plain ASCII address (RFC 5321 local-part@domain, dot-atom form)
    with nothing around it."""
    if not text_rules.is_one_line(value) or not value.isascii():
        return False
    local, at, domain = value.rpartition("@")
    return bool(
        at
        and len(value) <= _MAX_ADDRESS
        and _LOCAL.fullmatch(local)
        and len(local) <= 64
        and _DOMAIN.fullmatch(domain)
        and "." in domain
    )


def plain_address(value: object, field: str) -> str:
    """A plain ASCII address (RFC 5321 local-part@domain, dot-atom form), without a display
    name. A line break, a space, a non-ASCII character or anything but one address is 51013."""
    if not isinstance(value, str):
        raise _composable(f"An entry of {field} is not text.")
    if not text_rules.is_one_line(value):
        raise _composable(f"An entry of {field} carries a line break or a control character.")
    if not value.isascii():
        raise _composable(
            f"An entry of {field} is not an ASCII address; addresses outside ASCII are not sent."
        )
    if not is_plain_address(value):
        raise _composable(
            f"An entry of {field} is not a plain address (local@domain, no display name)."
        )
    return value
