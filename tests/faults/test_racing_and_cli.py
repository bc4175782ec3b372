"""Fault suite: clients racing on one session lose nothing, and bad command
lines get one clear line each."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.mcp import call, in_process_client, write_program

ROOT = Path(__file__).resolve().parents[2]

COUNTER = """
counter = 0
for _ in range(100000):
    counter += 1  # BODY
"""


def _cli(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui_debugger", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, env=dict(os.environ))


@pytest.mark.slow
async def test_two_agents_and_the_cli_race_on_one_session(tmp_path, mcp_env,
                                                          no_leftover_daemons):
    """Two MCP servers joined to one daemon's session and the CLI all step at
    once: every step lands (each answers a stop one line on), and the program's
    counter matches the steps taken."""
    program = write_program(tmp_path, "counter.py", COUNTER)
    started = await asyncio.to_thread(
        _cli, "start", "--session", "race", "--break", f"{program}:3", str(program), cwd=tmp_path)
    assert started.returncode == 0, started.stderr
    steps_each = 6
    async with in_process_client("race") as one, in_process_client("race") as two:
        await call(one, "debug_wait", {"timeoutMs": 15_000})

        # A continue that finds the program already running (another client's
        # continue is in flight) is refused with a clear error; every other lands.
        async def agent(client) -> int:
            done = 0
            for _ in range(steps_each):
                answer = await call(client, "debug_continue", {"waitMs": 10_000}, ok=False)
                if answer.is_error:
                    assert answer["code"] == "invalid_input" and "running" in answer.text, answer
                else:
                    assert "stop" in answer, answer.text
                    done += 1
                    await call(client, "debug_wait", {"timeoutMs": 10_000})
            return done

        async def person() -> int:
            done = 0
            for _ in range(steps_each):
                ran = await asyncio.to_thread(_cli, "continue", "--session", "race", cwd=tmp_path)
                assert "Traceback" not in ran.stderr, ran.stderr
                if ran.returncode == 0:
                    done += 1
                else:
                    assert "running" in ran.stderr, ran.stderr
            return done

        counts = await asyncio.gather(agent(one), agent(two), person())
        value = await call(one, "debug_evaluate", {"expression": "counter"})
        # each continue runs one iteration from the breakpoint to itself
        assert int(value["value"]) == sum(counts), (counts, value.text)
        # every entry: the default answer is the last ten
        activity = await call(two, "debug_activity", {"last": 1000})
        landed = [e for e in activity["entries"] if e["command"] == "continue"
                  and e.get("ok", True)]
        assert len(landed) == sum(counts) and sum(counts) >= steps_each, (counts, landed)
        await call(one, "debug_terminate", {})


@pytest.mark.slow
def test_bad_command_lines_get_one_clear_line(tmp_path):
    program = write_program(tmp_path, "prog.py", "x = 1\nprint(x)\n")
    cases = [
        ("start", "--break", "/dev/zero:5", str(program)),
        ("start", "--stdin", "/nonexistent/input", str(program)),
        ("lldb", "p " + "x" * 120_000),
        ("break", "add", "/dev/zero:5"),
        ("status", "--session", "../../etc"),
        ("print",),
    ]
    for args in cases:
        started = time.monotonic()
        done = _cli(*args, cwd=tmp_path)
        assert time.monotonic() - started < 30, args[:2]
        assert done.returncode != 0, (args[:2], done.stdout[-300:])
        assert "Traceback" not in done.stderr and done.stderr.strip(), (args[:2], done.stderr[-500:])
