"""Reading the few inline style declarations that decide whether, and how, text shows."""

from __future__ import annotations

import re
from collections.abc import Iterator

Colour = tuple[int, int, int, float]

# The CSS basic colours (CSS Color 3, section 4.1) and the few extended ones mail uses most.
_NAMED: dict[str, tuple[int, int, int]] = {
    "black": (0, 0, 0), "silver": (192, 192, 192), "gray": (128, 128, 128),
    "grey": (128, 128, 128), "white": (255, 255, 255), "maroon": (128, 0, 0),
    "red": (255, 0, 0), "purple": (128, 0, 128), "fuchsia": (255, 0, 255),
    "green": (0, 128, 0), "lime": (0, 255, 0), "olive": (128, 128, 0),
    "yellow": (255, 255, 0), "navy": (0, 0, 128), "blue": (0, 0, 255), "teal": (0, 128, 128),
    "aqua": (0, 255, 255), "orange": (255, 165, 0), "whitesmoke": (245, 245, 245),
    "snow": (255, 250, 250), "ghostwhite": (248, 248, 255), "ivory": (255, 255, 240),
    "floralwhite": (255, 250, 240), "azure": (240, 255, 255), "mintcream": (245, 255, 250),
    "lightgray": (211, 211, 211), "lightgrey": (211, 211, 211),
    "gainsboro": (220, 220, 220), "darkgray": (169, 169, 169), "darkgrey": (169, 169, 169),
}  # fmt: skip
_HEX = re.compile(r"#([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})")
_FUNCTION = re.compile(r"rgba?\(([^)]*)\)")
_LENGTH = re.compile(r"(-?\d*\.?\d+)(px|pt|pc|in|cm|mm|em|rem|ex|%|)")
_FONT_SIZE_KEYWORDS = {
    "xx-small": 9.0, "x-small": 10.0, "small": 13.0, "medium": 16.0, "large": 18.0,
    "x-large": 24.0, "xx-large": 32.0, "xxx-large": 48.0,
}  # fmt: skip
_ABSOLUTE_PX = {"px": 1.0, "pt": 4 / 3, "pc": 16.0, "in": 96.0, "cm": 96 / 2.54, "mm": 9.6 / 2.54}
ROOT_FONT_PX = 16.0


def declarations(style: str) -> Iterator[tuple[str, str]]:
    """(property, value) of each declaration of a `style` attribute, lower-cased, without
    `!important`."""
    for declaration in style.split(";"):
        name, colon, value = declaration.partition(":")
        if colon:
            value = value.strip().lower().removesuffix("!important").rstrip()
            yield name.strip().lower(), value


def hides(style: str) -> bool:
    """Whether a `style` attribute says `display: none`."""
    return any(name == "display" and value == "none" for name, value in declarations(style))


def _channel(text: str) -> float | None:
    text = text.strip()
    try:
        if text.endswith("%"):
            return float(text[:-1]) * 2.55
        return float(text)
    except ValueError:
        return None


def colour(value: str) -> Colour | None:
    """The (red, green, blue, alpha) a CSS colour value names, or None for one not read
    (a colour function other than rgb, a name not listed, `currentcolor`)."""
    value = value.strip().lower()
    if value == "transparent":
        return (0, 0, 0, 0.0)
    if value in _NAMED:
        return (*_NAMED[value], 1.0)
    match = _HEX.fullmatch(value)
    if match:
        digits = match.group(1)
        if len(digits) <= 4:
            digits = "".join(d * 2 for d in digits)
        alpha = int(digits[6:8], 16) / 255 if len(digits) == 8 else 1.0
        red, green, blue = (int(digits[i : i + 2], 16) for i in (0, 2, 4))
        return (red, green, blue, alpha)
    match = _FUNCTION.fullmatch(value)
    if match:
        parts = [p for p in re.split(r"[\s,/]+", match.group(1).strip()) if p]
        if len(parts) not in (3, 4):
            return None
        channels = [_channel(p) for p in parts[:3]]
        alpha = 1.0
        if len(parts) == 4:
            read = _channel(parts[3])
            alpha = read / 255 if read is not None and parts[3].endswith("%") else read or 0.0
        if any(c is None for c in channels):
            return None
        red, green, blue = (min(255, max(0, round(c or 0))) for c in channels)
        return (red, green, blue, max(0.0, min(1.0, alpha)))
    return None


def background_colour(value: str) -> Colour | None:
    """The colour a `background` shorthand paints, or None when it names an image or no
    colour the reading knows (then what shows behind the text is not known)."""
    if "url(" in value or "gradient(" in value:
        return None
    for token in re.split(r"\s+(?![^(]*\))", value.strip()):
        found = colour(token)
        if found is not None:
            return found
    return None


def font_size_px(value: str, inherited_px: float) -> float | None:
    """A `font-size` value in CSS pixels, given the size of the parent; None when unread."""
    value = value.strip().lower()
    if value in _FONT_SIZE_KEYWORDS:
        return _FONT_SIZE_KEYWORDS[value]
    if value == "smaller":
        return inherited_px / 1.2
    if value == "larger":
        return inherited_px * 1.2
    match = _LENGTH.fullmatch(value)
    if not match:
        return None
    number, unit = float(match.group(1)), match.group(2)
    if unit in _ABSOLUTE_PX:
        return number * _ABSOLUTE_PX[unit]
    if unit == "em":
        return number * inherited_px
    if unit == "rem":
        return number * ROOT_FONT_PX
    if unit == "ex":
        return number * inherited_px / 2
    if unit == "%":
        return number * inherited_px / 100
    return 0.0 if number == 0 else None


def font_shorthand_size_px(value: str, inherited_px: float) -> float | None:
    """The size a `font` shorthand sets (`font: 0/0 a` is a common way to hide text)."""
    for token in value.split():
        size = font_size_px(token.split("/")[0], inherited_px)
        if size is not None:
            return size
    return None


def is_zero_length(value: str) -> bool:
    match = _LENGTH.fullmatch(value.strip())
    return match is not None and float(match.group(1)) == 0
