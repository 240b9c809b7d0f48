"""A lease held by a process of this machine that is provably gone is taken at once, on SQLite
and PostgreSQL: a `sync` or worker restarted after being killed does not wait out its dead
predecessor. A live holder keeps its lease, a process id now naming another process does not
pass for the holder, and a holder on another machine is judged by its lease's expiry alone."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from mailfathom.adapters import processes
from mailfathom.adapters.processes import MachineProcesses, this_process
from mailfathom.adapters.sql.work_leases import SqlWorkLeases
from mailfathom.app.sync.lease_ports import Lease, LeaseKind

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
LEASE = timedelta(seconds=30)
ACCOUNT = LeaseKind.ACCOUNT


def _holder(
    engine: sa.Engine, machine: MachineProcesses, process: str
) -> tuple[SqlWorkLeases, Lease]:
    leases = SqlWorkLeases(engine, machine=machine, process=process)
    leases.offer(ACCOUNT, ["a1"])
    (lease,) = leases.claim("killed", ACCOUNT, ["a1"], T0, T0 + LEASE, limit=1)
    return leases, lease


@pytest.mark.parametrize("reaped", [True, False], ids=["reaped", "zombie"])
def test_a_lease_whose_holder_process_is_gone_is_taken_at_once_under_a_higher_fence(
    engine: sa.Engine,
    machine: MachineProcesses,
    stand_in: subprocess.Popen[bytes],
    reaped: bool,
) -> None:
    identity = machine.identity(stand_in.pid)
    assert identity is not None
    holder, lease = _holder(engine, machine, identity)
    claimant = SqlWorkLeases(engine, machine=machine)
    assert claimant.claim("next", ACCOUNT, ["a1"], T0, T0 + LEASE, limit=1) == []
    stand_in.kill()
    if reaped:
        stand_in.wait()
    else:  # ended, left unreaped by its parent
        os.waitid(os.P_PID, stand_in.pid, os.WEXITED | os.WNOWAIT)
    early = T0 + LEASE / 10
    taken = claimant.claim("next", ACCOUNT, ["a1"], early, early + LEASE, limit=1)
    assert taken == [Lease(ACCOUNT, "a1", lease.fence + 1)]
    assert claimant.holders(ACCOUNT) == {"a1": "next"}
    assert holder.renew("killed", [lease], early, early + LEASE) == set()


def test_a_live_holder_of_this_machine_keeps_its_lease_until_it_expires(
    engine: sa.Engine, machine: MachineProcesses
) -> None:
    mine = this_process()
    assert mine is not None
    holder, lease = _holder(engine, machine, mine)
    claimant = SqlWorkLeases(engine, machine=machine, process=mine)
    for moment in (T0, T0 + LEASE / 2, T0 + LEASE - timedelta(seconds=1)):
        assert claimant.claim("other", ACCOUNT, ["a1"], moment, moment + LEASE, limit=1) == []
    assert holder.renew("killed", [lease], T0, T0 + LEASE) == {"a1"}


def test_a_process_id_now_naming_another_process_does_not_pass_for_the_holder(
    engine: sa.Engine, machine: MachineProcesses, stand_in: subprocess.Popen[bytes]
) -> None:
    """The holder's id reused by a process that started at another moment: the holder is
    gone, though a process with its id runs."""
    identity = machine.identity(stand_in.pid)
    assert identity is not None
    started = int(identity.rsplit("/", 1)[1])
    earlier = f"{machine.machine}/{stand_in.pid}/{started - 1}"
    _, lease = _holder(engine, machine, earlier)
    claimant = SqlWorkLeases(engine, machine=machine)
    (taken,) = claimant.claim("next", ACCOUNT, ["a1"], T0, T0 + LEASE, limit=1)
    assert taken.fence == lease.fence + 1
    assert stand_in.poll() is None, "the process now holding the id was left alone"


def test_a_holder_on_another_machine_is_judged_by_its_lease_expiry_alone(
    engine: sa.Engine, machine: MachineProcesses
) -> None:
    elsewhere = MachineProcesses("0" * 16 if machine.machine != "0" * 16 else "1" * 16)
    _, lease = _holder(engine, machine, f"{elsewhere.machine}/999999999/1")
    claimant = SqlWorkLeases(engine, machine=machine)
    late = T0 + LEASE - timedelta(seconds=1)
    assert claimant.claim("next", ACCOUNT, ["a1"], late, late + LEASE, limit=1) == []
    expired = T0 + LEASE
    (taken,) = claimant.claim("next", ACCOUNT, ["a1"], expired, expired + LEASE, limit=1)
    assert taken.fence == lease.fence + 1


def test_a_gone_worker_of_this_machine_is_no_longer_counted_alive(
    engine: sa.Engine, machine: MachineProcesses, stand_in: subprocess.Popen[bytes]
) -> None:
    """Its share goes to the workers left at their next heartbeat, not a lease period later."""
    identity = machine.identity(stand_in.pid)
    assert identity is not None
    SqlWorkLeases(engine, machine=machine, process=identity).beat("killed", T0, T0 + LEASE)
    leases = SqlWorkLeases(engine, machine=machine)
    assert leases.beat("next", T0, T0 + LEASE) == ["killed", "next"]
    stand_in.kill()
    stand_in.wait()
    assert leases.beat("next", T0, T0 + LEASE) == ["next"]


def test_this_process_is_not_gone_and_an_ended_one_is(machine: MachineProcesses) -> None:
    mine = this_process()
    assert mine is not None
    assert machine.mine(mine)
    assert not machine.gone(mine)
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True
    )
    pid = int(ended.stdout)
    assert machine.gone(f"{machine.machine}/{pid}/1")


def test_a_live_process_hidden_from_proc_is_not_taken_for_gone(
    machine: MachineProcesses, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """/proc may hide a running process: mounted with `hidepid`, or a systemd unit's
    `ProtectProc=invisible` hides the processes of other users, such as a one-off `sync` an
    operator runs as another user beside the service. Hidden is not gone: only a process id
    that names no process at all frees the lease at once."""
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        identity = machine.identity(live.pid)
        assert identity is not None
        monkeypatch.setattr(processes, "_PROC", tmp_path)  # a /proc that shows no process
        assert not machine.gone(identity)
    finally:
        live.kill()
        live.wait()
    assert machine.gone(identity)
