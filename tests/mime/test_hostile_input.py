from __future__ import annotations

import time
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mailfathom.adapters.mime import normalize_headers, normalize_message
from mailfathom.domain.message import NormalizedMessage


def _nested_multipart(levels: int) -> bytes:
    lines = ["Subject: deep"]
    for level in range(levels):
        lines += [f"Content-Type: multipart/mixed; boundary=b{level}", "", f"--b{level}"]
    lines += ["Content-Type: text/plain", "", "innermost"]
    lines += [f"--b{level}--" for level in reversed(range(levels))]
    return "\r\n".join(lines).encode()


def _assert_clean_text_fields(message: NormalizedMessage) -> None:
    fields = [message.subject or ""]
    fields += [p.display_name or "" for p in message.participants]
    fields += [p.address for p in message.participants]
    fields += [p.file_name or "" for p in message.parts]
    for text in fields:
        assert all(unicodedata.category(ch) != "Cc" for ch in text), repr(text)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\r\n",
        b"\x00\xff\xfe" * 100,
        b"not a message at all",
        b"Content-Type: multipart/mixed\r\n\r\nno boundary\r\n",
        b"Content-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\n",
        b"Content-Type: text/plain; charset=\xff\xfe\r\n\r\nbody",
        b"Content-Transfer-Encoding: base64\r\n\r\n!!!not base64!!!",
        b"Content-Type: message/rfc822\r\nContent-Transfer-Encoding: base64\r\n\r\n####",
        b": no name\r\n\tcontinuation\r\nFrom: <>\r\nDate: \r\n\r\n",
        b" starts folded\r\nSubject: =?utf-8?b?====?=\r\n\r\nx",
    ],
)
def test_malformed_input_never_raises(data: bytes) -> None:
    message = normalize_message(data)
    _assert_clean_text_fields(message)
    assert normalize_headers(data).headers_only


def test_nesting_past_the_limit_is_cut_and_recorded() -> None:
    message = normalize_message(_nested_multipart(100))
    assert message.subject == "deep"
    assert "mime:depth-limit" in message.defects
    assert message.plain_text == ""


def test_nesting_within_the_limit_is_read() -> None:
    message = normalize_message(_nested_multipart(30))
    assert message.plain_text.strip() == "innermost"
    assert message.defects == ()


def test_nesting_that_exhausts_the_parser_keeps_the_headers() -> None:
    message = normalize_message(_nested_multipart(1500))
    assert message.subject == "deep"
    assert "mime:depth-limit" in message.defects
    assert not message.headers_only


def test_an_enormous_address_header_is_bounded() -> None:
    data = b"To: " + b", ".join(b"user%d@example.com" % i for i in range(100_000)) + b"\r\n\r\nx"
    started = time.perf_counter()
    message = normalize_message(data)
    assert time.perf_counter() - started < 10
    assert 1000 < len(message.participants) < 100_000
    assert message.defects == ("header:to",)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_arbitrary_octets_never_raise(data: bytes) -> None:
    _assert_clean_text_fields(normalize_message(data))


_HEADER_NAMES = st.sampled_from(
    ["From", "To", "Cc", "Subject", "Date", "Message-ID", "References", "Content-Type"]
)
_HEADER_TEXT = st.lists(
    st.sampled_from([*'abc@<>:;,"=?_ \t\r\n\x00\x1b\u202e\u00e9', "=?utf-8?q?", "?=", "=0D"]),
    max_size=40,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_HEADER_NAMES, _HEADER_TEXT), max_size=8))
def test_arbitrary_header_fields_never_raise_nor_leak_control_characters(
    fields: list[tuple[str, str]],
) -> None:
    data = "".join(f"{name}: {value}\r\n" for name, value in fields).encode("utf-8")
    _assert_clean_text_fields(normalize_message(data + b"\r\nbody"))
    _assert_clean_text_fields(normalize_headers(data))
