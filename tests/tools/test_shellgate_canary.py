"""The gate against the real bash, round two: every line the gate allows on a host with no
sandbox is run by bash, and a canary folder outside the workspace — and the home folder, with
its private key — must come out untouched, the key's text nowhere in the workspace.

Lines are built from shell constructs around the breaks the gate now closes, each aimed at the
canary: a git alias from the repository's config, a file the line wrote and then sources, code
on standard input (``bash -s``, ``make -f /dev/stdin``, ``make --eval``, ``make SHELL=``),
tools' shell escapes (sqlite3's ``.shell``, ed's ``!``, ``cmake -E``), interpreters, writes
through operands and options (``tar -cf``, ``uniq``, ``gzip``, ``perl -pi``, ``git diff
--output``, ``find -L … -delete``, ``env --s``), secrets copied by glob or through a variable.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noetic.tools.shellgate import check_command

SECRET = "CANARY-PRIVATE-KEY-7f3a"

_ATTACKS = [
    "git x",
    "git -C . x",
    "echo 'touch {C}/sourced' > s.sh && source s.sh",
    "printf 'touch {C}/dotted' > s.sh; . ./s.sh",
    "bash -s <<< 'touch {C}/stdin'",
    "make -s -f /dev/stdin <<< $'all:\\n\\ttouch {C}/mkstdin'",
    "make -s --eval=$'x:\\n\\ttouch {C}/mkeval' x",
    "make -s SHELL=/bin/touch .SHELLFLAGS={C}/mkshell",
    "echo 'all:; touch {C}/mkfile' > m.mk && make -s -f m.mk",
    "printf 'all:\\n\\t@touch {C}/mkwritten\\n' > Makefile && make -s",
    "bash -s -- a <<< 'touch {C}/bsargs'",
    "echo 'touch {C}/shfile' > p; sh < p",
    "sqlite3 x.db '.shell touch {C}/sqshell'",
    "sqlite3 x.db '.system touch {C}/sqsystem'",
    "sqlite3 x.db '.output {C}/sqout' 'select 1;'",
    "ed -s notes.txt <<< '!touch {C}/ed'",
    "cmake -E touch {C}/cmake",
    "cmake -E rm -f {K}",
    "perl -e 'open F, \">{C}/perl\"'",
    "perl -pi -e 's/KEEP/GONE/' {K}",
    "tar -cf {C}/tar src",
    "tar cf {C}/tar2 src",
    "uniq notes.txt {C}/uniq",
    "gzip {K}",
    "git diff --output={C}/diff",
    "find -L link -name keep -delete",
    "env --s='touch {C}/envs'",
    "env -S 'touch\\_{C}/envsp'",
    'python3 -c \'open("{C}/py", "w")\'',
    "cat ~/.ss?/id_* > leaked.txt",
    "cp ~/.ssh/id* .",
    "d=~/.ssh; cat $d/id_rsa > leaked2.txt",
    "x=ssh; cat ~/.$x/id_rsa >> notes.txt",
]
_HARMLESS = [
    "true", "echo hi", "ls > /dev/null", "cat notes.txt > /dev/null", "git status > /dev/null",
    "make -s", "sqlite3 x.db 'select 1;' > /dev/null", "tar -cf out.tar src", "uniq notes.txt",
]  # fmt: skip
_FORMS = [
    "{a}; {b}", "{a} && {b}", "{a} || {b}", "( {a} )", "{{ {a}; }}", "echo $({a})",
    "if {a}; then {b}; fi", "for i in 1; do {a}; done", "f() {{ {a}; }}; f", "bash -c {qa}",
    "eval {qa}", "timeout 10 {a}", "env {a}", "nice {a}", "xargs -r true < /dev/null; {a}",
]  # fmt: skip


def _lines(canary: Path) -> st.SearchStrategy[str]:
    def one(template: str) -> str:
        return template.format(C=canary, K=canary / "keep")

    leaf = st.one_of(st.sampled_from(_ATTACKS).map(one), st.sampled_from(_HARMLESS))

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.builds(
            lambda form, a, b: form.format(a=a, b=b, qa=shlex.quote(a)),
            st.sampled_from(_FORMS),
            inner,
            inner,
        )

    return st.recursive(leaf, extend, max_leaves=3)


def _snapshot(root: Path) -> dict[str, tuple[str, bytes, int]]:
    found: dict[str, tuple[str, bytes, int]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            st_ = path.lstat()
            kind = "link" if path.is_symlink() else "dir" if path.is_dir() else "file"
            body = path.read_bytes() if kind == "file" else b""
            found[str(path.relative_to(root))] = (kind, body, st_.st_mode)
    return found


def _places(base: Path) -> tuple[Path, Path, Path]:
    workspace, canary, home = base / "ws", base / "canary", base / "home"
    (canary / "sub").mkdir(parents=True)
    (canary / "keep").write_text("KEEP\n")
    (canary / "sub" / "inner").write_text("INNER\n")
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET + "\n")
    (home / ".bashrc").write_text("# rc\n")
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "app.py").write_text("print('app')\n")
    (workspace / "README.md").write_text("readme\n")
    (workspace / "notes.txt").write_text("a\na\nb\n")
    (workspace / "Makefile").write_text("all:\n\t@true\n")
    (workspace / "link").symlink_to(canary)
    env = _environment(home)
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True, env=env)
    with (workspace / ".git" / "config").open("a") as config:
        config.write(f"[alias]\n\tx = !touch {canary}/alias\n")
    return workspace, canary, home


def _environment(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "GIT_CONFIG_NOSYSTEM": "1",
        "LANG": "C.UTF-8",
    }


@settings(
    deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@pytest.mark.subprocess
@given(data=st.data())
def test_a_line_the_gate_allows_leaves_the_canary_and_the_home_folder_untouched(
    data: st.DataObject,
) -> None:
    bash = shutil.which("bash")
    assert bash is not None
    with tempfile.TemporaryDirectory() as name:
        workspace, canary, home = _places(Path(name))
        line = data.draw(_lines(canary))
        verdict = check_command(line, workspace, home=str(home))
        if not verdict.allowed:
            assert verdict.violations[0].part, verdict  # a refusal names where it is
            return
        before_canary, before_home = _snapshot(canary), _snapshot(home)
        subprocess.run(
            [bash, "-c", line], cwd=workspace, capture_output=True, timeout=20, check=False,
            stdin=subprocess.DEVNULL, env=_environment(home),
        )  # fmt: skip
        assert _snapshot(canary) == before_canary, f"the gate allowed {line!r}; it changed {canary}"
        assert _snapshot(home) == before_home, f"the gate allowed {line!r}; it changed {home}"
        leaked = [
            p for p in workspace.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()
        ]
        assert not leaked, f"the gate allowed {line!r}; the private key reached {leaked}"


@pytest.mark.subprocess
@pytest.mark.parametrize("template", _ATTACKS)
def test_each_attack_is_real_and_refused(template: str) -> None:
    """Every attack of the pool, alone: run by bash without asking the gate (the control) it
    changes the canary or the home folder or copies the key into the workspace; the gate
    refuses it."""
    with tempfile.TemporaryDirectory() as name:
        workspace, canary, home = _places(Path(name))
        line = template.format(C=canary, K=canary / "keep")
        assert not check_command(line, workspace, home=str(home)).allowed, line
        before_canary, before_home = _snapshot(canary), _snapshot(home)
        subprocess.run(
            ["bash", "-c", line], cwd=workspace, capture_output=True, timeout=20,
            check=False, stdin=subprocess.DEVNULL, env=_environment(home),
        )  # fmt: skip
        leaked = [
            p for p in workspace.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()
        ]
        changed = _snapshot(canary) != before_canary or _snapshot(home) != before_home
        assert changed or leaked, f"{line!r} did nothing when run: not an attack"
