"""The documentation keeps up with the code: every configuration key the loader accepts is in
docs/configuration.md, every tool the server registers is in docs/mcp.md's tool table, and
docs/architecture.md's slice table names every slice of `app/`, each tool in the row of its
slice, and every module registering or sharing tools."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from types import ModuleType

from mailfathom.adapters import config as config_package
from mailfathom.bootstrap import Services
from mailfathom.domain.config import DeploymentConfig, StoreConfig
from mailfathom.entrypoints.mcp.assemble import build_server

DOCS = Path(__file__).resolve().parents[1] / "docs"
# Every module of the loader's package: a section moved to a module of its own stays checked.
LOADER_MODULES = tuple(
    importlib.import_module(f"{config_package.__name__}.{info.name}")
    for info in pkgutil.iter_modules(config_package.__path__)
)


def _accepted_keys(module: ModuleType) -> set[str]:
    """The keys of every table this module checks: the argument of each `refuse_unknown`
    call in its source, evaluated in the module's own namespace."""
    keys: set[str] = set()
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "refuse_unknown"
        ):
            allowed = eval(  # noqa: S307 - the loader's own constant expressions
                compile(ast.Expression(node.args[0]), module.__name__, "eval"), vars(module)
            )
            keys |= set(allowed)
    return keys


def _code_spans_and_headings(text: str) -> list[str]:
    spans = re.findall(r"`([^`\n]+)`", text)
    headings = [line for line in text.splitlines() if line.startswith("#")]
    return spans + headings


def test_every_configuration_key_the_loader_accepts_is_documented() -> None:
    keys = set().union(*(_accepted_keys(m) for m in LOADER_MODULES))
    assert {"Store", "DataDir", "Accounts", "McpEndpoint", "Smtp", "PerHour"} <= keys
    places = _code_spans_and_headings((DOCS / "configuration.md").read_text("utf-8"))
    missing = sorted(
        k for k in keys if not any(re.search(rf"\b{re.escape(k)}\b", p) for p in places)
    )
    assert missing == []


def test_every_registered_tool_has_a_row_in_the_tool_table(tmp_path: Path) -> None:
    config = DeploymentConfig(store=StoreConfig(data_dir=tmp_path / "data"), accounts=())
    with Services.open(config) as services:
        registered = set(build_server(services).registry.specs)
    assert "list_emails" in registered
    documented = set(re.findall(r"^\| `(\w+)` \|", (DOCS / "mcp.md").read_text("utf-8"), re.M))
    assert registered == documented


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_send_after_is_documented_in_the_tool_row_and_both_sections() -> None:
    text = (DOCS / "mcp.md").read_text("utf-8")
    (row,) = re.findall(r"^\| `send_draft` \|.*$", text, re.M)
    assert "`sendAfter`" in row
    for heading in ("Sending", "Drafts"):
        assert "`sendAfter`" in _section(text, heading), heading


SOURCE = Path(__file__).resolve().parents[1] / "src" / "mailfathom"
TOOL_MODULES = SOURCE / "entrypoints" / "mcp" / "tools"


def _slices() -> set[str]:
    return {path.parent.name for path in (SOURCE / "app").glob("*/__init__.py")}


def _slice_rows() -> dict[str, list[str]]:
    """The slice table of docs/architecture.md: each slice's row, as its cells."""
    text = (DOCS / "architecture.md").read_text("utf-8")
    rows = re.findall(r"^\| `app/(\w+)/` \|(.*)\|$", text, re.M)
    return {name: [cell.strip() for cell in cells.split("|")] for name, cells in rows}


def test_the_architecture_has_a_row_for_every_slice() -> None:
    rows = _slice_rows()
    assert {"reading", "sending", "shared"} <= _slices()
    assert set(rows) == _slices()
    assert all(cells[0] for cells in rows.values()), "a slice without a description"


def _registered_tools(data_dir: Path) -> set[str]:
    config = DeploymentConfig(store=StoreConfig(data_dir=data_dir), accounts=())
    with Services.open(config) as services:
        return set(build_server(services).registry.specs)


def test_the_architecture_names_each_tool_in_the_row_of_its_slice(tmp_path: Path) -> None:
    registered = _registered_tools(tmp_path / "data")
    holders = {
        tool: [path.parent.name for path in (SOURCE / "app").glob(f"*/{tool}.py")]
        for tool in registered
    }
    assert all(len(found) == 1 for found in holders.values()), holders
    assert all((TOOL_MODULES / f"{tool}.py").is_file() for tool in registered)
    named = {name: set(re.findall(r"`(\w+)`", cells[1])) for name, cells in _slice_rows().items()}
    for name in _slices():
        held = {tool for tool, found in holders.items() if found == [name]}
        assert named.get(name) == held, name


def test_the_architecture_names_every_module_that_registers_or_shares_tools(
    tmp_path: Path,
) -> None:
    registered = _registered_tools(tmp_path / "data")
    modules = {path.stem for path in TOOL_MODULES.glob("*.py")} - {"__init__"}
    assert registered <= modules
    named = {
        module
        for cells in _slice_rows().values()
        for module in re.findall(r"`(\w+)\.py`", cells[2])
    }
    assert named == modules - registered


def test_every_delivery_failure_code_is_documented_with_its_number() -> None:
    """docs/mcp.md lists what `failureCode` can hold; docs/operations.md the consent code."""
    from mailfathom.domain.codes import DeliveryCode

    listed = (DOCS / "mcp.md").read_text("utf-8")
    for code in DeliveryCode:
        assert f"{code.value} " in listed, code
    operations = (DOCS / "operations.md").read_text("utf-8")
    assert f"| {DeliveryCode.WAITING_FOR_CONSENT.value} |" in operations
    assert "72003" not in listed + operations


def test_every_embedding_code_is_documented_with_its_number() -> None:
    """docs/operations.md lists the codes a start or `mailbox embed` refuses with and those a
    failing provider is logged under."""
    from mailfathom.domain.codes import CommandCode, EmbeddingCode

    operations = (DOCS / "operations.md").read_text("utf-8")
    embedding_commands = [c for c in CommandCode if "EMBEDDING" in c.name]
    assert len(embedding_commands) == 5
    for code in [*EmbeddingCode, *embedding_commands]:
        assert f"| {code.value} |" in operations, code
