"""The synchronizing process's cyclic garbage collector: start-up objects frozen out of full
collections, young collections less often, and both set once per process."""

from __future__ import annotations

import gc
from pathlib import Path

from mailfathom import bootstrap
from mailfathom.domain.config import AccountConfig, AccountKind, DeploymentConfig, StoreConfig


def test_opening_services_settles_the_collector_once(tmp_path: Path) -> None:
    def open_once(name: str) -> None:
        account = AccountConfig(
            account_id=name, display_name=name, kind=AccountKind.LOCAL, folders=()
        )
        config = DeploymentConfig(store=StoreConfig(data_dir=tmp_path / name), accounts=(account,))
        bootstrap.Services.open(config).close()

    open_once("first")
    assert gc.get_threshold()[0] == bootstrap.COLLECTOR_THRESHOLD
    frozen = gc.get_freeze_count()
    assert frozen > 0
    open_once("second")
    assert gc.get_freeze_count() == frozen  # nothing frozen again: settled once
    gc.collect()  # and collection still works for what is not frozen
    assert gc.isenabled()
