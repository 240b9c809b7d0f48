from __future__ import annotations

import unicodedata

import pytest

from mailfathom.domain.filenames import MAX_FILE_NAME_LENGTH, normalize_file_name


def test_a_plain_name_is_kept_and_not_reported_as_rewritten() -> None:
    assert normalize_file_name("report 2024.pdf") == ("report 2024.pdf", False)


def test_an_absent_or_empty_name_gives_no_name() -> None:
    assert normalize_file_name(None) == (None, False)
    assert normalize_file_name("") == (None, False)


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("/etc/passwd", "passwd"),
        ("../../.ssh/authorized_keys", "authorized_keys"),
        ("C:\\Users\\me\\Desktop\\invoice.pdf", "invoice.pdf"),
        ("..\\..\\windows\\system32\\evil.dll", "evil.dll"),
        ("docs/", "docs"),
    ],
)
def test_only_the_last_path_segment_is_kept(written: str, expected: str) -> None:
    assert normalize_file_name(written) == (expected, True)


@pytest.mark.parametrize("written", ["..", ".", "../..", "/", "\\", "....", "dir/..", " . "])
def test_a_traversal_segment_leaves_no_name(written: str) -> None:
    assert normalize_file_name(written) == (None, True)


def test_leading_dots_are_stripped() -> None:
    assert normalize_file_name(".bashrc") == ("bashrc", True)
    assert normalize_file_name("...hidden.txt") == ("hidden.txt", True)


def test_a_dot_hidden_behind_an_invisible_character_cannot_form_a_traversal() -> None:
    assert normalize_file_name(".\u200e.") == (None, True)


@pytest.mark.parametrize(
    "control", ["\x00", "\x07", "\x1b", "\x7f", "\x85", "\x9b", "\r", "\n", "\t"]
)
def test_control_characters_do_not_survive(control: str) -> None:
    name, rewritten = normalize_file_name(f"a{control}b.txt")
    assert rewritten
    assert name is not None
    assert all(unicodedata.category(ch) != "Cc" for ch in name)
    assert name.replace(" ", "") == "ab.txt"


def test_line_breaks_become_a_single_space() -> None:
    assert normalize_file_name("quarterly\r\n report.xlsx") == ("quarterly report.xlsx", True)


@pytest.mark.parametrize(
    "mark",
    [
        "\u200e",
        "\u200f",
        "\u202a",
        "\u202b",
        "\u202c",
        "\u202d",
        "\u202e",
        "\u2066",
        "\u2067",
        "\u2068",
        "\u2069",
        "\u061c",
    ],
)
def test_bidirectional_controls_are_removed(mark: str) -> None:
    assert normalize_file_name(f"invoice{mark}fdp.exe") == ("invoicefdp.exe", True)


def test_the_right_to_left_override_trick_no_longer_hides_the_real_extension() -> None:
    name, rewritten = normalize_file_name("photo\u202egpj.exe")
    assert rewritten
    assert name == "photogpj.exe"
    assert name.endswith(".exe")


@pytest.mark.parametrize("invisible", ["\u200b", "\u200d", "\ufeff", "\u2060", "\u00ad"])
def test_zero_width_format_characters_are_removed(invisible: str) -> None:
    assert normalize_file_name(f"con{invisible}tract.docx") == ("contract.docx", True)


def test_whitespace_is_collapsed_and_trimmed() -> None:
    assert normalize_file_name("  my \u3000  holiday\u00a0\u00a0photo .jpg  ") == (
        "my holiday photo .jpg",
        True,
    )


def test_names_are_put_in_nfc() -> None:
    decomposed = "Cafe\u0301.txt"
    assert normalize_file_name(decomposed) == ("Caf\u00e9.txt", True)
    assert normalize_file_name("Caf\u00e9.txt") == ("Caf\u00e9.txt", False)


def test_an_over_long_name_is_cut_and_keeps_its_extension() -> None:
    name, rewritten = normalize_file_name("a" * 500 + ".pdf")
    assert rewritten
    assert name is not None
    assert len(name) == MAX_FILE_NAME_LENGTH
    assert name.endswith(".pdf")


def test_an_over_long_name_with_a_long_suffix_is_simply_cut() -> None:
    name, _ = normalize_file_name("b" * 150 + "." + "c" * 100)
    assert name is not None
    assert len(name) == MAX_FILE_NAME_LENGTH
    assert name == ("b" * 150 + "." + "c" * 100)[:MAX_FILE_NAME_LENGTH]


def test_a_name_of_exactly_the_limit_is_kept() -> None:
    written = "x" * (MAX_FILE_NAME_LENGTH - 4) + ".txt"
    assert normalize_file_name(written) == (written, False)


def test_a_huge_hostile_name_is_handled_quickly_and_bounded() -> None:
    name, rewritten = normalize_file_name("\u202e" * 200_000 + "z" * 200_000 + ".png")
    assert rewritten
    assert name is not None
    assert len(name) <= MAX_FILE_NAME_LENGTH
    assert name.endswith(".png")


def test_only_invisible_characters_leave_no_name() -> None:
    assert normalize_file_name("\u200b\u202e \t") == (None, True)


def test_non_latin_names_are_kept() -> None:
    assert normalize_file_name("отчёт 年度.pdf") == ("отчёт 年度.pdf", False)
