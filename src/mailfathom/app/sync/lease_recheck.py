"""`LeaseRecheck`: asking, before an action the store's fence does not cover, whether the
work still holds its lease.

Fencing (`lease_ports.Fencing`) refuses a former holder's store writes, not what it does to
the content store. Storing content is harmless there (a key names one content, so a former
holder writes the very octets the new holder would), but deleting it is not: the new holder
may just have stored a message with the same content and named it from a row, and the
former holder's delete would leave that row naming nothing until a repair fetches it again.
A pass therefore rechecks its lease right before it deletes content. What remains is the
moment between the recheck and the delete; a message lost in it reads as missing and is
repaired by the next pass, as any missing content is.
"""

from __future__ import annotations

from typing import Protocol


class LeaseRecheck(Protocol):
    def recheck(self) -> None:
        """Raise `LeaseLost` (after the fence's `on_lost`) when the work running in this
        context is fenced and its worker no longer holds the lease; return otherwise
        (outside any fence, at once)."""
