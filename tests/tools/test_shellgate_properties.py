"""Properties of the shell gate at the parser boundary: any text, any quoting, any nesting."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noetic.tools.shellgate import check_command
from noetic.tools.shellgate.expand import unescape_ansi_c
from tests.tools.test_shellgate_table import DANGEROUS

_SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"))


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, str]:
    (tmp_path / "ws").mkdir()
    (tmp_path / "home").mkdir()
    return tmp_path / "ws", str(tmp_path / "home")


@_SETTINGS
@given(text=st.text())
def test_any_text_gets_a_verdict_that_names_what_it_refused(
    places: tuple[Path, str], text: str
) -> None:
    workspace, home = places
    verdict = check_command(text, workspace, home=home)
    assert verdict.allowed == (not verdict.violations)
    for v in verdict.violations:
        assert v.rule and v.reason
        assert v.part in text or v.rule in ("unparseable", "too-complex")


@_SETTINGS
@given(alphabet=st.lists(st.sampled_from(list("'\"`$(){}[];&|<>\\ \n#!*?~=-x")), max_size=60))
def test_shell_punctuation_soup_never_breaks_the_gate(
    places: tuple[Path, str], alphabet: list[str]
) -> None:
    workspace, home = places
    text = "".join(alphabet)
    verdict = check_command(text, workspace, home=home)
    assert verdict.allowed == (not verdict.violations)


@_SETTINGS
@given(text=_TEXT)
def test_a_quoted_argument_is_inert(places: tuple[Path, str], text: str) -> None:
    """Whatever a single-quoted word holds, `echo` with it runs nothing and writes nothing."""
    workspace, home = places
    verdict = check_command(f"echo {shlex.quote(text)}", workspace, home=home)
    assert verdict.allowed, verdict.explain()


def _quote(word: str, style: int) -> str:
    if style == 0:
        return word
    if style == 1:
        return "'" + word + "'"
    if style == 2:
        return '"' + word + '"'
    if style == 3:
        return "".join("\\" + c for c in word)
    return "$'" + "".join(f"\\x{ord(c):02x}" for c in word) + "'"


# Table rows made only of plain words, where each word may be quoted in any style without
# changing what the shell does (no ~, which quoting would stop from expanding).
_PLAIN = [
    (command, rule)
    for command, rule in DANGEROUS
    if command
    and rule != "unparseable"  # quoted, a reserved word is an ordinary name
    and all(c.isalnum() or c in " -/._+:" for c in command)
    and not command.startswith(("git -C",))
]


@_SETTINGS
@given(row=st.sampled_from(_PLAIN), styles=st.lists(st.integers(0, 4), min_size=8, max_size=8))
def test_quoting_hides_nothing(
    places: tuple[Path, str], row: tuple[str, str], styles: list[int]
) -> None:
    workspace, home = places
    command, rule = row
    words = command.split(" ")
    quoted = " ".join(_quote(w, styles[i % len(styles)]) for i, w in enumerate(words))
    verdict = check_command(quoted, workspace, home=home)
    assert rule in [v.rule for v in verdict.violations], (quoted, verdict.explain())


_WRAPS = [
    "true; {}",
    "{}; true",
    "( {} )",
    "{{ {}; }}",
    "true && {}",
    "false || {}",
    "if true; then {}; fi",
    "for i in 1 2; do {}; done",
    "while false; do {}; done",
    "x=$( {} )",
    'echo "$( {} )"',
    "cat <( {} )",
    "{} & wait",
    "case a in a) {};; esac",
]
_NESTABLE = [
    (c, r)
    for c, r in DANGEROUS
    if r not in ("unparseable",) and "\n" not in c and "`" not in c and c.strip()
]


@_SETTINGS
@given(row=st.sampled_from(_NESTABLE), wraps=st.lists(st.sampled_from(_WRAPS), max_size=3))
def test_nesting_hides_nothing(
    places: tuple[Path, str], row: tuple[str, str], wraps: list[str]
) -> None:
    workspace, home = places
    command, rule = row
    text = command
    for wrap in wraps:
        text = wrap.format(text)
    verdict = check_command(text, workspace, home=home)
    assert rule in [v.rule for v in verdict.violations], (text, verdict.explain())


def test_deep_nesting_is_refused_not_crashed(places: tuple[Path, str]) -> None:
    workspace, home = places
    text = "echo " + "$(" * 500 + "ls" + ")" * 500
    verdict = check_command(text, workspace, home=home)
    assert verdict.rule == "too-complex"
    assert not check_command("x" * 70_000, workspace, home=home).allowed


@pytest.mark.subprocess
def test_characters_that_crash_the_grammar_scanner_are_handled(places: tuple[Path, str]) -> None:
    """tree-sitter-bash's scanner crashes on "{" before some private-use characters; the gate
    parses an ASCII image of the command and reads every text from the original."""
    import subprocess
    import sys

    workspace, home = places
    cases = ["{\U000f3111", "e{\U000f3111", "e{\U000effff", "e{\U0010ffff"]
    code = (
        "import sys; from noetic.tools.shellgate import check_command\n"
        "for c in sys.argv[3:]: check_command(c, sys.argv[1], home=sys.argv[2])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(workspace), home, *cases], capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()
    verdict = check_command("rm -rf ../café-é", workspace, home=home)
    assert verdict.rule == "write-outside-workspace"
    assert verdict.violations[0].part == "../café-é"
    assert check_command("echo 'naïve' > résumé.txt", workspace, home=home).allowed


@pytest.mark.parametrize(
    ("body", "value"),
    [
        ("\\x2f", "/"),
        ("a\\nb", "a\nb"),
        ("é", "é"),  # text, not latin-1 bytes read as escapes
        ("\\u00e9", "é"),
        ("\\101", "A"),
        ("\\e[0m", "\x1b[0m"),
        ("\\?", "?"),
        ("\\q", "\\q"),  # bash keeps an escape it does not know
        ("\\`", "\\`"),
        ("x\\", "x\\"),
        ("\\xff", None),  # a byte that is not text: unknown, never guessed
        ("\\ca", None),
        ("\\U110000", None),
    ],
)
def test_ansi_c_strings_read_as_bash_reads_them(body: str, value: str | None) -> None:
    assert unescape_ansi_c(body) == value


@given(st.text(max_size=40))
def test_any_ansi_c_string_has_a_value_or_none_and_never_raises(body: str) -> None:
    value = unescape_ansi_c(body)
    assert value is None or isinstance(value, str)
    if "\\" not in body:
        assert value == body


@given(st.text(st.characters(max_codepoint=0x7F), max_size=30))
def test_hex_escaped_ascii_reads_back_as_itself(word: str) -> None:
    assert unescape_ansi_c("".join(f"\\x{ord(c):02x}" for c in word)) == word
