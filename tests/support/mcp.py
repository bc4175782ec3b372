"""Helpers of the MCP tests (test_mcp_*.py): an in-process client on a fresh
server, and call helpers that read answers the way an agent does
(structuredContent + text). The `mcp_env` fixture is in tests/conftest.py.

Every call goes through the SDK's own client, which also checks each
structuredContent against the tool's declared output schema.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any


ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "tests" / "programs"
PY_BASIC = PROGRAMS / "py_basic.py"


def line_of(path: Path, marker: str) -> int:
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if marker in text:
            return number
    raise KeyError(f"no {marker!r} in {path}")


def cli(*args: str, check: bool = True, cwd: Path = ROOT):
    """`tui-debugger ARGS` as a shell command; `check`: it must succeed."""
    import subprocess

    done = subprocess.run([sys.executable, "-m", "tui_debugger", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60, env=dict(os.environ))
    if check:
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def cli_json(*args: str) -> dict:
    return json.loads(cli(*args, "--json").stdout)


def write_program(directory: Path, name: str, source: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(source).lstrip())
    return path


@contextlib.asynccontextmanager
async def in_process_client(session: str | None = None):
    from mcp.client import Client

    from tui_debugger.mcp.server import create_server

    async with create_server(session) as front:
        async with Client(front.server) as client:
            yield client


class Answer:
    """One tool answer: what an agent reads."""

    def __init__(self, result: Any):
        self.raw = result
        self.is_error = bool(result.is_error)
        self.data: dict[str, Any] = result.structured_content or {}
        self.text = "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def __contains__(self, key: str) -> bool:
        return key in self.data

    def __repr__(self) -> str:
        return f"Answer(is_error={self.is_error}, data={json.dumps(self.data)[:2000]})"


async def call(client, tool: str, arguments: dict[str, Any] | None = None, *,
               ok: bool = True) -> Answer:
    answer = Answer(await client.call_tool(tool, arguments or {}))
    if ok:
        assert not answer.is_error, f"{tool} failed: {answer.text}"
        assert answer.text.strip() or tool == "debug-script", f"{tool} answered no text"
    return answer


async def fails(client, tool: str, arguments: dict[str, Any] | None = None,
                code: str = "invalid_input", *words: str) -> Answer:
    """The call is a tool error with a typed code, a message (also the text)
    and, when given, the words it must mention."""
    answer = Answer(await client.call_tool(tool, arguments or {}))
    assert answer.is_error, f"{tool} {arguments} should have failed: {answer}"
    assert answer["code"] == code, answer
    assert answer["error"] == answer.text and answer.text
    for word in words:
        assert word.lower() in answer.text.lower(), (word, answer.text)
    return answer


def stdio_params(*extra: str, cwd: Path = ROOT):
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable, args=["-m", "tui_debugger", "mcp", *extra],
        env=dict(os.environ), cwd=str(cwd),
    )



def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.asynccontextmanager
async def http_server(port: int):
    """`tui-debugger mcp --transport http` on `port`, listening; yields the first
    line it printed (its banner), and ends it on the way out."""
    import asyncio

    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui_debugger", "mcp", "--transport", "http", "--port", str(port),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, env=dict(os.environ))
    try:
        yield (await asyncio.wait_for(proc.stderr.readline(), 20)).decode()
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 10)
