"""A sandboxed child waited for with a time limit: past it, or when the wait is cancelled, its
whole process group is killed, so nothing it started is left running."""

from __future__ import annotations

import asyncio
import signal
import sys

import pytest

from noetic.tools.sandbox import wait_or_kill

SLEEPER = (sys.executable, "-c", "import time; time.sleep(30)")


async def started() -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(*SLEEPER, start_new_session=True)


def test_a_child_within_its_time_is_waited_for() -> None:
    async def go() -> tuple[bool, int | None]:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c", "raise SystemExit(3)")
        return await wait_or_kill(proc, 30), proc.returncode

    assert asyncio.run(go()) == (False, 3)


def test_a_child_past_its_time_is_killed_and_reaped() -> None:
    async def go() -> tuple[bool, int | None]:
        proc = await started()
        return await wait_or_kill(proc, 0.3), proc.returncode

    assert asyncio.run(go()) == (True, -signal.SIGKILL)


def test_a_cancelled_wait_kills_the_childs_group_and_goes_on_cancelled() -> None:
    async def go() -> int:
        proc = await started()
        waiting = asyncio.ensure_future(wait_or_kill(proc, 30))
        await asyncio.sleep(0.3)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        return await asyncio.wait_for(proc.wait(), 10)

    assert asyncio.run(go()) == -signal.SIGKILL
