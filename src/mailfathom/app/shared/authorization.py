"""Whether a caller may reach a use case.

Each use case declares the permissions it needs once, as the constant `PERMISSIONS` of the
module named like its tool; the endpoint's listing, the endpoint's call-time check and the use
case's own check all read that declaration. No permission implies another: a caller is served
a use case only when its grant names every permission the use case declares.
"""

from __future__ import annotations

from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.errors import PermissionDenied

Permissions = frozenset[Permission]


def permits(caller: Caller, permissions: Permissions) -> bool:
    return all(caller.may(p) for p in permissions)


def require(caller: Caller, permissions: Permissions) -> None:
    if not permits(caller, permissions):
        raise PermissionDenied("The caller's grant does not permit this call.")
