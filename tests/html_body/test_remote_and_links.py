"""What the sanitized HTML loads and where its links lead: remote images become a visible
marker unless the account lets them load, tracking pixels go, the message's own images
(`cid:`) stay, and every link shows its target when its text does not."""

from __future__ import annotations

import pytest

from mailfathom.adapters.html.sanitize import NhHtmlSanitizer

from .parsed import parse


def _clean(html: str, *, remote_images: bool = False) -> str:
    return NhHtmlSanitizer().sanitize(html, remote_images=remote_images)


def test_a_remote_image_becomes_its_alt_text_unless_allowed() -> None:
    html = '<p>Hi <img src="https://cdn.example/logo.png" alt="Shop  logo" width="120"></p>'
    assert _clean(html) == "<p>Hi <span>[image: Shop logo]</span></p>"
    assert _clean(html, remote_images=True) == (
        '<p>Hi <img src="https://cdn.example/logo.png" alt="Shop  logo" width="120"></p>'
    )


@pytest.mark.parametrize(
    "image",
    [
        '<img src="//cdn.example/a.png">',
        '<img src="data:image/png;base64,iVBORw0KGgo=">',
        '<img src="javascript:alert(1)">',
        '<img src="a.png">',
        "<img>",
    ],
)
def test_an_image_from_anywhere_else_becomes_the_marker(image: str) -> None:
    assert _clean(f"<p>{image}</p>") == "<p><span>[image]</span></p>"


@pytest.mark.parametrize("remote_images", [False, True])
@pytest.mark.parametrize(
    "pixel",
    [
        '<img src="https://t.example/o.gif" width="1" height="1">',
        '<img src="https://t.example/o.gif" style="width:1px;height:1px">',
        '<img src="https://t.example/o.gif" width="0">',
    ],
)
def test_a_tracking_pixel_goes_either_way(pixel: str, remote_images: bool) -> None:
    assert _clean(f"<p>Hi{pixel}</p>", remote_images=remote_images) == "<p>Hi</p>"


def test_the_messages_own_images_keep_their_cid_reference() -> None:
    assert (
        _clean('<img src="cid:logo@example" alt="Logo">')
        == '<img src="cid:logo@example" alt="Logo">'
    )


def test_a_link_shows_its_target_when_its_text_is_not_it() -> None:
    html = '<a href="https://evil.example/login" target="_blank">https://bank.example</a>'
    out = parse(_clean(html))
    assert out.elements == [
        ("a", {"href": "https://evil.example/login", "rel": "noopener noreferrer nofollow"})
    ]
    assert out.text == "https://bank.example (https://evil.example/login)"


@pytest.mark.parametrize(
    ("href", "text"),
    [
        ("https://example.org/", "https://example.org"),
        ("https://example.org/", "example.org"),
        ("mailto:someone@example.org", "someone@example.org"),
    ],
)
def test_a_link_whose_text_is_its_target_is_left_as_it_is(href: str, text: str) -> None:
    assert parse(_clean(f'<a href="{href}">{text}</a>')).text == text


@pytest.mark.parametrize(
    "href", ["javascript:alert(1)", "data:text/html,<b>x</b>", "vbscript:x", "/relative", "cid:x"]
)
def test_a_link_elsewhere_loses_its_target(href: str) -> None:
    out = parse(_clean(f'<a href="{href}">Click</a>'))
    assert out.elements == [("a", {"rel": "noopener noreferrer nofollow"})]
    assert out.text == "Click"


def test_styles_keep_only_safe_declarations() -> None:
    style = (
        "color:#123456; font-size:14px; position:fixed; top:0; z-index:9;"
        " background:url(https://t.example/p.gif); background-color:#eee;"
        " width:expression(alert(1)); behavior:url(x.htc); border:1px solid #ccc;"
        " font-family:'a\\75rl(x)'"
    )
    out = parse(_clean(f'<p style="{style}">Text</p>'))
    assert out.elements == [
        ("p", {"style": "color:#123456;font-size:14px;background-color:#eee;border:1px solid #ccc"})
    ]
