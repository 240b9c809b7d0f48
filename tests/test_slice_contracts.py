"""The import contracts of pyproject.toml name every slice of `app/`: a slice added later is
held independent of the others, and neither `app/shared/` nor the confirmation step may come
to depend on it."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
APP = "mailfathom.app"


def _slices() -> set[str]:
    found = (ROOT / "src" / "mailfathom" / "app").glob("*/__init__.py")
    return {f"{APP}.{path.parent.name}" for path in found}


def _contract(name: str) -> dict[str, Any]:
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    contracts = settings["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in contracts if c["name"] == name]
    assert isinstance(contract, dict)
    return contract


def test_every_slice_but_the_shared_ones_is_held_independent() -> None:
    contract = _contract("The use-case slices are independent of one another")
    assert contract["type"] == "independence"
    assert set(contract["modules"]) == _slices() - {f"{APP}.shared", f"{APP}.confirmation"}


def test_what_the_slices_share_may_depend_on_no_slice() -> None:
    contract = _contract("What the slices share (app.shared) depends on no slice")
    assert contract["source_modules"] == [f"{APP}.shared"]
    assert set(contract["forbidden_modules"]) == _slices() - {f"{APP}.shared"}


def test_the_confirmation_step_may_depend_on_no_slice() -> None:
    contract = _contract("The confirmation step every sending slice passes depends on no slice")
    assert contract["source_modules"] == [f"{APP}.confirmation"]
    assert set(contract["forbidden_modules"]) == _slices() - {
        f"{APP}.shared",
        f"{APP}.confirmation",
    }
