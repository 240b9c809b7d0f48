"""Text the authorship tests build messages from: a hand-typed paragraph that carries no
signal, long enough for the style signals to be read."""

from __future__ import annotations

# 62 words, lower-case openings and a typed ellipsis: nothing about it reads as generated.
HAND_TYPED = (
    "we moved the build box to the other rack last week and the fans are a lot quieter now. "
    "the nightly job still fails on the mips target though, not sure why yet... could be the "
    "new toolchain or the flaky disk. will look at it tomorrow if nobody beats me to it, "
    "otherwise ping me on friday and we can go through the logs together over coffee."
)


def padded(text: str) -> str:
    """`text` followed by the hand-typed paragraph, so it is long enough for style signals."""
    return f"{text}\n\n{HAND_TYPED}"
