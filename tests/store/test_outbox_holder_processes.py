"""A send claimed by a delivery worker of this machine that was killed is recovered at once by
the next pass, on SQLite and PostgreSQL, as if its lease had expired: queued again when no
transmission began, failed with an unknown outcome when one had. A live claimant keeps it."""

from __future__ import annotations

import subprocess
import uuid
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from mailfathom.adapters.processes import MachineProcesses
from mailfathom.adapters.sql.outbox import SqlOutbox
from mailfathom.domain.codes import DeliveryCode
from mailfathom.domain.outgoing import Stage
from store.test_outbox_contract import _new

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
LEASE_SECONDS = 300


def _queued(outbox: SqlOutbox) -> uuid.UUID:
    return outbox.record(_new(), [])[0].outgoing_id


@pytest.mark.parametrize("transmitted", [False, True], ids=["queued-again", "outcome-unknown"])
def test_a_send_claimed_by_a_gone_process_of_this_machine_is_recovered_at_once(
    engine: sa.Engine,
    machine: MachineProcesses,
    stand_in: subprocess.Popen[bytes],
    transmitted: bool,
) -> None:
    claimant = SqlOutbox(engine, machine=machine, process=machine.identity(stand_in.pid))
    sent = _queued(claimant)
    (claimed,) = claimant.claim("killed", T0, LEASE_SECONDS, 1)
    if transmitted:
        assert claimant.begin_transmission(claimed.seq, "killed", T0)
    next_pass = SqlOutbox(engine, machine=machine)
    soon = T0 + timedelta(seconds=1)
    assert next_pass.recover(soon, soon, 5) == 0, "a live claimant keeps its send"
    stand_in.kill()
    stand_in.wait()
    assert next_pass.recover(soon, soon, 5) == 1
    after = next_pass.find(sent)
    assert after is not None
    if transmitted:
        assert (after.stage, after.failure_code) == (
            Stage.FAILED,
            int(DeliveryCode.OUTCOME_UNKNOWN),
        )
    else:
        assert after.stage is Stage.QUEUED
        assert [c.outgoing_id for c in next_pass.claim("next", soon, LEASE_SECONDS, 1)] == [sent]


def test_a_send_claimed_on_another_machine_waits_for_its_lease_to_expire(
    engine: sa.Engine, machine: MachineProcesses
) -> None:
    other = "0" * 16 if machine.machine != "0" * 16 else "1" * 16
    claimant = SqlOutbox(engine, process=f"{other}/999999999/1")
    _queued(claimant)
    claimant.claim("elsewhere", T0, LEASE_SECONDS, 1)
    next_pass = SqlOutbox(engine, machine=machine)
    soon = T0 + timedelta(seconds=1)
    assert next_pass.recover(soon, soon, 5) == 0
    expired = T0 + timedelta(seconds=LEASE_SECONDS)
    assert next_pass.recover(expired, expired, 5) == 1
