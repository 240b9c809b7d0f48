"""Naming a process so that another process of the same machine can tell whether it still runs.

A lease row names the process that claimed it (`MachineProcesses.identity`): the machine, the
process id and the moment the process started, in the kernel's clock ticks since boot. The
machine part is a digest of the host name, the kernel's boot id and the process-id namespace,
so two containers sharing a kernel, or one machine before and after a reboot, are different
machines. A process of the same machine is `gone` when no process has that id any more, when
the one that has it started at another moment (the id was reused), or when it is a zombie
(killed, not yet reaped). A process of another machine is never judged gone here: only its
lease's expiry, on the store's clock, frees what it holds.

Reads Linux's /proc; where it cannot be read, `this_machine` answers None and leases are
freed by their expiry alone.
"""

from __future__ import annotations

import functools
import hashlib
import os
import socket
from collections.abc import Iterable
from pathlib import Path

_PROC = Path("/proc")
# Process states of a process that has ended and only waits for its parent to reap it.
_ENDED_STATES = frozenset({"Z", "X", "x"})
# The start of a process whose entry this process may not read: running, start unknown.
_UNREADABLE = -1


class MachineProcesses:
    """The processes of one machine, as lease rows name them."""

    def __init__(self, machine: str) -> None:
        self.machine = machine

    def identity(self, pid: int) -> str | None:
        """How lease rows name process `pid` of this machine (None: no such process)."""
        started = _started(pid)
        return None if started is None else f"{self.machine}/{pid}/{started}"

    def own(self) -> str | None:
        """How lease rows name the calling process."""
        return self.identity(os.getpid())

    def mine(self, identity: str) -> bool:
        """Whether `identity` names a process of this machine."""
        return identity.startswith(f"{self.machine}/")

    def gone_among(self, identities: Iterable[str | None]) -> list[str]:
        """The distinct `identities` that name gone processes of this machine."""
        return [p for p in dict.fromkeys(identities) if p is not None and self.gone(p)]

    def gone(self, identity: str) -> bool:
        """Whether the process `identity` names has provably ended: it is of this machine and
        its id names no process, or a process that started at another moment."""
        if not self.mine(identity):
            return False
        try:
            _, pid, started = identity.split("/")
            now = _started(int(pid))
            return now is None or now not in (_UNREADABLE, int(started))
        except ValueError:
            return False


@functools.cache
def this_machine() -> MachineProcesses | None:
    """This machine's processes, or None where /proc does not tell them apart."""
    try:
        boot = (_PROC / "sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink(_PROC / "self/ns/pid")
    except OSError:
        return None
    if _started(os.getpid()) in (None, _UNREADABLE):
        return None
    seed = "\0".join((socket.gethostname(), boot, namespace))
    return MachineProcesses(hashlib.sha256(seed.encode()).hexdigest()[:16])


def this_process() -> str | None:
    """How lease rows name the calling process (None where processes cannot be told apart)."""
    machine = this_machine()
    return None if machine is None else machine.own()


def _started(pid: int) -> int | None:
    """When process `pid` started, in clock ticks since boot; None when no running process has
    that id. A process whose entry cannot be read for lack of permission, or that /proc hides
    (`hidepid`, systemd's `ProtectProc=invisible` hide other users' processes), is taken as
    running: only the kernel's own answer that no process has the id makes it gone."""
    if pid <= 0:
        return None
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None if _no_such_process(pid) else _UNREADABLE
    except OSError:
        return _UNREADABLE
    # The command name (second field) may hold spaces and parentheses: split after its end.
    fields = stat[stat.rindex(")") + 2 :].split()
    if fields[0] in _ENDED_STATES:
        return None
    return int(fields[19])


def _no_such_process(pid: int) -> bool:
    """Whether the kernel says no process has id `pid` (signal 0 checks without sending)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
