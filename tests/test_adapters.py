"""Adapter selection by argument, environment and program type, through the
same `launch` command every front end uses, on real programs."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest

from backends.adapters import adapter_for_program, select_adapter
from backends.errors import DebuggerError, ErrorCode, InvalidInput
from tests.support import require
from tests.support.native_build import c_program, go_program, line_of, source_path
from tui_debugger.execute import execute
from tui_debugger.host.hub import Hub


@pytest.mark.slow
def test_program_types_pick_their_adapter(tmp_path):
    require(shutil.which("gcc") is not None, "gcc")
    require(shutil.which("go") is not None, "go")
    script = tmp_path / "tool"
    script.write_text("#!/usr/bin/env python3\nprint(1)\n")
    assert adapter_for_program(str(tmp_path / "a.py")) == "debugpy"
    assert adapter_for_program(str(tmp_path / "a.mjs")) == "node"
    assert adapter_for_program(str(script)) == "debugpy"
    assert adapter_for_program(str(c_program("native_demo"))) == "lldb-dap"
    assert adapter_for_program(str(go_program("go_demo"))) == "dlv"
    assert adapter_for_program("node", ["node", "--inspect-brk=9229", "x.js"]) == "node"


def test_selection_order_and_unknown_names(tmp_path):
    env = {"TUI_DEBUGGER_ADAPTER": "lldb-cli"}
    assert select_adapter("debugpy", "a.js", env=env) == "debugpy"  # argument first
    assert select_adapter(None, "a.py", env=env) == "lldb-cli"  # then the environment
    assert select_adapter(None, "a.py", env={}) == "debugpy"  # then the program
    assert select_adapter("go", None, env={}) == "dlv"  # aliases
    with pytest.raises(InvalidInput) as err:
        select_adapter("gdb", "a.py", env={})
    assert err.value.message == "Unknown adapter 'gdb'. Valid adapters: debugpy, lldb-dap, lldb-cli, dlv, node."
    with pytest.raises(InvalidInput) as err:
        select_adapter(None, "a.py", env={"TUI_DEBUGGER_ADAPTER": "nope"})
    assert "TUI_DEBUGGER_ADAPTER='nope'" in err.value.message
    data = tmp_path / "data.bin"
    data.write_bytes(b"\x00\x01 not a program")
    with pytest.raises(InvalidInput) as err:
        select_adapter(None, str(data), env={})
    assert "--adapter" in err.value.message


@pytest.mark.parametrize("program, expected, source", [
    ("native_demo", "lldb-dap", "native_demo.c"),
    ("go_demo", "dlv", "go_demo.go"),
])
async def test_launch_picks_the_native_adapter_and_stops(no_leftover_processes, program, expected, source):
    binary = c_program(program) if expected == "lldb-dap" else go_program(program)
    line = line_of(source, "call_square")
    hub = Hub(serve=False)
    try:
        status = await execute(hub, "launch", {"program": str(binary),
                                               "breakpoints": [f"{source_path(source)}:{line}"]},
                               origin="mcp")
        assert status.adapter == expected
        session = hub.local(None)
        stop = await execute(hub, "await", {"timeoutMs": 20000}, origin="mcp", session=session)
        assert stop.status == "stopped", stop
        assert stop.stop.location.line == line and stop.stop.reason == "breakpoint"
        names = {v.name for v in stop.context.locals}
        assert "p" in names
        # `p` is a pointer to a struct: its fields are reached through it by path.
        fields = await execute(hub, "variables", {"path": "p"}, origin="mcp", session=session)
        by_name = {v.name.lower(): v.value for v in fields.variables}
        assert by_name.get("x") == "3" and by_name.get("y") == "4", fields
        x = await execute(hub, "variables", {"path": "p.X" if expected == "dlv" else "p.x"},
                          origin="mcp", session=session)
        assert x.variables[0].value == "3"
        await execute(hub, "terminate", {}, origin="mcp", session=session)
    finally:
        await hub.close_all()


async def test_lldb_cli_is_selected_by_name(no_leftover_processes):
    binary = c_program("native_demo")
    hub = Hub(serve=False)
    try:
        status = await execute(hub, "launch", {"program": str(binary), "adapter": "lldb-cli",
                                               "stopOnEntry": True}, origin="cli")
        assert status.adapter == "lldb-cli"
        session = hub.local(None)
        stop = await execute(hub, "await", {"timeoutMs": 20000}, origin="cli", session=session)
        assert stop.status == "stopped"
        raw = await execute(hub, "lldb_command", {"command": "target list"}, origin="cli", session=session)
        assert "native_demo" in raw.output
        with pytest.raises(DebuggerError) as err:
            await execute(hub, "lldb_command", {"command": "platform shell ls"}, origin="cli", session=session)
        assert err.value.code == ErrorCode.command_denied
        await execute(hub, "terminate", {}, origin="cli", session=session)
    finally:
        await hub.close_all()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _wait_listening(port: int, timeout: float = 15.0) -> None:
    import asyncio
    import time

    from backends.probe import listener_pid

    deadline = time.monotonic() + timeout
    while listener_pid(port) is None:
        assert time.monotonic() < deadline, f"nothing listens on {port}"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("runtime", ["python", "node"])
async def test_attach_to_a_port_finds_the_debugger_without_taking_its_slot(
        no_leftover_processes, tmp_path, runtime):
    import subprocess

    port = _free_port()
    if runtime == "python":
        program = tmp_path / "serve.py"
        program.write_text("import time\nn = 0\nwhile True:\n    n += 1\n    time.sleep(0.01)\n")
        argv = [sys.executable, "-m", "debugpy", "--listen", f"127.0.0.1:{port}", "--wait-for-client",
                str(program)]
        expected = "debugpy"
    else:
        require(shutil.which("node") is not None, "node")
        program = tmp_path / "serve.js"
        program.write_text("let n = 0;\nsetInterval(() => { n += 1; }, 10);\n")
        argv = ["node", f"--inspect=127.0.0.1:{port}", str(program)]
        expected = "node"
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    hub = Hub(serve=False)
    try:
        await _wait_listening(port)
        status = await execute(hub, "attach", {"host": "127.0.0.1", "port": port}, origin="cli")
        assert status.adapter == expected
        session = hub.local(None)
        paused = await execute(hub, "pause", {"waitMs": 15000}, origin="cli", session=session)
        assert paused.status == "stopped", paused
        await execute(hub, "detach", {}, origin="cli", session=session)
    finally:
        await hub.close_all()
        proc.kill()
        proc.wait(timeout=10)


@pytest.mark.parametrize("adapter, program, function", [
    ("lldb-dap", "native_demo", "main"),
    ("lldb-cli", "native_demo", "main"),
    ("dlv", "go_demo", "main.main"),
])
async def test_native_stop_on_entry_stops_at_main(no_leftover_processes, adapter, program, function):
    binary = go_program(program) if adapter == "dlv" else c_program(program)
    hub = Hub(serve=False)
    try:
        await execute(hub, "launch", {"program": str(binary), "adapter": adapter, "stopOnEntry": True},
                      origin="cli")
        session = hub.local(None)
        stop = await execute(hub, "await", {"timeoutMs": 20000}, origin="cli", session=session)
        assert stop.status == "stopped" and stop.stop.reason == "entry"
        assert stop.stop.function == function and stop.context.source  # main, with its source
        listed = await execute(hub, "breakpoint_list", {}, origin="cli", session=session)
        assert listed.breakpoints == []  # the one-shot breakpoint is gone
        await execute(hub, "terminate", {}, origin="cli", session=session)
    finally:
        await hub.close_all()


def gdb_cannot_call_into_a_process() -> str | None:
    """What gdb says when it cannot call a function in a process here (what
    debugpy's attach by pid does through it), else None."""
    import subprocess

    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        out = subprocess.run(["gdb", "--nw", "--nh", "--nx", "--batch", "--pid", str(victim.pid),
                              "--eval-command", "call (int)getpid()"],
                             capture_output=True, text=True, timeout=60)
    finally:
        victim.kill()
        victim.wait(timeout=10)
    said = out.stdout + out.stderr
    broken = [line for line in said.splitlines() if "Couldn't write extended state" in line]
    return broken[0].strip() if broken else None


async def test_an_attach_to_a_pid_gdb_cannot_trace_fails_with_gdbs_words(no_leftover_processes):
    """debugpy's adapter says an injection failed only in its output and leaves
    the attach unanswered for 60 s: the attach fails as soon as it says so, with
    gdb's words and another way in. The program, traced already (a process has
    one tracer), is left running."""
    import subprocess

    from backends.errors import CommandFailed

    require(shutil.which("gdb") is not None, "gdb (debugpy injects itself into a pid with it)")
    traced = subprocess.Popen(
        [sys.executable, "-c", "import ctypes, time\nctypes.CDLL(None).ptrace(0, 0, 0, 0)\n"
         "print('traced', flush=True)\nwhile True:\n    time.sleep(0.02)\n"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
    hub = Hub(serve=False)
    try:
        assert traced.stdout.readline().strip() == "traced"  # PTRACE_TRACEME: its parent traces it
        with pytest.raises(CommandFailed) as failed:
            await execute(hub, "attach", {"pid": traced.pid}, origin="cli")
        message = failed.value.message
        assert "ptrace: Operation not permitted" in message, message
        assert "another debugger or tracer may hold it" in message
        assert "python -m debugpy --listen" in message
        assert traced.poll() is None
    finally:
        await hub.close_all()
        traced.kill()
        traced.wait(timeout=10)
        traced.stdout.close()


async def test_attach_to_a_python_pid_names_the_session_after_its_script(no_leftover_processes, tmp_path):
    import subprocess

    require(shutil.which("gdb") is not None, "gdb (debugpy injects itself into a pid with it)")
    broken = gdb_cannot_call_into_a_process()
    if broken:
        # Not ours to mend: gdb 13 on some CPUs (AMX, in a Firecracker guest)
        # cannot write a process's x86 extended state back, so no function
        # call into a process (debugpy's injection) works; plain gdb shows it.
        # What a user here gets is checked: the attach fails at once, in gdb's words.
        from backends.errors import CommandFailed

        target = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(0.02)"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        hub = Hub(serve=False)
        try:
            with pytest.raises(CommandFailed) as failed:
                await execute(hub, "attach", {"pid": target.pid}, origin="cli")
            assert broken.rstrip(".") in failed.value.message, failed.value.message
        finally:
            await hub.close_all()
            target.kill()
            target.wait(timeout=10)
        pytest.xfail(f"attach by PID needs gdb to call into the process, and plain gdb cannot "
                     f"on this machine ({broken!r}: gdb 13 writing the x86 extended state of an "
                     "AMX CPU in this VM); the same attach passes where gdb can")
    script = tmp_path / "worker.py"
    script.write_text("import time\nn = 0\nwhile True:\n    n += 1\n    time.sleep(0.02)\n")
    proc = subprocess.Popen([sys.executable, str(script)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Attach once it runs the script: on a busy machine the new process can
    # still be between fork and exec, its command line not yet its own.
    cmdline = Path(f"/proc/{proc.pid}/cmdline")
    for _ in range(1000):
        if str(script).encode() in cmdline.read_bytes():
            break
        await asyncio.sleep(0.01)
    hub = Hub(serve=False)
    try:
        status = await execute(hub, "attach", {"pid": proc.pid}, origin="cli")
        assert status.adapter == "debugpy" and status.session == "worker"
        assert status.program == str(script)
        session = hub.local(None)
        paused = await execute(hub, "pause", {"waitMs": 20000}, origin="cli", session=session)
        assert paused.status == "stopped" and paused.stop.location.path == str(script)
        await execute(hub, "detach", {}, origin="cli", session=session)
        assert proc.poll() is None  # detached, still running
    finally:
        await hub.close_all()
        proc.kill()
        proc.wait(timeout=10)
