"""Every published sanitizer and XSS payload of the shared corpora, and every e-mail
template there, sanitized and read back by a parser: nothing in the output can run, load
anything, or send a reader to a scheme other than http, https and mailto."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from mailfathom.adapters.html.plain_text import render_plain_text
from mailfathom.adapters.html.sanitize import NhHtmlSanitizer

from .parsed import Parsed, parse

_FORBIDDEN = {
    "script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "form",
    "input", "button", "textarea", "select", "base", "meta", "link", "svg", "math", "video",
    "audio", "source", "track", "param", "bgsound", "xml", "import", "isindex", "marquee",
}  # fmt: skip
_URL_ATTRIBUTES = {
    "href", "src", "srcset", "action", "formaction", "background", "poster", "xlink:href",
    "data", "codebase", "cite", "longdesc", "dynsrc", "lowsrc", "ping", "manifest",
}  # fmt: skip
_SCHEME = re.compile(r"\A\s*([a-zA-Z][a-zA-Z0-9+.\-]*):")
_WORD = re.compile(r"[^\W\d_]+")
_LOADING = {"src", "srcset", "background", "poster", "dynsrc", "lowsrc", "data"}
_STYLE_HAZARDS = ("url(", "expression", "behavior", "position", "@import", "\\", "-moz-binding")


def payloads(corpora: Path) -> list[tuple[str, str]]:
    """(where it comes from, the HTML) of every payload and template of `html/`."""
    root = corpora / "html"
    found: list[tuple[str, str]] = []
    owasp = json.loads((root / "owasp/xss-filter-evasion-payloads.json").read_text())
    found += [(f"owasp {n}", entry["payload"]) for n, entry in enumerate(owasp)]
    for test in sorted((root / "bleach/tests/data").glob("*.test")):
        found.append((f"bleach {test.name}", test.read_text().split("\n--\n")[0]))
    html5lib = root / "html5lib/html5lib/tests/sanitizer-testdata/tests1.dat"
    found += [
        (f"html5lib {case['name']}", case["input"]) for case in json.loads(html5lib.read_text())
    ]
    for template in sorted((root / "email-html").rglob("*")):
        if template.suffix in (".html", ".xhtml", ".htm"):
            text = template.read_bytes().decode("utf-8", errors="replace")
            found.append((f"template {template.relative_to(root)}", text))
    return found


def offences(out: Parsed, remote_images: bool) -> list[str]:
    """What in a sanitized document could run, load or lead somewhere it may not."""
    found: list[str] = []
    for tag, attributes in out.elements:
        if tag in _FORBIDDEN or ":" in tag:
            found.append(f"element {tag}")
        for name, value in attributes.items():
            value = value or ""
            if name.startswith("on"):
                found.append(f"handler {name}")
            if name == "style" and any(h in value.lower() for h in _STYLE_HAZARDS):
                found.append("style hazard")
            if name in _URL_ATTRIBUTES:
                scheme = _SCHEME.match(value)
                allowed = {"http", "https", "mailto"} if name == "href" else {"cid"}
                if remote_images and name == "src":
                    allowed |= {"http", "https"}
                if scheme is None or scheme.group(1).lower() not in allowed:
                    found.append(f"{name} scheme")
            if (
                name in _LOADING
                and not remote_images
                and re.search(r"(?i)\A\s*(https?:)?//", value)
            ):
                found.append(f"remote {name}")
    return found


@pytest.mark.parametrize("remote_images", [False, True], ids=["blocked", "allowed"])
def test_no_payload_leaves_anything_active_or_remote(corpora: Path, remote_images: bool) -> None:
    every = payloads(corpora)
    assert len(every) > 150, "the html corpus is incomplete"
    sanitizer = NhHtmlSanitizer()
    failures = {}
    for origin, html in every:
        out = parse(sanitizer.sanitize(html, remote_images=remote_images))
        if found := offences(out, remote_images):
            failures[origin] = found
    assert failures == {}


def test_templates_keep_every_word_they_show(corpora: Path) -> None:
    """The e-mail templates are ordinary mail: their sanitized HTML shows all the text of
    their plain text (and adds image markers and link targets)."""
    templates = [(o, h) for o, h in payloads(corpora) if o.startswith("template")]
    assert len(templates) >= 20
    for origin, html in templates:
        # Letters, not words: the two readings may set inline pieces apart differently, and
        # list numbers are the plain text's own.
        shown = Counter("".join(_WORD.findall(render_plain_text(html).lower())))
        kept = Counter("".join(_WORD.findall(parse(NhHtmlSanitizer().sanitize(html)).text.lower())))
        assert shown - kept == Counter(), origin
