"""Markup nested deeper than any mail needs is flattened before the HTML5 parser of the
sanitizer reads it: that parser's work grows with the square of the depth (hundreds of
seconds on half a megabyte of nested `<div>`s), so the bound is structural, never a clock."""

from __future__ import annotations

import nh3
import pytest

from mailfathom.adapters.html.document import MAX_DEPTH
from mailfathom.adapters.html.sanitize import NhHtmlSanitizer

from .parsed import parse

SHAPES = {
    "unclosed divs": lambda n: "<div>" * n + "Deepest words",
    "closed divs": lambda n: "<div>" * n + "Deepest words" + "</div>" * n,
    "divs with text": lambda n: "".join(f"<div>w{i} " for i in range(n)) + "Deepest words",
    "nested tables": lambda n: "<table><tr><td>" * n + "Deepest words",
    "nested lists": lambda n: "<ul><li>" * n + "Deepest words",
    "blockquotes": lambda n: "<blockquote>" * n + "Deepest words",
}


@pytest.fixture
def parser_input(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the HTML5 parser (nh3) is given, recorded as it is passed on."""
    seen: list[str] = []
    real = nh3.clean

    def recording(html: str, **options: object) -> str:
        seen.append(html)
        return real(html, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(nh3, "clean", recording)
    return seen


@pytest.mark.parametrize("levels", [MAX_DEPTH + 50, 5000])
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_nesting_past_the_bound_never_reaches_the_parser(
    shape: object, levels: int, parser_input: list[str]
) -> None:
    html = shape(levels)  # type: ignore[operator]
    sanitized = NhHtmlSanitizer().sanitize(html)
    assert parser_input
    # The tree builder adds a few elements of its own (html, body, tbody), hence the margin.
    assert all(parse(given).depth <= MAX_DEPTH + 8 for given in parser_input)
    out = parse(sanitized)
    assert out.depth <= MAX_DEPTH + 8
    assert "Deepest words" in out.text


def test_markup_within_the_bound_keeps_its_nesting() -> None:
    html = "<div>" * 100 + "<b>Deepest words</b>" + "</div>" * 100
    sanitized = NhHtmlSanitizer().sanitize(html)
    assert sanitized == "<div>" * 100 + "<b>Deepest words</b>" + "</div>" * 100


def test_flattened_markup_is_still_sanitized() -> None:
    html = (
        "<div>" * 3000
        + '<a href="javascript:alert(1)" onclick="x()">link</a><script>alert(2)</script>'
        + '<img src="https://t.example/p.gif" onerror="y()"><span hidden>Secret</span>'
    )
    out = parse(NhHtmlSanitizer().sanitize(html))
    assert out.depth <= MAX_DEPTH + 8
    assert not any(tag == "script" for tag, _ in out.elements)
    assert not any(name.startswith("on") for _, a in out.elements for name in a)
    assert not any("javascript" in (v or "") or "t.example" in (v or "")
                   for _, a in out.elements for v in a.values())  # fmt: skip
    assert "Secret" not in out.text
    assert "link" in out.text
