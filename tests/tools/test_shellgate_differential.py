"""The gate against the real bash: whatever the gate allows on a host with no sandbox, bash run
on the same line never creates a file outside the workspace.

Lines are built from shell constructs (lists, pipes, subshells, substitutions, here-documents,
functions, shell code handed to bash -c, eval, env -S, wrappers) around commands that write a
marker outside the workspace in many spellings (touch, a redirection, cp, tee, sed w, awk
print >, dd of=, find -fprint, curl -o, quoted, hex-escaped, brace-expanded). Every line the
gate allows is run by bash in a scratch workspace; the marker must not appear.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noetic.tools.shellgate import check_command


def _spellings(path: str) -> st.SearchStrategy[str]:
    hexed = "$'" + "".join(f"\\x{ord(c):02x}" for c in path) + "'"
    return st.sampled_from(
        [
            path,
            shlex.quote(path),
            f'"{path}"',
            hexed,
            "{" + path + ",/dev/null}",
            path.replace("/", "/./"),
        ]
    )


def _writers(marker: str) -> st.SearchStrategy[str]:
    def one(spelled: str, form: int) -> str:
        forms = [
            f"touch {spelled}",
            f"echo x > {spelled}",
            f"cp /etc/hostname {spelled}",
            f"tee {spelled} < /dev/null",
            f"sed -n 'w {marker}' /etc/hostname",
            f"awk 'BEGIN{{print 1 > \"{marker}\"}}'",
            f"dd of={spelled} < /dev/null 2>/dev/null",
            f"mkdir {spelled}",
            f"find /etc/hostname -fprint {spelled}",
            f"sort -o {spelled} /dev/null",
            f'python3 -c \'open("{marker}", "w")\'',
        ]
        return forms[form % len(forms)]

    return st.builds(one, _spellings(marker), st.integers(0, 10))


_HARMLESS = st.sampled_from(["true", "echo hi", ":", "ls > /dev/null"])


def _lines(marker: str) -> st.SearchStrategy[str]:
    q = shlex.quote
    forms = [
        "{a}; {b}", "{a} && {b}", "{a} || {b}", "{a} | {b}", "( {a} )", "{{ {a}; }}",
        "echo $({a})", "echo `{a}`", 'echo "$({a})"', "x=$({a})", "if {a}; then {b}; fi",
        "for i in 1; do {a}; done", "case x in x) {a};; esac", "f() {{ {a}; }}; f",
        "cat <({a})", "echo ${{x:-$({a})}}", "bash -c {qa}", "sh -c {qa}", "eval {qa}",
        "env -S {qa}", "cat <<E\n$({a})\nE", "timeout 5 {a}", "nohup {a} > /dev/null",
        "cd /tmp && cd - > /dev/null && {a}",
    ]  # fmt: skip

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.builds(
            lambda form, a, b: form.format(a=a, b=b, qa=q(a)),
            st.sampled_from(forms),
            inner,
            inner,
        )

    return st.recursive(st.one_of(_writers(marker), _HARMLESS), extend, max_leaves=4)


@settings(
    deadline=None, max_examples=80, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@pytest.mark.subprocess
@given(data=st.data())
def test_a_line_the_gate_allows_never_writes_outside_the_workspace(
    tmp_path: Path, data: st.DataObject
) -> None:
    bash = shutil.which("bash")
    assert bash is not None
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    marker = tmp_path / "outside" / "marker"
    marker.parent.mkdir(exist_ok=True)
    marker.unlink(missing_ok=True)
    line = data.draw(_lines(str(marker)))
    verdict = check_command(line, workspace, home=str(tmp_path / "home"))
    if not verdict.allowed:
        return
    subprocess.run(
        [bash, "-c", line], cwd=workspace, capture_output=True, timeout=10, check=False,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert not marker.exists(), f"the gate allowed {line!r} and bash wrote {marker}"
